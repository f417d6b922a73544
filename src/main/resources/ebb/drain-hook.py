"""Ebb drain hook: hold a deleted engine Pod's SIGTERM until the engine has no request in flight.

Run as the engine container's preStop hook, with the engine image's own python3:

    python3 -c "$(cat drain-hook.py)" --scheme http --host 127.0.0.1 --port 8000 \
        --path /metrics --grace 30 --gauges vllm:num_requests_running,vllm:num_requests_waiting

Timeline, in seconds from the delete: the engine serves on undisturbed for --settle; then the hook reads the
in-flight gauges every --interval and returns on the second consecutive idle read. No read starts later than
--grace minus --last-read-margin, and no read, connect to last byte, lasts longer than --read-timeout, so the hook
returns by their sum (grace minus 3 at the defaults) and the kubelet's SIGTERM still leaves the engine a few
seconds. --host may be given several times (the members of a replica whose followers count requests of their own):
each read then sums every host's gauges within the one --read-timeout. A listener that refuses, answers an HTTP
error or fails the TLS handshake ends the hook at once: there is nothing to measure (a multi-node engine's collective
spans every member, so one member's engine gone ends the replica's work); so does a --host name the resolver says
does not exist (a follower's hook reads its leader by name, and the name goes with the leader's Pod); so do arguments
it cannot use, though only after the settle (the given --settle if it can be read, else 5 s). A read that times out, an answer that is not HTTP, a body that cannot be parsed and a gauge that is
missing all count as busy. Reads connect directly, whatever proxy the environment names. The hook always exits 0,
and writes one line per read, and a last line saying why it returned, to stderr, which the kubelet keeps only for a
hook that fails. So each line also goes to --container-log when given (the container's main process's stderr,
/proc/1/fd/2, which is the container's log), and the last line, with the kind of ending in brackets (idle,
nothing-to-measure, deadline, bad-arguments, stopped), is appended to --termination-log when given (the container's
termination message file, which the kubelet reports in the container's terminated state). Neither may fail the hook.
"""
import time

STARTED = time.monotonic()  # before the other imports: the timeline counts from the hook's start

import sys  # noqa: E402

MAX_BODY = 1024 * 1024
MAX_HOSTS = 64
SETTLE = 5.0
# a sleep may wake a little late; a read planned for the last start time still counts as starting then
LATE_START = 0.05
METRIC_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z"


def load_modules():
    """Imports what the hook needs under main's guard, so a slim python3 still lets the hook exit 0."""
    global argparse, http, math, re, signal, socket, ssl, urllib, GONE_NAMES
    import argparse
    import http.client
    import math
    import re
    import signal
    import socket
    # the resolver's "no such name" answers; a temporary failure (EAI_AGAIN) proves nothing and counts as busy
    GONE_NAMES = {getattr(socket, n) for n in ("EAI_NONAME", "EAI_NODATA") if hasattr(socket, n)}
    import urllib.error
    import urllib.request
    try:
        import ssl
    except ImportError:  # a python3 built without OpenSSL still reads a plain-http listener
        ssl = None


class Ended(Exception):
    """The listener cannot be measured; waiting longer would only delay SIGTERM."""


class Busy(Exception):
    """The read does not prove the engine idle."""


class BadArguments(Exception):
    """Arguments the hook cannot measure with."""


class Overdue(BaseException):
    """The read's deadline passed. A BaseException, so that no handler inside urllib or ssl swallows it."""


def number(low, strictly=False):
    """An argparse type: a finite number at least (or, strictly, above) low."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError("%r is not a number" % text)
        if not math.isfinite(value) or value < low or (strictly and value == low):
            raise argparse.ArgumentTypeError("%s must be a finite number %s %g" % (text, ">" if strictly else ">=", low))
        return value
    return parse


def port(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a port" % text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError("%s is not a port (1-65535)" % text)
    return value


def host(text):
    if not re.match(r"[A-Za-z0-9.:-]+\Z", text):
        raise argparse.ArgumentTypeError("%r is not a host name or address" % text)
    return text


def path(text):
    # printable ASCII without spaces, so the hook asks for exactly this path
    if not re.match(r"/[!-~]*\Z", text):
        raise argparse.ArgumentTypeError("%r is not a path starting with /" % text)
    return text


def gauges(text):
    # comma-separated gauges, each one name or the names its engine's releases have given it, with "|" between them
    slots = [slot.split("|") for slot in text.split(",")]
    for names in slots:
        for name in names:
            if not re.match(METRIC_NAME, name):
                raise argparse.ArgumentTypeError("%r is not a metric name" % name)
    return slots


def parse_args(argv):
    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise BadArguments(message)

    p = Parser(prog="drain-hook", description="Wait until an inference engine holds no requests.")
    p.add_argument("--scheme", choices=["http", "https"], default="http")
    p.add_argument("--host", type=host, action="append", help="where an engine serves; repeat to sum several (default: 127.0.0.1)")
    p.add_argument("--port", type=port, required=True)
    p.add_argument("--path", type=path, default="/metrics")
    p.add_argument("--grace", type=number(0, strictly=True), required=True, help="the Pod's terminationGracePeriodSeconds")
    p.add_argument("--gauges", type=gauges, required=True,
                   help="comma-separated gauges whose sum is the work in flight; a|b for a gauge named a or b")
    p.add_argument("--settle", type=number(0), default=SETTLE, help="seconds before the first read (default: %(default)s)")
    # below a tenth of a second the hook would only load the engine's metrics endpoint
    p.add_argument("--interval", type=number(0.1), default=1.0, help="seconds between read starts (default: %(default)s)")
    p.add_argument("--read-timeout", type=number(0, strictly=True), default=2.0,
                   help="a slower read is busy (default: %(default)s)")
    p.add_argument("--last-read-margin", type=number(0), default=5.0,
                   help="no read starts later than grace minus this (default: %(default)s)")
    p.add_argument("--container-log", help="a file each line also goes to, e.g. /proc/1/fd/2")
    p.add_argument("--termination-log", help="a file the last line is appended to, e.g. /dev/termination-log")
    args = p.parse_args(argv)
    args.host = args.host or ["127.0.0.1"]
    if len(args.host) > MAX_HOSTS:
        raise BadArguments("more than %d --host" % MAX_HOSTS)
    return args


def option_of(argv, name):
    """The last value given for --name, read without the parser: arguments that fail as a whole still name it."""
    given = None
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            given = argv[i + 1]
        elif arg.startswith(name + "="):
            given = arg[len(name) + 1:]
    return given


def settle_of(argv):
    """The --settle among arguments that failed as a whole: the given one if it can be read, else the default."""
    given = option_of(argv, "--settle")
    try:
        return SETTLE if given is None else number(0)(given)
    except argparse.ArgumentTypeError:
        return SETTLE


def appender(path):
    """Writes a line to the file at path, or does nothing when it cannot: a log must never fail the hook."""
    if not path:
        return lambda line: None
    try:
        out = open(path, "a", encoding="utf-8", errors="replace")
    except Exception:
        return lambda line: None

    def write(line):
        try:
            out.write(line + "\n")
            out.flush()
        except Exception:
            pass
    return write


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


def in_flight(body, slots):
    """Sums every series of every gauge under any of its names; a gauge under none of them, any value unusable or any
    line that is neither a comment nor a sample (a cut page hides the sample that matters) means the engine may be busy."""
    sums = dict.fromkeys((name for names in slots for name in names), 0.0)
    seen = set()
    for line_number, raw in enumerate(body.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, value = split_sample(line)
        try:
            count = float(value)
        except ValueError:
            if name in sums:
                raise Busy("value %r of %s is not a number" % (value[:32], name))
            raise Busy("line %d is neither a comment nor a sample" % line_number)
        if not re.match(METRIC_NAME, name):
            raise Busy("line %d is neither a comment nor a sample" % line_number)
        if name in sums:
            if math.isnan(count) or math.isinf(count) or count < 0:
                raise Busy("value %s of %s cannot be a count" % (value[:32], name))
            sums[name] += count
            seen.add(name)
    missing = ["|".join(names) for names in slots if not any(name in seen for name in names)]
    if missing:
        raise Busy("gauge %s missing" % ",".join(missing))
    return sum(sums.values())


def overdue(signum, frame):
    raise Overdue()


def direct_opener(context):
    """An opener that ignores the proxy variables an engine container often carries for model downloads: the engine
    is on this Pod's loopback, and NO_PROXY=localhost does not cover 127.0.0.1."""
    handlers = [urllib.request.ProxyHandler({})]
    if context is not None:
        handlers.append(urllib.request.HTTPSHandler(context=context))
    return urllib.request.build_opener(*handlers)


def fetch(opener, url, budget):
    """The whole read, connect to last byte, within budget seconds: a socket timeout bounds only each call."""
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        with opener.open(url, timeout=budget) as response:
            return response.read(MAX_BODY + 1)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def read(args, host, opener, url, budget, context):
    if args.scheme == "https" and context is None:
        raise Ended("this python3 has no TLS support")
    tls_error = ssl.SSLError if ssl else ()
    try:
        body = fetch(opener, url, budget)
    except Overdue:
        raise Busy("no answer within %gs" % round(budget, 1))
    except urllib.error.HTTPError as e:
        raise Ended("HTTP %d" % e.code)
    except urllib.error.URLError as e:
        reason = e.reason
        if isinstance(reason, ConnectionRefusedError):
            raise Ended("connection refused")
        if isinstance(reason, tls_error):
            raise Ended("TLS handshake failed: %s" % reason)
        if isinstance(reason, socket.timeout):
            raise Busy("no answer within %gs" % round(budget, 1))
        if isinstance(reason, socket.gaierror) and reason.errno in GONE_NAMES:
            # a follower reads its leader by name, which resolves while the leader's Pod exists: nothing left to wait for
            raise Ended("%s does not resolve" % host)
        raise Busy("read failed: %s" % reason)
    except tls_error as e:
        raise Ended("TLS handshake failed: %s" % e)
    except socket.timeout:
        raise Busy("no answer within %gs" % round(budget, 1))
    except ConnectionRefusedError:
        raise Ended("connection refused")
    except http.client.HTTPException as e:
        raise Busy("not an HTTP answer: %s: %s" % (type(e).__name__, str(e)[:64]))
    except OSError as e:
        raise Busy("read failed: %s" % e)
    except Exception as e:  # a read that fails in any other way proves nothing either
        raise Busy("read failed: %s: %s" % (type(e).__name__, e))
    if len(body) > MAX_BODY:
        raise Busy("body larger than %d bytes" % MAX_BODY)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Busy("body is not text")
    return in_flight(text, args.gauges)


def read_all(args, urls, opener, deadline, elapsed, context):
    """Every host's in-flight sum, each read within what is left of the one read's budget."""
    total = 0
    for h, url in urls:
        left = deadline - elapsed()
        if left <= 0:
            raise Busy("no answer from %s in time" % h)
        try:
            total += read(args, h, opener, url, left, context)
        except (Busy, Ended) as e:
            raise type(e)("%s: %s" % (h, e) if len(urls) > 1 else str(e))
    return total


def drain(args, log):
    elapsed = lambda: time.monotonic() - STARTED
    last_read_start = args.grace - args.last_read_margin
    # the kubelet's SIGTERM comes once the hook returns; the timeline promises it by the last read's end at the latest
    sigterm_by = last_read_start + args.read_timeout
    urls = [(h, "%s://%s:%d%s" % (args.scheme, "[%s]" % h if ":" in h else h, args.port, args.path)) for h in args.host]
    context = None
    if args.scheme == "https" and ssl is not None:
        # loopback to the engine's own listener: its certificate names the Service, not 127.0.0.1
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    opener = direct_opener(context)
    signal.signal(signal.SIGALRM, overdue)
    no_more = "no read may start after %gs (grace %g minus %g)" % (last_read_start, args.grace, args.last_read_margin)
    next_read = args.settle
    if next_read > last_read_start + LATE_START:
        # too short a grace for any read: serve on undisturbed as long as the SIGTERM point allows
        time.sleep(max(0.0, min(args.settle, sigterm_by) - elapsed()))
        return "deadline", no_more
    idle_reads = 0
    while True:
        time.sleep(max(0.0, next_read - elapsed()))
        began = elapsed()
        budget = min(args.read_timeout, sigterm_by - began)
        if began > last_read_start + LATE_START or budget <= 0:
            return "deadline", no_more
        try:
            total = read_all(args, urls, opener, began + budget, elapsed, context)
        except Ended as e:
            log("t=%.1fs read ended the drain: %s" % (began, e))
            return "nothing-to-measure", "nothing to measure: %s" % e
        except (Busy, Overdue) as e:  # the alarm can land just after the read returned: it was still too slow
            idle_reads = 0
            log("t=%.1fs read: busy (%s)" % (began, e if isinstance(e, Busy) else "no answer in time"))
        else:
            if total == 0:
                idle_reads += 1
                log("t=%.1fs read: idle (sum 0), %d in a row" % (began, idle_reads))
                if idle_reads == 2:
                    return "idle", "idle on two consecutive reads"
            else:
                idle_reads = 0
                log("t=%.1fs read: busy (sum %g)" % (began, total))
        # after a slow read the schedule restarts from now: reads that fell behind must not run back to back
        next_read = max(next_read + args.interval, elapsed())
        if next_read > last_read_start + LATE_START:
            return "deadline", no_more


def main(argv):
    to_container_log = appender(option_of(argv, "--container-log"))

    def log(line):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
        to_container_log("ebb drain hook: " + line)
    try:
        load_modules()
        kind, why = drain(parse_args(argv), log)
    except BadArguments as e:
        kind, why = "bad-arguments", "bad arguments, nothing measured: %s" % e
        # a typo in a hand-written manifest must not take the engine's settle away too: it still serves that long
        time.sleep(max(0.0, settle_of(argv) - (time.monotonic() - STARTED)))
    except SystemExit:  # --help
        kind, why = "bad-arguments", "asked for help, nothing measured"
    except BaseException as e:  # the hook must never fail the Pod's termination
        kind, why = "stopped", "stopped by %s: %s" % (type(e).__name__, e)
    last = "returning at %.1fs: %s" % (time.monotonic() - STARTED, why)
    log(last)
    appender(option_of(argv, "--termination-log"))("ebb drain hook [%s]: %s" % (kind, last[:400]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
