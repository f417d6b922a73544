"""Ebb member read: fetch one engine's metrics page over loopback, from inside the engine's own container.

Run by the operator through pods/exec, with the engine image's own python3, every parameter a separate argument:

    python3 -c "$(cat read-metrics.py)" --scheme http --host 127.0.0.1 --port 8000 --path /metrics

It prints the body to stdout and exits 0, or exits with a code that says what went wrong:
2 connection refused, 3 HTTP error status, 4 TLS failure, 5 no answer within --timeout,
6 answer larger than --max-bytes (plus room for the headers), 7 anything else: bad arguments, an answer
that is not HTTP, not 200, shorter than its Content-Length, cut inside its chunked framing or encoded. A chunked
body is printed decoded. It connects directly, whatever proxy the environment names, and reads nothing else
and changes nothing.
"""
import argparse
import socket
import sys
import time

OK, REFUSED, HTTP_ERROR, TLS_FAILURE, TIMEOUT, TOO_LARGE, OTHER = 0, 2, 3, 4, 5, 6, 7
HEADER_ROOM = 65536


class Done(Exception):
    def __init__(self, code, why):
        Exception.__init__(self, why)
        self.code = code


def parse_args(argv):
    p = argparse.ArgumentParser(prog="read-metrics", description="Print an engine's metrics page.")
    p.add_argument("--scheme", choices=["http", "https"], default="http")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--path", default="/metrics")
    p.add_argument("--max-bytes", type=int, default=1048576, help="largest body accepted (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=2.0, help="seconds the engine has to answer (default: %(default)s)")
    args = p.parse_args(argv)
    check_args(args)
    return args


def check_args(args):
    """The arguments come from a Pod's annotations: each is checked here too, not only by the caller."""
    # getaddrinfo takes the port modulo 65536, so 65616 would read port 80
    if not 1 <= args.port <= 65535:
        raise Done(OTHER, "bad arguments: --port must be 1..65535")
    if not is_loopback(args.host):
        raise Done(OTHER, "bad arguments: --host must be an IPv4 loopback address")
    # anything else in the path would end the request line and start a header of the path's choosing
    if not args.path.startswith("/") or len(args.path) > 2048 or any(c <= " " or c >= "\x7f" for c in args.path):
        raise Done(OTHER, "bad arguments: --path must start with / and hold only printable ASCII")
    if args.max_bytes < 1:
        raise Done(OTHER, "bad arguments: --max-bytes must be positive")
    if not 0 < args.timeout <= 60:
        raise Done(OTHER, "bad arguments: --timeout must be over 0 and at most 60 seconds")


def is_loopback(host):
    # by hand: inet_aton would take "127.0.0.1 anything", and the host goes into the request's Host line
    parts = host.split(".")
    return (len(parts) == 4 and all(0 < len(p) <= 3 and all("0" <= c <= "9" for c in p) and int(p) <= 255 for p in parts)
            and int(parts[0]) == 127)


def fetch(args):
    """One HTTP/1.0 GET on a plain socket: the interpreter starts faster without urllib, and many reads may run at once."""
    deadline = time.monotonic() + args.timeout

    def remaining():
        left = deadline - time.monotonic()
        if left <= 0:
            raise Done(TIMEOUT, "no answer within %gs" % args.timeout)
        return left

    try:
        sock = socket.create_connection((args.host, args.port), timeout=remaining())
    except ConnectionRefusedError:
        raise Done(REFUSED, "connection refused")
    except socket.timeout:
        raise Done(TIMEOUT, "no answer within %gs" % args.timeout)
    except OSError as e:
        raise Done(OTHER, "connect failed: %s" % e)
    try:
        if args.scheme == "https":
            import ssl  # only when needed: it is the costliest import
            # loopback to the engine's own listener: its certificate names the Service, not 127.0.0.1
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            try:
                sock.settimeout(remaining())
                sock = context.wrap_socket(sock, server_hostname=args.host)
            except ssl.SSLError as e:
                raise Done(TLS_FAILURE, "TLS failure: %s" % e)
        request = "GET %s HTTP/1.0\r\nHost: %s:%d\r\nAccept: text/plain\r\nConnection: close\r\n\r\n" % (
            args.path, args.host, args.port)
        sock.settimeout(remaining())
        sock.sendall(request.encode("ascii"))
        limit = args.max_bytes + HEADER_ROOM
        chunks, size = [], 0
        while True:
            sock.settimeout(remaining())
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                # what was read is a cut answer, whichever part of it the cut fell in
                raise Done(TOO_LARGE, "answer larger than %d bytes" % limit)
    except socket.timeout:
        raise Done(TIMEOUT, "no answer within %gs" % args.timeout)
    except ConnectionResetError as e:
        raise Done(OTHER, "connection reset: %s" % e)
    except OSError as e:
        if type(e).__module__ == "ssl":
            raise Done(TLS_FAILURE, "TLS failure: %s" % e)
        raise Done(OTHER, "read failed: %s" % e)
    finally:
        sock.close()
    response = b"".join(chunks)
    head, sep, body = response.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].split()
    if not sep or len(status) < 2 or not status[0].startswith(b"HTTP/") or not status[1].isdigit():
        raise Done(OTHER, "the answer is not HTTP")
    if int(status[1]) >= 400:
        raise Done(HTTP_ERROR, "HTTP %s" % status[1].decode("ascii"))
    if int(status[1]) != 200:
        raise Done(OTHER, "HTTP %s instead of 200" % status[1].decode("ascii"))
    coding = header(head, b"content-encoding")
    if coding is not None and coding.lower() != b"identity":
        raise Done(OTHER, "the body is encoded (%s)" % coding[:32].decode("ascii", "replace"))
    transfer = header(head, b"transfer-encoding")
    if transfer is not None:
        if transfer.lower() != b"chunked":
            raise Done(OTHER, "transfer coding %s is not read" % transfer[:32].decode("ascii", "replace"))
        body = dechunk(body)
    if len(body) > args.max_bytes:
        raise Done(TOO_LARGE, "body larger than %d bytes" % args.max_bytes)
    if transfer is None:
        length = header(head, b"content-length")
        if length is not None and not length.isdigit():
            raise Done(OTHER, "the answer's Content-Length is not a number")
        if length is not None and len(body) < int(length):
            raise Done(OTHER, "body of %d bytes, %s announced" % (len(body), length.decode("ascii")))
    sys.stdout.buffer.write(body)
    sys.stdout.flush()


def header(head, wanted):
    """The value of the answer's first header of this (lower-case) name, or None if it has none."""
    for line in head.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == wanted:
            return value.strip()
    return None


def dechunk(framed):
    """The payload of a chunked body. uvicorn chunks an answer without Content-Length even to HTTP/1.0, and its
    framing left in would put size lines in the page, or split a sample in two where a chunk ends."""
    payload, at = [], 0
    while True:
        end = framed.find(b"\r\n", at)
        if end < 0:
            raise Done(OTHER, "chunked body cut before its last chunk")
        size = framed[at:end].split(b";", 1)[0].strip()
        if not size or len(size) > 8 or any(c not in b"0123456789abcdefABCDEF" for c in size):
            raise Done(OTHER, "chunked body with a malformed chunk size")
        size, at = int(size, 16), end + 2
        if size == 0:
            # the last chunk is followed by optional trailers and an empty line; without it the answer was cut
            if not framed.startswith(b"\r\n", at) and b"\r\n\r\n" not in framed[at:]:
                raise Done(OTHER, "chunked body cut after its last chunk")
            return b"".join(payload)
        if len(framed) < at + size + 2 or framed[at + size:at + size + 2] != b"\r\n":
            raise Done(OTHER, "chunked body cut inside a chunk")
        payload.append(framed[at:at + size])
        at += size + 2


def main(argv):
    try:
        fetch(parse_args(argv))
        code, why = OK, None
    except Done as e:
        code, why = e.code, str(e)
    except SystemExit:
        code, why = OTHER, "bad arguments"
    except BaseException as e:
        code, why = OTHER, "%s: %s" % (type(e).__name__, e)
    if why:
        sys.stderr.write(why + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
