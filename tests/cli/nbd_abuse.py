#!/usr/bin/env python3
"""Bad NBD clients against `uraid serve` (tests/cli/test-serve.sh runs this).

Each case opens its own connection, misbehaves, and checks the server's
answer: the spec's error reply where the connection can go on, a closed
connection where it cannot. Usage: nbd_abuse.py SOCKET EXPORT_SIZE
Prints one line per case; exits 1 if any case failed.
"""
import socket
import struct
import sys

NBDMAGIC = 0x4E42444D41474943
IHAVEOPT = 0x49484156454F5054
REP_MAGIC = 0x0003E889045565A9
REQ_MAGIC = 0x25609513
SIMPLE_MAGIC = 0x67446698
OPT_GO = 7
EINVAL, ENOSPC, EPERM = 22, 28, 1

sock_path, size = sys.argv[1], int(sys.argv[2])
failures = 0


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sock_path)
    return s


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        part = s.recv(n - len(buf))
        if not part:
            raise EOFError("closed after %d of %d bytes" % (len(buf), n))
        buf += part
    return buf


def closed(s):
    """True when the server closes the connection (EOF or reset) soon."""
    try:
        while True:
            if not s.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def go(s):
    """Fixed newstyle handshake with NBD_OPT_GO for the default export."""
    magic, opt_magic, flags = struct.unpack(">QQH", recv_exact(s, 18))
    assert magic == NBDMAGIC and opt_magic == IHAVEOPT, "greeting"
    s.sendall(struct.pack(">I", 3))                 # FIXED_NEWSTYLE | NO_ZEROES
    data = struct.pack(">I", 0) + struct.pack(">H", 0)
    s.sendall(struct.pack(">QII", IHAVEOPT, OPT_GO, len(data)) + data)
    while True:
        magic, opt, rtype, length = struct.unpack(">QIII", recv_exact(s, 20))
        assert magic == REP_MAGIC, "option reply magic"
        payload = recv_exact(s, length)
        if rtype == 1:                              # ACK
            return
        assert rtype == 3, "unexpected option reply %#x" % rtype


def request(s, typ, offset, length, cookie, flags=0, payload=b""):
    s.sendall(struct.pack(">IHHQQI", REQ_MAGIC, flags, typ, cookie, offset, length) + payload)


def reply(s):
    magic, err, cookie = struct.unpack(">IIQ", recv_exact(s, 16))
    assert magic == SIMPLE_MAGIC, "reply magic %#x" % magic
    return err, cookie


def case(name):
    def wrap(fn):
        global failures
        try:
            fn()
            print("ok: " + name)
        except Exception as e:                      # noqa: BLE001 - report any failure
            print("FAIL: %s: %s" % (name, e))
            failures += 1
    return wrap


@case("bad magic in the greeting's answer closes the connection")
def _():
    s = connect()
    recv_exact(s, 18)
    s.sendall(struct.pack(">I", 3) + struct.pack(">QII", 0x1234, OPT_GO, 0))
    assert closed(s), "still open"


@case("a 1 GiB option closes the connection")
def _():
    s = connect()
    recv_exact(s, 18)
    s.sendall(struct.pack(">I", 3) + struct.pack(">QII", IHAVEOPT, OPT_GO, 1 << 30))
    try:
        s.sendall(b"\0" * 4096)
    except (BrokenPipeError, ConnectionResetError):
        pass                                        # closed already: what we want
    assert closed(s), "a 1 GiB option was accepted"



@case("unknown command: EINVAL, and the connection goes on")
def _():
    s = connect(); go(s)
    request(s, 99, 0, 512, 7)
    assert reply(s) == (EINVAL, 7)
    request(s, 0, 0, 512, 8)
    err, cookie = reply(s)
    assert (err, cookie) == (0, 8)
    recv_exact(s, 512)


@case("read past the end: EINVAL; write past the end: ENOSPC, payload drained")
def _():
    s = connect(); go(s)
    request(s, 0, size, 512, 1)
    assert reply(s) == (EINVAL, 1)
    request(s, 1, size - 512, 1024, 2, payload=b"x" * 1024)
    assert reply(s) == (ENOSPC, 2)
    request(s, 3, 0, 0, 3)                          # FLUSH still understood
    assert reply(s) == (0, 3)


@case("misaligned offset and a length over 32 MiB: EINVAL")
def _():
    s = connect(); go(s)
    request(s, 0, 100, 512, 1)
    assert reply(s) == (EINVAL, 1)
    request(s, 0, 0, 64 << 20, 2)
    assert reply(s) == (EINVAL, 2)
    request(s, 3, 512, 0, 3)                        # FLUSH with an offset
    assert reply(s) == (EINVAL, 3)


@case("bad request magic closes the connection")
def _():
    s = connect(); go(s)
    s.sendall(struct.pack(">IHHQQI", 0xDEADBEEF, 0, 0, 1, 0, 512))
    assert closed(s), "still open"


@case("truncated header, then gone")
def _():
    s = connect(); go(s)
    s.sendall(struct.pack(">IHH", REQ_MAGIC, 0, 0))
    s.close()


@case("half a write payload, then gone (nothing is written)")
def _():
    s = connect(); go(s)
    request(s, 1, 0, 1 << 20, 1, payload=b"\xee" * (300 << 10))
    s.close()


@case("many reads in flight, then gone without reading the replies")
def _():
    s = connect(); go(s)
    for i in range(200):
        request(s, 0, (i * 65536) % (size - 65536), 65536, i)
    s.close()


@case("a handshake abandoned half-way")
def _():
    s = connect()
    recv_exact(s, 18)
    s.sendall(struct.pack(">I", 3) + struct.pack(">Q", IHAVEOPT)[:5])
    s.close()


sys.exit(1 if failures else 0)
