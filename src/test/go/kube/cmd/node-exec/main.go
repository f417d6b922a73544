// Command node-exec plays the kubelet's exec endpoint for a test node agent, so that pods/exec through a real
// kube-apiserver reaches it. It speaks the kubelet's streaming protocols with the kubelet's own code and hands each
// command to a runner (the node agent) over plain JSON.
//
// The kube-apiserver dials a kubelet at https://<node address>:<status.daemonEndpoints.kubeletEndpoint.port>
// /exec/<namespace>/<pod>/<container> (k8s.io/kubernetes pkg/registry/core/pod/strategy.go, streamLocation) and,
// without --kubelet-certificate-authority, does not verify the kubelet's certificate: in
// k8s.io/kubernetes pkg/kubelet/client/kubelet_client.go, KubeletClientConfig.transportConfig sets
// TLS.Insecure = true when !cfg.HasCA(). So a self-signed certificate is enough. It sends SPDY, or passes websocket v5
// through only when the Node's status.declaredFeatures lists ExtendWebSocketsToKubelet (pkg/registry/core/pod/rest/
// subresources.go, ExecREST.Connect); otherwise it translates websocket v5 to SPDY itself. Both arrive here.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	translator "k8s.io/apiserver/pkg/util/proxy"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/streaming/pkg/httpstream/wsstream"
	utilexec "k8s.io/utils/exec"
)

// maxRunnerBody caps what is read from the runner, so a runaway command cannot exhaust memory.
const maxRunnerBody = 16 << 20

// streamIdleTimeout is the CRI streaming server's default (k8s.io/cri-streaming pkg/streaming/server.go,
// DefaultConfig.StreamIdleTimeout).
const streamIdleTimeout = 4 * time.Hour

func main() {
	listen := flag.String("listen", "127.0.0.1:10250", "host:port to serve HTTPS on")
	certDir := flag.String("cert-dir", "", "directory holding kubelet.crt and kubelet.key; generated there if absent")
	runner := flag.String("runner", "", "URL of the node agent's exec endpoint, e.g. http://127.0.0.1:8080/exec")
	flag.Parse()
	if *certDir == "" || *runner == "" {
		fmt.Fprintln(os.Stderr, "node-exec: --cert-dir and --runner are required")
		os.Exit(2)
	}
	cert, err := loadOrCreateCert(*certDir, *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "node-exec:", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "node-exec:", err)
		os.Exit(1)
	}
	srv := newServer(ln.Addr().String(), *runner, cert)
	fmt.Printf("listening %s\n", ln.Addr())
	if err := srv.ServeTLS(ln, "", ""); err != nil {
		fmt.Fprintln(os.Stderr, "node-exec:", err)
		os.Exit(1)
	}
}

// loadOrCreateCert mirrors the kubelet without --tls-cert-file (k8s.io/kubernetes cmd/kubelet/app/server.go,
// InitializeTLS): a self-signed kubelet.crt/kubelet.key in the cert directory, generated once.
func loadOrCreateCert(dir, listen string) (tls.Certificate, error) {
	certFile, keyFile := filepath.Join(dir, "kubelet.crt"), filepath.Join(dir, "kubelet.key")
	ok, err := certutil.CanReadCertAndKey(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	if !ok {
		host, _, err := net.SplitHostPort(listen)
		if err != nil || host == "" {
			host = "127.0.0.1"
		}
		certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, []string{"localhost"})
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("generating a self-signed certificate: %w", err)
		}
		if err := certutil.WriteCert(certFile, certPEM); err != nil {
			return tls.Certificate{}, err
		}
		if err := keyutil.WriteKey(keyFile, keyPEM); err != nil {
			return tls.Certificate{}, err
		}
	}
	return tls.LoadX509KeyPair(certFile, keyFile)
}

// newServer serves the kubelet's exec routes (k8s.io/kubernetes pkg/kubelet/server/server.go, InstallDebuggingHandlers:
// GET and POST on /exec/{podNamespace}/{podID}/{containerName} and /exec/{podNamespace}/{podID}/{uid}/{containerName}).
func newServer(addr, runnerURL string, cert tls.Certificate) *http.Server {
	h := &execHandler{
		self: selfURL(addr),
		// Certificate checks are pointless on this leg: the peer is this process's own listener.
		back:   &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
		runner: runnerURL,
		client: &http.Client{},
	}
	mux := http.NewServeMux()
	for _, method := range []string{"GET", "POST"} {
		mux.Handle(method+" /exec/{namespace}/{pod}/{container}", h)
		mux.Handle(method+" /exec/{namespace}/{pod}/{uid}/{container}", h)
	}
	return &http.Server{
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}},
		ReadHeaderTimeout: 30 * time.Second,
		// A non-nil empty map turns HTTP/2 off: SPDY and websocket upgrades need a hijackable HTTP/1.1 connection.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
}

// selfURL is where the websocket translator dials this server back; an unspecified listen host means loopback.
func selfURL(addr string) *url.URL {
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return &url.URL{Scheme: "https", Host: net.JoinHostPort(host, port)}
}

type execHandler struct {
	self   *url.URL
	back   http.RoundTripper
	runner string
	client *http.Client
}

// ServeHTTP mirrors the kubelet's getExec (k8s.io/kubernetes pkg/kubelet/server/server.go) and the CRI streaming
// server's serveExec (k8s.io/cri-streaming pkg/streaming/server.go) in one step: the kubelet parses the options with
// remotecommandserver.NewOptions, answers 400 when they are invalid, proxies SPDY and websocket v1-v4 to the streaming
// server, which calls remotecommandserver.ServeExec, and translates websocket v5 (which ServeExec does not speak) to
// SPDY with the apiserver's StreamTranslatorHandler. Here the SPDY leg of the translation comes back to this server.
func (h *execHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	opts, err := remotecommandserver.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	w, r = &cancelOnHangUp{ResponseWriter: w, cancel: cancel}, r.WithContext(ctx)
	if wsstream.IsWebSocketRequestWithStreamCloseProtocol(r) {
		loc := *h.self
		loc.Path, loc.RawQuery = r.URL.Path, r.URL.RawQuery
		translator.NewStreamTranslatorHandler(&loc, h.back, 0, translator.Options{
			Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Tty: opts.TTY,
		}).ServeHTTP(w, r)
		return
	}
	ex := &runnerExecutor{h: h, namespace: r.PathValue("namespace"), stdin: opts.Stdin}
	remotecommandserver.ServeExec(w, r, ex, r.PathValue("pod"), r.PathValue("uid"), r.PathValue("container"),
		r.URL.Query()["command"], opts, streamIdleTimeout, remotecommandserver.DefaultStreamCreationTimeout,
		remotecommandserver.SupportedStreamingProtocols)
}

// cancelOnHangUp cancels the request's context when the upgraded connection is closed. A read error on a hijacked
// connection already cancels it (net/http), but the SPDY server closes the connection on the client's GOAWAY and then
// stops reading without an error, which would leave the runner's request running after the client has gone.
type cancelOnHangUp struct {
	http.ResponseWriter
	cancel context.CancelFunc
}

func (w *cancelOnHangUp) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	return &cancelOnClose{Conn: conn, cancel: w.cancel}, rw, nil
}

type cancelOnClose struct {
	net.Conn
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	c.cancel()
	return c.Conn.Close()
}

// runRequest and runResponse are the runner's protocol; []byte fields travel as standard base64. The request is one
// line of JSON; when it says stdin follows, the rest of the body is the command's stdin, streamed as it arrives,
// because a client speaking websocket v4 can never close stdin (only v5 has a close signal) and a command that reads
// a known length from it must get it while it runs.
type runRequest struct {
	Namespace    string   `json:"namespace"`
	Pod          string   `json:"pod"`
	UID          string   `json:"uid"`
	Container    string   `json:"container"`
	Command      []string `json:"command"`
	StdinFollows bool     `json:"stdinFollows"`
}

type runResponse struct {
	Stdout   []byte `json:"stdout"`
	Stderr   []byte `json:"stderr"`
	ExitCode *int   `json:"exitCode"`
}

// runnerExecutor is the remotecommandserver.Executor for one request: it runs nothing itself.
type runnerExecutor struct {
	h         *execHandler
	namespace string
	stdin     bool
}

func (e *runnerExecutor) ExecInContainer(ctx context.Context, pod, uid, container string, cmd []string, in io.Reader,
	out, errOut io.WriteCloser, _ bool, _ <-chan remotecommandserver.TerminalSize, _ time.Duration) error {
	req := runRequest{Namespace: e.namespace, Pod: pod, UID: uid, Container: container, Command: cmd,
		StdinFollows: e.stdin && in != nil}
	var stdin io.Reader
	if req.StdinFollows {
		stdin = in
	}
	res, err := e.h.run(ctx, &req, stdin)
	if err != nil {
		return err
	}
	if err := write(out, res.Stdout); err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	if err := write(errOut, res.Stderr); err != nil {
		return fmt.Errorf("writing stderr: %w", err)
	}
	switch code := *res.ExitCode; {
	case code == 0:
		return nil
	case code > 0 && code <= 255:
		// ServeExec reports a utilexec.ExitError that Exited() as the status channel's NonZeroExitCode cause.
		return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
	default:
		// Clients parse the exit code as a uint8 (k8s.io/client-go tools/remotecommand/v4.go).
		return fmt.Errorf("runner answered exit code %d, outside 0..255", code)
	}
}

// run POSTs one command to the runner under the request's context, so a client going away cancels it. The runner may
// answer before stdin ends; the answer is the command's end.
func (h *execHandler) run(ctx context.Context, req *runRequest, stdin io.Reader) (*runResponse, error) {
	header, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var body io.Reader = bytes.NewReader(append(header, '\n'))
	if stdin != nil {
		body = io.MultiReader(body, stdin)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, h.runner, body)
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	defer resp.Body.Close()
	data, err := readCapped(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("runner answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("runner: %s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	var res runResponse
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("runner answer: %w", err)
	}
	if res.ExitCode == nil {
		return nil, errors.New("runner answer: no exitCode")
	}
	return &res, nil
}

var errTooLarge = fmt.Errorf("over %d bytes", maxRunnerBody)

func readCapped(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxRunnerBody+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRunnerBody {
		return nil, errTooLarge
	}
	return data, nil
}

// write skips streams the client did not ask for (nil) and empty output.
func write(w io.Writer, data []byte) error {
	if w == nil || len(data) == 0 {
		return nil
	}
	_, err := w.Write(data)
	return err
}
