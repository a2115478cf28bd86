#!/usr/bin/env python3
"""WRITE_ZEROES through `uraid serve` (tests/cli/test-serve-zeroes.sh runs
this): with FAST_ZERO the server answers ENOTSUP at once, changing nothing,
when the zeroes would have to be written (NO_HOLE; a part of a RAID 4/5/6
row), and zeroes by punching holes where it can; without FAST_ZERO every
request zeroes its range. Each case checks the whole region it touches
against what it must hold. Usage: nbd_zeroes.py SOCKET ROW_BYTES
Prints one line per case; exits 1 if any case failed.
"""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nbd_wire import (CMD_READ, CMD_WRITE, CMD_WRITE_ZEROES, ENOTSUP, FLAG_FAST_ZERO,  # noqa: E402
                      FLAG_FUA, FLAG_NO_HOLE, TFLAG_SEND_FAST_ZERO, Cases, connect, go,
                      recv_exact, reply, request)

sock_path, row = sys.argv[1], int(sys.argv[2])
SEED = 20261130
print("nbd_zeroes: seed %d" % SEED)
rng = random.Random(SEED)
cases = Cases()
s = connect(sock_path)
size, tflags = go(s)
region = 4 * row
assert size >= region, "the export is smaller than 4 rows"
cookie = 0


def call(typ, offset, length, flags=0, payload=b""):
    global cookie
    cookie += 1
    request(s, typ, offset, length, cookie, flags, payload)
    err, c = reply(s)
    assert c == cookie, "reply to cookie %d, %d expected" % (c, cookie)
    return err, recv_exact(s, length) if typ == CMD_READ and err == 0 else b""


# the region starts with random data; ref is what it must hold
ref = bytearray(rng.randbytes(region))
assert call(CMD_WRITE, 0, region, payload=bytes(ref))[0] == 0, "fill"


def holds(what):
    err, data = call(CMD_READ, 0, region)
    assert err == 0, "read: error %d" % err
    if data != bytes(ref):
        at = next(i for i in range(region) if data[i] != ref[i])
        raise AssertionError("%s: the region differs at byte %d" % (what, at))


def zeroes(offset, length, flags, want):
    err, _ = call(CMD_WRITE_ZEROES, offset, length, flags)
    assert err == want, "WRITE_ZEROES %d +%d flags %#x: error %d, %d expected" % (
        offset, length, flags, err, want)
    if err == 0:
        ref[offset:offset + length] = bytes(length)
    holds("after WRITE_ZEROES %d +%d flags %#x" % (offset, length, flags))


@cases.case("the export advertises FAST_ZERO")
def _():
    assert tflags & TFLAG_SEND_FAST_ZERO, "transmission flags %#x" % tflags


@cases.case("FAST_ZERO with NO_HOLE: ENOTSUP, nothing changed")
def _():
    zeroes(row, row, FLAG_FAST_ZERO | FLAG_NO_HOLE, ENOTSUP)


@cases.case("FAST_ZERO over part of a row: ENOTSUP, nothing changed")
def _():
    zeroes(4096, 8192, FLAG_FAST_ZERO, ENOTSUP)
    zeroes(row + 4096, row, FLAG_FAST_ZERO, ENOTSUP)


@cases.case("FAST_ZERO over whole rows: zeroed")
def _():
    zeroes(row, row, FLAG_FAST_ZERO, 0)
    zeroes(2 * row, 2 * row, FLAG_FAST_ZERO | FLAG_FUA, 0)


@cases.case("WRITE_ZEROES over part of a row, with and without NO_HOLE: zeroed")
def _():
    zeroes(4096, 8192, 0, 0)
    zeroes(row - 4096, 8192, FLAG_NO_HOLE, 0)
    zeroes(3 * row + 512, 1024, FLAG_NO_HOLE | FLAG_FUA, 0)


s.close()
sys.exit(1 if cases.failures else 0)
