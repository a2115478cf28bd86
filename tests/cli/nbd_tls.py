#!/usr/bin/env python3
"""NBD_OPT_STARTTLS on the wire against `uraid serve` (test-serve-tls.sh runs
this). Usage:

  nbd_tls.py require SOCKET CA_CERT   server: --tls=require with x509 certificates
  nbd_tls.py off SOCKET               server: --tls=off (the default)
  nbd_tls.py hold SOCKET CA_CERT      hold a TLS session until the server stops
  nbd_tls.py refused SOCKET CA_CERT   server at --max-connections, --tls=require

`require` checks the FORCEDTLS rules of doc/proto.md: every option before
STARTTLS but ABORT gets NBD_REP_ERR_TLS_REQD, NBD_OPT_EXPORT_NAME before TLS
closes, STARTTLS with data is invalid; and that plaintext sent behind
STARTTLS is never read as an option once TLS is up (an injection), that a
second STARTTLS is refused and that TLS_REQD is never sent over TLS.
Prints one line per case; exits 1 if any case failed.
"""
import os
import socket
import ssl
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nbd_wire import (IHAVEOPT, OPT_GO, REP_MAGIC, Cases, closed,  # noqa: E402
                      connect, recv_exact)

OPT_EXPORT_NAME, OPT_ABORT, OPT_LIST, OPT_STARTTLS, OPT_INFO = 1, 2, 3, 5, 6
OPT_STRUCTURED_REPLY = 8
REP_ACK, REP_SERVER, REP_INFO = 1, 2, 3
ERR = 1 << 31
ERR_UNSUP, ERR_POLICY, ERR_INVALID, ERR_TLS_REQD = ERR | 1, ERR | 2, ERR | 3, ERR | 5

mode, sock_path = sys.argv[1], sys.argv[2]
cases = Cases()
case = cases.case


def start():
    s = connect(sock_path)
    magic, opt_magic, _ = struct.unpack(">QQH", recv_exact(s, 18))
    assert (magic, opt_magic) == (0x4E42444D41474943, IHAVEOPT), "greeting"
    s.sendall(struct.pack(">I", 1))                 # FIXED_NEWSTYLE
    return s


def option(opt, data=b""):
    return struct.pack(">QII", IHAVEOPT, opt, len(data)) + data


def go_data(name=b""):
    return struct.pack(">I", len(name)) + name + struct.pack(">H", 0)


def rep(s):
    """One option reply: (option, type, data)."""
    magic, opt, rtype, length = struct.unpack(">QIII", recv_exact(s, 20))
    assert magic == REP_MAGIC, "reply magic %#x" % magic
    return opt, rtype, recv_exact(s, length)


def expect(s, opt, rtype):
    got = rep(s)
    assert got[:2] == (opt, rtype), "option %d: wanted reply %#x, got option %d reply %#x (%r)" % (
        opt, rtype, got[0], got[1], got[2])
    return got[2]


def go_over(s):
    """NBD_OPT_GO; the replies until ACK. Returns the export size."""
    s.sendall(option(OPT_GO, go_data()))
    size = None
    while True:
        opt, rtype, data = rep(s)
        assert opt == OPT_GO, "reply to option %d, not GO" % opt
        assert rtype != ERR_TLS_REQD, "NBD_REP_ERR_TLS_REQD sent over TLS"
        if rtype == REP_ACK:
            return size
        assert rtype == REP_INFO, "GO: reply %#x" % rtype
        if struct.unpack(">H", data[:2])[0] == 0:
            size = struct.unpack(">Q", data[2:10])[0]


if mode == "require":
    ca = sys.argv[3]

    def start_tls():
        s = start()
        s.sendall(option(OPT_STARTTLS))
        expect(s, OPT_STARTTLS, REP_ACK)
        return s

    def tls(s):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(ca)
        return ctx.wrap_socket(s, server_hostname="localhost")

    @case("require: every option before STARTTLS gets NBD_REP_ERR_TLS_REQD")
    def _():
        s = start()
        for opt, data in ((OPT_LIST, b""), (OPT_STRUCTURED_REPLY, b""), (OPT_INFO, go_data()),
                          (OPT_GO, go_data()), (42, b"xyz"), (OPT_GO, go_data(b"nope"))):
            s.sendall(option(opt, data))
            msg = expect(s, opt, ERR_TLS_REQD)
            assert b"TLS" in msg, "message %r" % msg
        s.sendall(option(OPT_ABORT))
        expect(s, OPT_ABORT, REP_ACK)

    @case("require: NBD_OPT_EXPORT_NAME before TLS closes the connection, with no export data")
    def _():
        s = start()
        s.sendall(option(OPT_EXPORT_NAME, b""))
        assert closed(s), "still open"

    @case("require: STARTTLS with data is invalid, and the session goes on")
    def _():
        s = start()
        s.sendall(option(OPT_STARTTLS, b"x"))
        expect(s, OPT_STARTTLS, ERR_INVALID)
        s.sendall(option(OPT_LIST))
        expect(s, OPT_LIST, ERR_TLS_REQD)

    @case("require: plaintext behind STARTTLS is dropped, not answered over TLS")
    def _():
        s = start()
        # an attacker's LIST and GO ride in the same segment as STARTTLS
        s.sendall(option(OPT_STARTTLS) + option(OPT_LIST) + option(OPT_GO, go_data()))
        expect(s, OPT_STARTTLS, REP_ACK)
        t = tls(s)
        t.sendall(option(OPT_INFO, go_data()))
        opt, rtype, _ = rep(t)
        assert opt == OPT_INFO, "first reply over TLS answers option %d (injected)" % opt
        while rtype != REP_ACK:
            opt, rtype, _ = rep(t)
            assert opt == OPT_INFO, "reply to option %d" % opt
        size = go_over(t)
        assert size and size > 0, "export size %r" % size

    @case("require: STARTTLS over TLS is invalid; options work; no TLS_REQD after TLS")
    def _():
        s = start()
        s.sendall(option(OPT_STARTTLS))
        expect(s, OPT_STARTTLS, REP_ACK)
        t = tls(s)
        t.sendall(option(OPT_STARTTLS))
        expect(t, OPT_STARTTLS, ERR_INVALID)
        t.sendall(option(OPT_LIST))
        expect(t, OPT_LIST, REP_SERVER)
        expect(t, OPT_LIST, REP_ACK)
        t.sendall(option(OPT_ABORT))
        expect(t, OPT_ABORT, REP_ACK)

    @case("require: a READ over TLS returns the export's bytes (the first sector)")
    def _():
        s = start()
        s.sendall(option(OPT_STARTTLS))
        expect(s, OPT_STARTTLS, REP_ACK)
        t = tls(s)
        go_over(t)
        t.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 0, 77, 0, 4096))
        magic, err, cookie = struct.unpack(">IIQ", recv_exact(t, 16))
        assert (magic, err, cookie) == (0x67446698, 0, 77), (magic, err, cookie)
        data = recv_exact(t, 4096)
        want = open(sys.argv[4], "rb").read(4096)
        assert data == want, "first 4 KiB differ"
        t.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 2, 78, 0, 0))  # DISC

    @case("require: WRITE, DISC and close_notify in one send: the WRITE is done before the end")
    def _():
        # the spec: outstanding requests are handled before a disconnect;
        # here they arrive decrypted in the same batch as close_notify
        s = start()
        s.sendall(option(OPT_STARTTLS))
        expect(s, OPT_STARTTLS, REP_ACK)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(ca)
        inb, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
        t = ctx.wrap_bio(inb, outb, server_hostname="localhost")
        while True:
            try:
                t.do_handshake()
                break
            except ssl.SSLWantReadError:
                s.sendall(outb.read())
                inb.write(s.recv(65536))
        s.sendall(outb.read())

        def tread(n):
            b = b""
            while len(b) < n:
                try:
                    b += t.read(n - len(b))
                except ssl.SSLWantReadError:
                    k = s.recv(65536)
                    assert k, "closed"
                    inb.write(k)
            return b
        t.write(option(OPT_GO, go_data()))
        s.sendall(outb.read())
        while True:
            _, rtype, length = struct.unpack(">QIII", tread(20))[1:]
            tread(length)
            if rtype == REP_ACK:
                break
        pattern = bytes((i * 7 + 0x5A) & 0xFF for i in range(4096))
        t.write(struct.pack(">IHHQQI", 0x25609513, 0, 1, 1, 1 << 20, 4096) + pattern +
                struct.pack(">IHHQQI", 0x25609513, 0, 2, 2, 0, 0))
        try:
            t.unwrap()
        except ssl.SSLWantReadError:
            pass
        s.sendall(outb.read())              # one send: WRITE, DISC, close_notify
        s.settimeout(20)
        try:
            while s.recv(65536):
                pass
        except OSError:
            pass
        s.close()
        t = tls(start_tls())
        go_over(t)
        t.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 0, 3, 1 << 20, 4096))
        magic, err, cookie = struct.unpack(">IIQ", recv_exact(t, 16))
        assert (magic, err, cookie) == (0x67446698, 0, 3), (magic, err, cookie)
        assert recv_exact(t, 4096) == pattern, "the WRITE before close_notify was lost"
        t.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 2, 4, 0, 0))

    @case("require: garbage instead of a TLS handshake ends the session")
    def _():
        s = start()
        s.sendall(option(OPT_STARTTLS))
        expect(s, OPT_STARTTLS, REP_ACK)
        s.sendall(option(OPT_LIST) * 64)
        assert closed(s), "still open"
elif mode == "refused":
    # the server is at --max-connections: a client insisting on TLS gets
    # STARTTLS ACKed and hears why it is refused over TLS
    ca = sys.argv[3]

    @case("refused under require: STARTTLS ACKed, then GO gets ERR_POLICY and the reason over TLS")
    def _():
        s = start()
        s.sendall(option(OPT_STARTTLS))
        expect(s, OPT_STARTTLS, REP_ACK)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(ca)
        t = ctx.wrap_socket(s, server_hostname="localhost")
        t.sendall(option(OPT_GO, go_data()))
        msg = expect(t, OPT_GO, ERR_POLICY)
        assert b"too many connections" in msg, "reason %r" % msg
        t.sendall(option(OPT_ABORT))
        expect(t, OPT_ABORT, REP_ACK)
elif mode == "hold":
    # connect over TLS, enter transmission, read, then wait for the server
    # to end the session (the shell stops it): a close_notify, not a cut
    ca = sys.argv[3]

    @case("hold: the server ends a TLS session with close_notify when stopped")
    def _():
        s = start()
        s.sendall(option(OPT_STARTTLS))
        expect(s, OPT_STARTTLS, REP_ACK)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(ca)
        t = ctx.wrap_socket(s, server_hostname="localhost", suppress_ragged_eofs=False)
        go_over(t)
        t.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 0, 5, 0, 512))
        assert struct.unpack(">IIQ", recv_exact(t, 16))[1:] == (0, 5), "read reply"
        recv_exact(t, 512)
        print("holding", flush=True)
        t.settimeout(20)
        try:
            assert t.recv(1) == b"", "data after the read"
        except ssl.SSLEOFError:
            raise AssertionError("the connection was cut without close_notify")
elif mode == "off":
    @case("off: STARTTLS gets NBD_REP_ERR_POLICY and the plain session goes on")
    def _():
        s = start()
        s.sendall(option(OPT_STARTTLS))
        expect(s, OPT_STARTTLS, ERR_POLICY)
        s.sendall(option(OPT_LIST))
        expect(s, OPT_LIST, REP_SERVER)
        expect(s, OPT_LIST, REP_ACK)
        size = go_over(s)
        assert size and size > 0, "size %r" % size
else:
    sys.exit("usage: nbd_tls.py require|off SOCKET [CA_CERT FIRST_4K_FILE]")

sys.exit(1 if cases.failures else 0)
