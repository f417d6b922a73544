"""Ebb connection read: list the clients still connected to one port of this network namespace.

Run by the operator through pods/exec in a member's own container, with the engine image's own python3, every
parameter a separate argument:

    python3 -c "$(cat read-connections.py)" --port 8000

It reads the kernel's TCP tables (/proc/net/tcp and /proc/net/tcp6: the namespace of the Pod it runs in) and counts
the connections on local port --port that are established or being accepted (ESTABLISHED, SYN_RECV) from a peer
other than 127.0.0.1, ::1 or ::ffff:127.0.0.1 (the operator's own reads and the drain hook connect from there).
Listening sockets and connections the namespace made itself to other ports are not counted. With --local-address,
only connections to that local address count: useful where several engines share one namespace.

Exit 0 and print `peers N`, then one `address:port` per peer, at most --max-peers of them (N counts them all).
Exit 7 when a table cannot be read whole or holds a line it does not understand, or on bad arguments: what cannot
be read is never "no peers". A kernel without IPv6 has no tcp6 table; that alone is not an error.
"""
import argparse
import ipaddress
import sys

OK, OTHER = 0, 7
ESTABLISHED, SYN_RECV = "01", "03"
LOOPBACK_PEERS = {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"), ipaddress.ip_address("::ffff:127.0.0.1")}
MAX_TABLE_BYTES = 64 * 1024 * 1024


class Done(Exception):
    def __init__(self, code, why):
        Exception.__init__(self, why)
        self.code = code


def parse_args(argv):
    p = argparse.ArgumentParser(prog="read-connections", description="Count the clients connected to one port.")
    p.add_argument("--port", type=int, required=True, help="the local port clients connect to")
    p.add_argument("--local-address", help="count only connections to this local address")
    p.add_argument("--max-peers", type=int, default=64, help="peers listed at most (default: %(default)s)")
    p.add_argument("--tables", default="/proc/net", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not 1 <= args.port <= 65535:
        raise Done(OTHER, "bad arguments: --port must be 1..65535")
    if not 0 <= args.max_peers <= 4096:
        raise Done(OTHER, "bad arguments: --max-peers must be 0..4096")
    if args.local_address is not None:
        try:
            args.local_address = ipaddress.ip_address(args.local_address)
        except ValueError:
            raise Done(OTHER, "bad arguments: --local-address is not an IP address")
    return args


def decode_address(text):
    """An address as /proc/net/tcp* prints it: the raw bytes of the address in 32-bit words, each printed as a
    hexadecimal number in the host's byte order (net/ipv4/tcp_ipv4.c, net/ipv6/tcp_ipv6.c: %08X of __be32)."""
    host, sep, port = text.partition(":")
    if not sep or len(port) != 4 or len(host) not in (8, 32) or not is_hex(host) or not is_hex(port):
        raise Done(OTHER, "unreadable address %r" % text[:64])
    raw = b"".join(int(host[i:i + 8], 16).to_bytes(4, sys.byteorder) for i in range(0, len(host), 8))
    return ipaddress.ip_address(raw), int(port, 16)


def is_hex(text):
    return all(c in "0123456789abcdefABCDEF" for c in text)


def read_table(path, optional):
    try:
        with open(path, "rb") as table:
            data = table.read(MAX_TABLE_BYTES + 1)
    except FileNotFoundError:
        if optional:
            return []
        raise Done(OTHER, "%s cannot be read: no such file" % path)
    except OSError as e:
        raise Done(OTHER, "%s cannot be read: %s" % (path, e))
    if len(data) > MAX_TABLE_BYTES:
        raise Done(OTHER, "%s is larger than %d bytes" % (path, MAX_TABLE_BYTES))
    try:
        lines = data.decode("ascii").split("\n")
    except UnicodeDecodeError:
        raise Done(OTHER, "%s is not text" % path)
    # tcp heads its remote column rem_address, tcp6 remote_address
    if not lines or lines[0].split()[:2] != ["sl", "local_address"]:
        raise Done(OTHER, "%s does not start with the kernel's heading" % path)
    return [line for line in lines[1:] if line.strip()]


def peers(args):
    found = []
    for name, optional in (("tcp", False), ("tcp6", True)):
        for line in read_table("%s/%s" % (args.tables, name), optional):
            fields = line.split()
            if len(fields) < 4 or not fields[0].endswith(":"):
                raise Done(OTHER, "unreadable line in %s: %r" % (name, line[:120]))
            local, local_port = decode_address(fields[1])
            remote, remote_port = decode_address(fields[2])
            state = fields[3]
            if len(state) != 2 or not is_hex(state):
                raise Done(OTHER, "unreadable state in %s: %r" % (name, state[:16]))
            if state.upper() not in (ESTABLISHED, SYN_RECV) or local_port != args.port:
                continue
            if args.local_address is not None and not same_address(local, args.local_address):
                continue
            if remote in LOOPBACK_PEERS:
                continue
            found.append(shown(remote, remote_port))
    return found


def same_address(local, wanted):
    """An IPv4 client of a dual-stack listener shows up in tcp6 as ::ffff:a.b.c.d."""
    return plain(local) == plain(wanted)


def plain(address):
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped if mapped is not None else address


def shown(address, port):
    address = plain(address)
    return ("[%s]:%d" if address.version == 6 else "%s:%d") % (address, port)


def main(argv):
    try:
        args = parse_args(argv)
        found = peers(args)
        sys.stdout.write("peers %d\n" % len(found))
        for peer in found[:args.max_peers]:
            sys.stdout.write(peer + "\n")
        sys.stdout.flush()
        return OK
    except Done as e:
        code, why = e.code, str(e)
    except SystemExit:
        code, why = OTHER, "bad arguments"
    except BaseException as e:
        code, why = OTHER, "%s: %s" % (type(e).__name__, e)
    sys.stderr.write(why + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
