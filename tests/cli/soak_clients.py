#!/usr/bin/env python3
"""Hostile and careless NBD clients, one connection per cycle, against
`uraid serve` (tests/cli/test-serve-soak.sh runs this beside fio).

Usage: soak_clients.py SOCKET CYCLES SEED REGION_OFFSET REGION_BYTES

Each cycle is one of: connect and vanish (with FIN or with RST), vanish in
the middle of an option, garbage before and after the handshake, a READ or a
WRITE sent and the connection closed without taking the reply, a WRITE whose
payload stops halfway, a handshake that stops after the greeting (these two
stay connected, at most MAX_STALLED at once, the oldest closed first), and a
well-behaved client that writes, reads back and compares. Clients that
write stay inside REGION (fio uses the rest). Checked: the server greets
every client, closes the connection itself after garbage or after the
client's end of stream, and the well-behaved clients' data reads back.
Prints the seed, the count of each kind and the failures; exit 1 on any.
"""
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nbd_wire import (CMD_DISC, CMD_FLUSH, CMD_READ, CMD_WRITE, IHAVEOPT,  # noqa: E402
                      OPT_GO, REQ_MAGIC, closed, connect, go, recv_exact, reply, request)

MAX_STALLED = 16            # below --max-connections' default (64) with room to spare
CLOSE_TIMEOUT = 10          # seconds the server has to close after garbage or EOF

path, cycles, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
region_off, region_len = int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)
print("seed %d, %d cycles" % (seed, cycles))
counts, failures, stalled = {}, [], []


def fail(kind, why):
    failures.append("%s: %s" % (kind, why))
    print("FAIL: cycle %d (%s): %s" % (cycle, kind, why), flush=True)


def greeting(s):
    magic, opt_magic, _ = struct.unpack(">QQH", recv_exact(s, 18))
    assert magic == 0x4E42444D41474943 and opt_magic == IHAVEOPT, "bad greeting"


def region_extent(max_len):
    length = rng.randrange(1, max_len // 4096 + 1) * 4096
    off = region_off + rng.randrange(0, (region_len - length) // 4096 + 1) * 4096
    return off, length


def expect_close(s, kind):
    s.settimeout(CLOSE_TIMEOUT)
    if not closed(s):
        fail(kind, "the server kept the connection open %d s" % CLOSE_TIMEOUT)


def vanish(s):
    if rng.random() < 0.5:              # a reset rather than an orderly close
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def k_vanish(s):
    if rng.random() < 0.5:
        greeting(s)
    vanish(s)


def k_vanish_option(s):
    greeting(s)
    opt = struct.pack(">I", 3) + struct.pack(">QII", IHAVEOPT, OPT_GO, 6) + b"\0\0\0\0\0\0"
    s.sendall(opt[:rng.randrange(1, len(opt))])
    vanish(s)


def k_garbage_before(s):
    greeting(s)
    s.sendall(rng.randbytes(rng.randrange(1, 2048)))
    s.shutdown(socket.SHUT_WR)          # whatever the bytes meant, the stream ends here
    expect_close(s, "garbage before the handshake")
    s.close()


def k_garbage_after(s):
    go(s)
    junk = bytearray(rng.randbytes(rng.randrange(28, 8192)))
    if struct.unpack(">I", junk[:4])[0] == REQ_MAGIC:
        junk[0] ^= 0xff                 # not a request: the server must hang up
    s.sendall(bytes(junk))
    expect_close(s, "garbage after the handshake")
    s.close()


def k_read_vanish(s):
    go(s)
    off, length = region_extent(1 << 20)
    request(s, CMD_READ, off, length, 1)
    vanish(s)


def k_write_vanish(s):
    go(s)
    off, length = region_extent(256 << 10)
    request(s, CMD_WRITE, off, length, 1, payload=rng.randbytes(length))
    vanish(s)


def k_stall_payload(s):
    go(s)
    off, length = region_extent(256 << 10)
    request(s, CMD_WRITE, off, length, 1, payload=rng.randbytes(length // 2))
    return True                         # keep it open


def k_stall_handshake(s):
    greeting(s)
    return True


def k_good(s):
    go(s)
    off, length = region_extent(128 << 10)
    data = rng.randbytes(length)
    request(s, CMD_WRITE, off, length, 1, payload=data)
    err, cookie = reply(s)
    assert err == 0 and cookie == 1, "write: error %d" % err
    request(s, CMD_READ, off, length, 2)
    err, cookie = reply(s)
    assert err == 0 and cookie == 2, "read: error %d" % err
    back = recv_exact(s, length)
    if back != data:
        fail("good", "%d bytes at %d read back different" % (length, off))
    request(s, CMD_FLUSH, 0, 0, 3)
    err, _ = reply(s)
    assert err == 0, "flush: error %d" % err
    request(s, CMD_DISC, 0, 0, 4)
    expect_close(s, "good")
    s.close()


KINDS = [("vanish", k_vanish), ("vanish-in-option", k_vanish_option),
         ("garbage-before", k_garbage_before), ("garbage-after", k_garbage_after),
         ("read-and-vanish", k_read_vanish), ("write-and-vanish", k_write_vanish),
         ("stall-mid-payload", k_stall_payload), ("stall-in-handshake", k_stall_handshake),
         ("good", k_good)]

for cycle in range(cycles):
    # every kind in turn first, then at random
    name, fn = KINDS[cycle] if cycle < len(KINDS) else rng.choice(KINDS)
    counts[name] = counts.get(name, 0) + 1
    try:
        s = connect(path)
    except OSError as e:
        fail(name, "connect: %s" % e)
        continue
    try:
        if fn(s):
            stalled.append(s)
            if len(stalled) > MAX_STALLED:
                stalled.pop(0).close()
    except (ConnectionResetError, BrokenPipeError) as e:
        # a client that hangs up on the server, or sends it garbage, may well
        # see its connection reset: the well-behaved and the stalled may not
        if name == "good" or name.startswith("stall"):
            fail(name, repr(e))
        s.close()
    except (AssertionError, EOFError, socket.timeout, OSError) as e:
        fail(name, repr(e))
        s.close()
    if rng.random() < 0.02:             # now and then the stalled ones go at once
        while stalled:
            stalled.pop().close()
for s in stalled:
    s.close()
print("kinds: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))
print("%d failed" % len(failures))
sys.exit(1 if failures else 0)
