package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/exec"
	utilexec "k8s.io/utils/exec"
)

// fakeRunner answers by the script in `sh -c SCRIPT` and remembers the requests it saw.
type fakeRunner struct {
	mu       sync.Mutex
	seen     []runRequest
	canceled chan struct{}
}

func (f *fakeRunner) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req runRequest
	body := bufio.NewReader(r.Body)
	header, err := body.ReadBytes('\n')
	if err != nil || json.Unmarshal(header, &req) != nil || len(req.Command) != 3 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.seen = append(f.seen, req)
	f.mu.Unlock()
	answer := func(stdout, stderr string, code int) {
		_ = json.NewEncoder(w).Encode(map[string]any{"stdout": []byte(stdout), "stderr": []byte(stderr), "exitCode": code})
	}
	switch req.Command[2] {
	case "ok":
		answer("out\n", "err\n", 0)
	case "exit3":
		answer("partial\n", "failed\n", 3)
	case "cat":
		in, _ := io.ReadAll(body)
		answer(string(in), "", 0)
	case "head5":
		// answers with what it read while the client's stdin is still open, as the test world's runner does
		_ = http.NewResponseController(w).EnableFullDuplex()
		in := make([]byte, 5)
		_, _ = io.ReadFull(body, in)
		answer(string(in), "", 0)
	case "fail":
		http.Error(w, "container c not known to the agent", http.StatusInternalServerError)
	case "huge":
		answer(strings.Repeat("x", maxRunnerBody), "", 0)
	case "hang":
		<-r.Context().Done()
		close(f.canceled)
	}
}

func start(t *testing.T) (*fakeRunner, string) {
	t.Helper()
	runner := &fakeRunner{canceled: make(chan struct{})}
	rs := httptest.NewServer(runner)
	t.Cleanup(rs.Close)
	cert, err := loadOrCreateCert(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(ln.Addr().String(), rs.URL+"/exec", cert)
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return runner, "https://" + ln.Addr().String()
}

type result struct {
	stdout, stderr string
	err            error
}

type executorFor func(t *testing.T, cfg *rest.Config, u *url.URL) remotecommand.Executor

var executors = map[string]executorFor{
	"spdy": func(t *testing.T, cfg *rest.Config, u *url.URL) remotecommand.Executor {
		e, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
		if err != nil {
			t.Fatal(err)
		}
		return e
	},
	"websocket": func(t *testing.T, cfg *rest.Config, u *url.URL) remotecommand.Executor {
		e, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
		if err != nil {
			t.Fatal(err)
		}
		return e
	},
}

// syncBuffer is locked: a canceled StreamWithContext returns before its copying goroutines end.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func run(ctx context.Context, t *testing.T, newExec executorFor, base, path, script, stdin string) result {
	t.Helper()
	var in io.Reader
	if stdin != "" {
		in = strings.NewReader(stdin)
	}
	return runWith(ctx, t, newExec, base, path, script, in)
}

func runWith(ctx context.Context, t *testing.T, newExec executorFor, base, path, script string, stdin io.Reader) result {
	t.Helper()
	q := url.Values{"command": {"sh", "-c", script}, "output": {"1"}, "error": {"1"}}
	opts := remotecommand.StreamOptions{}
	if stdin != nil {
		q.Set("input", "1")
		opts.Stdin = stdin
	}
	u, _ := url.Parse(base + path + "?" + q.Encode())
	cfg := &rest.Config{Host: base, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	var out, errOut syncBuffer
	opts.Stdout, opts.Stderr = &out, &errOut
	err := newExec(t, cfg, u).StreamWithContext(ctx, opts)
	return result{out.String(), errOut.String(), err}
}

func TestExec(t *testing.T) {
	for name, newExec := range executors {
		t.Run(name, func(t *testing.T) {
			runner, base := start(t)
			ctx := t.Context()

			r := run(ctx, t, newExec, base, "/exec/ns/pod/c", "ok", "")
			if r.err != nil || r.stdout != "out\n" || r.stderr != "err\n" {
				t.Errorf("ok: got %+v", r)
			}

			r = run(ctx, t, newExec, base, "/exec/ns/pod/c", "exit3", "")
			var exitErr exec.CodeExitError
			if !errors.As(r.err, &exitErr) || exitErr.ExitStatus() != 3 || r.stdout != "partial\n" || r.stderr != "failed\n" {
				t.Errorf("exit3: got %+v", r)
			}

			r = run(ctx, t, newExec, base, "/exec/ns/pod/uid-1/c", "cat", "hello stdin")
			if r.err != nil || r.stdout != "hello stdin" {
				t.Errorf("cat: got %+v", r)
			}

			// stdin that never ends, as a websocket v4 client's: the command's end still ends the exec
			open, keep := io.Pipe()
			defer keep.Close()
			go keep.Write([]byte("hello, and more"))
			openCtx, stop := context.WithTimeout(ctx, 10*time.Second)
			defer stop()
			r = runWith(openCtx, t, newExec, base, "/exec/ns/pod/c", "head5", open)
			if r.err != nil || r.stdout != "hello" {
				t.Errorf("head5 with stdin left open: got %+v", r)
			}

			r = run(ctx, t, newExec, base, "/exec/ns/pod/c", "fail", "")
			if r.err == nil || !strings.Contains(r.err.Error(), "container c not known to the agent") {
				t.Errorf("fail: got %+v", r)
			}

			r = run(ctx, t, newExec, base, "/exec/ns/pod/c", "huge", "")
			if r.err == nil || !strings.Contains(r.err.Error(), errTooLarge.Error()) || r.stdout != "" {
				t.Errorf("huge: got err %v and %d bytes of stdout", r.err, len(r.stdout))
			}

			runner.mu.Lock()
			seen := runner.seen
			runner.mu.Unlock()
			first, withUID := seen[0], seen[2]
			if first.Namespace != "ns" || first.Pod != "pod" || first.UID != "" || first.Container != "c" ||
				strings.Join(first.Command, " ") != "sh -c ok" || first.StdinFollows {
				t.Errorf("first runner request: %+v", first)
			}
			if withUID.UID != "uid-1" || withUID.Container != "c" || !withUID.StdinFollows {
				t.Errorf("runner request with uid: %+v", withUID)
			}

			// A client going away cancels the runner's request.
			hangCtx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			run(hangCtx, t, newExec, base, "/exec/ns/pod/c", "hang", "")
			select {
			case <-runner.canceled:
			case <-time.After(10 * time.Second):
				t.Error("the runner's request outlived the client")
			}
		})
	}
}

func TestBadOptions(t *testing.T) {
	_, base := start(t)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Post(base+"/exec/ns/pod/c?command=true", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("no stream requested: got %s, want 400", resp.Status)
	}
}

func TestRunnerRefused(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	ex := &runnerExecutor{h: &execHandler{runner: "http://" + addr + "/exec", client: &http.Client{}}, namespace: "ns"}
	err := ex.ExecInContainer(t.Context(), "pod", "", "c", []string{"true"}, nil, nil, nil, false, nil, 0)
	var exitErr utilexec.ExitError
	if err == nil || errors.As(err, &exitErr) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("got %v, want a plain connection refused error", err)
	}
}
