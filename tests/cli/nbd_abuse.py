#!/usr/bin/env python3
"""Bad NBD clients against `uraid serve` (tests/cli/test-serve.sh runs this).

Each case opens its own connection, misbehaves, and checks the server's
answer: the spec's error reply where the connection can go on, a closed
connection where it cannot. Usage: nbd_abuse.py SOCKET EXPORT_SIZE
Prints one line per case; exits 1 if any case failed.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nbd_wire import (EINVAL, ENOSPC, IHAVEOPT, OPT_GO, REQ_MAGIC, Cases,  # noqa: E402
                      closed, connect as connect_to, go, recv_exact, reply, request)

sock_path, size = sys.argv[1], int(sys.argv[2])
cases = Cases()
case = cases.case


def connect():
    return connect_to(sock_path)


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


sys.exit(1 if cases.failures else 0)
