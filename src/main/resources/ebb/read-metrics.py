"""Ebb member read: fetch one engine's metrics page over loopback, from inside the engine's own container.

Run by the operator through pods/exec, with the engine image's own python3, every parameter a separate argument:

    python3 -c "$(cat read-metrics.py)" --scheme http --host 127.0.0.1 --port 8000 --path /metrics

It prints the body to stdout and exits 0, or exits with a code that says what went wrong:
2 connection refused, 3 HTTP error status, 4 TLS failure, 5 no answer within --timeout,
6 body larger than --max-bytes, 7 anything else. It reads nothing else and changes nothing.
"""
import argparse
import socket
import ssl
import sys
import urllib.error
import urllib.request

OK, REFUSED, HTTP_ERROR, TLS_FAILURE, TIMEOUT, TOO_LARGE, OTHER = 0, 2, 3, 4, 5, 6, 7


def parse_args(argv):
    p = argparse.ArgumentParser(prog="read-metrics", description="Print an engine's metrics page.")
    p.add_argument("--scheme", choices=["http", "https"], default="http")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--path", default="/metrics")
    p.add_argument("--max-bytes", type=int, default=1048576, help="largest body accepted (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=2.0, help="seconds the engine has to answer (default: %(default)s)")
    return p.parse_args(argv)


def fetch(args):
    context = None
    if args.scheme == "https":
        # loopback to the engine's own listener: its certificate names the Service, not 127.0.0.1
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    url = "%s://%s:%d%s" % (args.scheme, args.host, args.port, args.path)
    try:
        with urllib.request.urlopen(url, timeout=args.timeout, context=context) as response:
            body = response.read(args.max_bytes + 1)
    except urllib.error.HTTPError as e:
        return HTTP_ERROR, "HTTP %d" % e.code
    except urllib.error.URLError as e:
        reason = e.reason
        if isinstance(reason, ConnectionRefusedError):
            return REFUSED, "connection refused"
        if isinstance(reason, ssl.SSLError):
            return TLS_FAILURE, "TLS failure: %s" % reason
        if isinstance(reason, socket.timeout):
            return TIMEOUT, "no answer within %gs" % args.timeout
        return OTHER, "read failed: %s" % reason
    except ssl.SSLError as e:
        return TLS_FAILURE, "TLS failure: %s" % e
    except socket.timeout:
        return TIMEOUT, "no answer within %gs" % args.timeout
    except ConnectionRefusedError:
        return REFUSED, "connection refused"
    except OSError as e:
        return OTHER, "read failed: %s" % e
    if len(body) > args.max_bytes:
        return TOO_LARGE, "body larger than %d bytes" % args.max_bytes
    sys.stdout.buffer.write(body)
    sys.stdout.flush()
    return OK, None


def main(argv):
    try:
        code, why = fetch(parse_args(argv))
    except SystemExit:
        code, why = OTHER, "bad arguments"
    except BaseException as e:
        code, why = OTHER, "%s: %s" % (type(e).__name__, e)
    if why:
        sys.stderr.write(why + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
