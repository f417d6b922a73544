"""Ebb drain hook: hold a deleted engine Pod's SIGTERM until the engine has no request in flight.

Run as the engine container's preStop hook, with the engine image's own python3:

    python3 -c "$(cat drain-hook.py)" --scheme http --host 127.0.0.1 --port 8000 \
        --path /metrics --grace 30 --gauges vllm:num_requests_running,vllm:num_requests_waiting

Timeline, in seconds from the delete: the engine serves on undisturbed for --settle; then the hook reads the
in-flight gauges every --interval and returns on the second consecutive idle read. No read starts later than
--grace minus --last-read-margin, so the kubelet's SIGTERM still leaves the engine a few seconds. A listener that
refuses, answers an HTTP error or fails the TLS handshake ends the hook at once: there is nothing to measure. A
read that times out, a body that cannot be parsed and a gauge that is missing all count as busy. The hook always
exits 0, and writes one line per read, and a last line saying why it returned, to stderr.
"""
import time

STARTED = time.monotonic()  # before the other imports: the timeline counts from the hook's start

import argparse  # noqa: E402
import math  # noqa: E402
import socket  # noqa: E402
import ssl  # noqa: E402
import sys  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402

MAX_BODY = 1024 * 1024


class Ended(Exception):
    """The listener cannot be measured; waiting longer would only delay SIGTERM."""


class Busy(Exception):
    """The read does not prove the engine idle."""


def parse_args(argv):
    p = argparse.ArgumentParser(prog="drain-hook", description="Wait until an inference engine holds no requests.")
    p.add_argument("--scheme", choices=["http", "https"], default="http")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--path", default="/metrics")
    p.add_argument("--grace", type=float, required=True, help="the Pod's terminationGracePeriodSeconds")
    p.add_argument("--gauges", required=True, help="comma-separated gauges whose sum is the work in flight")
    p.add_argument("--settle", type=float, default=5.0, help="seconds before the first read (default: %(default)s)")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between read starts (default: %(default)s)")
    p.add_argument("--read-timeout", type=float, default=2.0, help="a slower read is busy (default: %(default)s)")
    p.add_argument("--last-read-margin", type=float, default=5.0,
                   help="no read starts later than grace minus this (default: %(default)s)")
    return p.parse_args(argv)


def split_sample(line):
    """Returns (name, value text) of one sample line; label values may hold spaces, braces and escaped quotes."""
    brace = line.find("{")
    space = line.find(" ")
    if brace != -1 and (space == -1 or brace < space):
        name = line[:brace]
        i, quoted = brace + 1, False
        while i < len(line):
            c = line[i]
            if quoted and c == "\\":
                i += 2
                continue
            if c == '"':
                quoted = not quoted
            elif c == "}" and not quoted:
                break
            i += 1
        else:
            raise Busy("unterminated labels")
        rest = line[i + 1:]
    else:
        if space == -1:
            raise Busy("sample without a value")
        name, rest = line[:space], line[space:]
    fields = rest.split()
    if not fields or len(fields) > 2:
        raise Busy("malformed sample")
    return name, fields[0]


def in_flight(body, gauges):
    """Sums every series of every gauge; any gauge absent or any value unusable means the engine may be busy."""
    sums = dict.fromkeys(gauges, 0.0)
    seen = set()
    for raw in body.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, value = split_sample(line)
        if name in sums:
            try:
                number = float(value)
            except ValueError:
                raise Busy("value %r of %s is not a number" % (value[:32], name))
            if math.isnan(number) or math.isinf(number) or number < 0:
                raise Busy("value %s of %s cannot be a count" % (value[:32], name))
            sums[name] += number
            seen.add(name)
    missing = [g for g in gauges if g not in seen]
    if missing:
        raise Busy("gauge %s missing" % ",".join(missing))
    return sum(sums.values())


def read(args, gauges, context):
    url = "%s://%s:%d%s" % (args.scheme, args.host, args.port, args.path)
    try:
        with urllib.request.urlopen(url, timeout=args.read_timeout, context=context) as response:
            body = response.read(MAX_BODY + 1)
    except urllib.error.HTTPError as e:
        raise Ended("HTTP %d" % e.code)
    except urllib.error.URLError as e:
        reason = e.reason
        if isinstance(reason, ConnectionRefusedError):
            raise Ended("connection refused")
        if isinstance(reason, ssl.SSLError):
            raise Ended("TLS handshake failed: %s" % reason)
        if isinstance(reason, socket.timeout):
            raise Busy("no answer within %gs" % args.read_timeout)
        raise Busy("read failed: %s" % reason)
    except ssl.SSLError as e:
        raise Ended("TLS handshake failed: %s" % e)
    except socket.timeout:
        raise Busy("no answer within %gs" % args.read_timeout)
    except ConnectionRefusedError:
        raise Ended("connection refused")
    except OSError as e:
        raise Busy("read failed: %s" % e)
    if len(body) > MAX_BODY:
        raise Busy("body larger than %d bytes" % MAX_BODY)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Busy("body is not text")
    return in_flight(text, gauges)


def drain(args, log):
    elapsed = lambda: time.monotonic() - STARTED
    gauges = [g for g in args.gauges.split(",") if g]
    last_read_start = args.grace - args.last_read_margin
    context = None
    if args.scheme == "https":
        # loopback to the engine's own listener: its certificate names the Service, not 127.0.0.1
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    time.sleep(max(0.0, args.settle - elapsed()))
    idle_reads = 0
    next_read = args.settle
    while True:
        if elapsed() > last_read_start:
            return "no read may start after %gs (grace %g minus %g)" % (last_read_start, args.grace, args.last_read_margin)
        began = elapsed()
        try:
            total = read(args, gauges, context)
        except Ended as e:
            log("t=%.1fs read ended the drain: %s" % (began, e))
            return "nothing to measure: %s" % e
        except Busy as e:
            idle_reads = 0
            log("t=%.1fs read: busy (%s)" % (began, e))
        else:
            if total == 0:
                idle_reads += 1
                log("t=%.1fs read: idle (sum 0), %d in a row" % (began, idle_reads))
                if idle_reads == 2:
                    return "idle on two consecutive reads"
            else:
                idle_reads = 0
                log("t=%.1fs read: busy (sum %g)" % (began, total))
        next_read += args.interval
        time.sleep(max(0.0, next_read - elapsed()))


def main(argv):
    log = lambda line: sys.stderr.write(line + "\n") or sys.stderr.flush()
    try:
        why = drain(parse_args(argv), log)
    except SystemExit:
        why = "bad arguments"
    except BaseException as e:  # the hook must never fail the Pod's termination
        why = "stopped by %s: %s" % (type(e).__name__, e)
    log("returning at %.1fs: %s" % (time.monotonic() - STARTED, why))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
