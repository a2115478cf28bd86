"""A minimal NBD client for the serve tests (nbd_abuse.py, nbd_zeroes.py):
the fixed newstyle handshake with NBD_OPT_GO, requests, simple replies, and
a runner for named cases that counts the failures."""
import socket
import struct

NBDMAGIC = 0x4E42444D41474943
IHAVEOPT = 0x49484156454F5054
REP_MAGIC = 0x0003E889045565A9
REQ_MAGIC = 0x25609513
SIMPLE_MAGIC = 0x67446698
OPT_GO = 7
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH, CMD_TRIM, CMD_WRITE_ZEROES = 0, 1, 2, 3, 4, 6
FLAG_FUA, FLAG_NO_HOLE, FLAG_FAST_ZERO = 1 << 0, 1 << 1, 1 << 4
TFLAG_SEND_FAST_ZERO = 1 << 11
EPERM, EINVAL, ENOSPC, ENOTSUP = 1, 22, 28, 95


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
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


def greeting(s):
    """Read and check the server's fixed newstyle greeting."""
    magic, opt_magic, _ = struct.unpack(">QQH", recv_exact(s, 18))
    assert magic == NBDMAGIC and opt_magic == IHAVEOPT, "greeting"


def opt_go_raw(s):
    """Greeting, then GO for the default export: (reply type, message) of
    the first reply that is not an INFO (1 and b"" for the ACK)."""
    greeting(s)
    data = struct.pack(">I", 0) + struct.pack(">H", 0)
    s.sendall(struct.pack(">I", 3) + struct.pack(">QII", IHAVEOPT, OPT_GO, len(data)) + data)
    while True:
        magic, _, rtype, length = struct.unpack(">QIII", recv_exact(s, 20))
        assert magic == REP_MAGIC, "option reply magic"
        payload = recv_exact(s, length)
        if rtype != 3:
            return rtype, payload


def go(s):
    """Fixed newstyle handshake with NBD_OPT_GO for the default export;
    returns (export size, transmission flags)."""
    greeting(s)
    s.sendall(struct.pack(">I", 3))                 # FIXED_NEWSTYLE | NO_ZEROES
    data = struct.pack(">I", 0) + struct.pack(">H", 0)
    s.sendall(struct.pack(">QII", IHAVEOPT, OPT_GO, len(data)) + data)
    size = tflags = None
    while True:
        magic, _, rtype, length = struct.unpack(">QIII", recv_exact(s, 20))
        assert magic == REP_MAGIC, "option reply magic"
        payload = recv_exact(s, length)
        if rtype == 1:                              # ACK
            return size, tflags
        assert rtype == 3, "unexpected option reply %#x" % rtype
        if struct.unpack(">H", payload[:2])[0] == 0:    # NBD_INFO_EXPORT
            size, tflags = struct.unpack(">QH", payload[2:12])


def request(s, typ, offset, length, cookie, flags=0, payload=b""):
    s.sendall(struct.pack(">IHHQQI", REQ_MAGIC, flags, typ, cookie, offset, length) + payload)


def reply(s):
    magic, err, cookie = struct.unpack(">IIQ", recv_exact(s, 16))
    assert magic == SIMPLE_MAGIC, "reply magic %#x" % magic
    return err, cookie


class Cases:
    """@cases.case("what it checks") runs the function at once and prints
    ok or FAIL with the reason; cases.failures counts the failures."""

    def __init__(self):
        self.failures = 0

    def case(self, name):
        def wrap(fn):
            try:
                fn()
                print("ok: " + name)
            except Exception as e:                  # noqa: BLE001 - report any failure
                print("FAIL: %s: %s" % (name, e))
                self.failures += 1
        return wrap
