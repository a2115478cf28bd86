#!/usr/bin/env python3
"""Hostile and careless NBD clients, one connection per cycle, against
`uraid serve` (tests/cli/test-serve-soak.sh runs this beside fio).

Usage: soak_clients.py SOCKET CYCLES SEED REGION_OFFSET REGION_BYTES \
           MAX_CONNECTIONS HANDSHAKE_TIMEOUT PSK_FILE

Each cycle is one of: connect and vanish (with FIN or with RST), vanish in
the middle of an option, garbage before and after the handshake, a READ or a
WRITE sent and the connection closed without taking the reply, a WRITE whose
payload stops halfway, a handshake that stops after the greeting (these two
stay connected, at most MAX_STALLED at once, the oldest closed first), and a
well-behaved client that writes, reads back and compares. With TLS (the
server runs --tls=on with PSK_FILE): STARTTLS then garbage, STARTTLS then
a ClientHello cut short and gone, STARTTLS then silence, nbdinfo over
TLS-PSK to the end and nbdinfo killed part-way. Clients that write stay
inside REGION (fio uses the rest). Every OVERLIMIT_EVERY cycles, clients
are added until the server refuses one: it must do so at
MAX_CONNECTIONS at the latest, with NBD_REP_ERR_POLICY and the reason.
While the clients are refused, `$URAID status --json` must show the
connections at the limit. Checked: the server greets every client, closes the connection itself
after garbage or after the client's end of stream, closes a handshake that
stalls (in plaintext or in TLS) by itself within HANDSHAKE_TIMEOUT +
CUT_MARGIN seconds of the connect, and the well-behaved clients' data reads
back. Prints the seed, the count of each kind, the refusals and the
failures; exit 1 on any.
"""
import os
import random
import json
import signal
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nbd_wire import (CMD_DISC, CMD_FLUSH, CMD_READ, CMD_WRITE, IHAVEOPT,  # noqa: E402
                      OPT_GO, REP_MAGIC, REQ_MAGIC, closed, connect, go, greeting, opt_go_raw,
                      recv_exact, reply, request)

MAX_STALLED = 16            # with fio and the cycle's client, below --max-connections
CLOSE_TIMEOUT = 10          # seconds the server has to close after garbage or EOF
CUT_MARGIN = 8              # beyond --handshake-timeout, for a loaded machine
OVERLIMIT_EVERY = 50        # cycles between two rounds over the limit
OPT_STARTTLS = 5
REP_ACK = 1
REP_ERR_POLICY = (1 << 31) | 2

path, cycles, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
region_off, region_len = int(sys.argv[4]), int(sys.argv[5])
max_conns, hs_timeout, psk_file = int(sys.argv[6]), float(sys.argv[7]), sys.argv[8]
rng = random.Random(seed)
print("seed %d, %d cycles" % (seed, cycles))
counts, failures, stalled = {}, [], []
hs_stalled = []             # (socket, kind, connect time): the server must cut them
cut_secs = []               # how long after the connect the server cut each
refusals = []               # (clients served before the refusal, message)
cycle = -1


def fail(kind, why):
    failures.append("%s: %s" % (kind, why))
    print("FAIL: cycle %d (%s): %s" % (cycle, kind, why), flush=True)


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
    return "handshake"                  # kept open until the server cuts it


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


def starttls(s):
    """Greeting, flags, NBD_OPT_STARTTLS; its ACK (the server runs --tls=on)."""
    greeting(s)
    s.sendall(struct.pack(">I", 3) + struct.pack(">QII", IHAVEOPT, OPT_STARTTLS, 0))
    magic, opt, rtype, length = struct.unpack(">QIII", recv_exact(s, 20))
    assert magic == REP_MAGIC and opt == OPT_STARTTLS, "STARTTLS reply"
    assert rtype == REP_ACK and length == 0, "STARTTLS answered %#x" % rtype


# the start of a TLS ClientHello record (its length says 200 bytes)
CLIENT_HELLO = bytes([0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00, 0xc4, 0x03, 0x03])


def k_tls_garbage(s):
    starttls(s)
    junk = rng.randbytes(rng.randrange(1, 4096))
    if rng.random() < 0.5:
        junk = CLIENT_HELLO + junk      # a record header, then nonsense
    s.sendall(junk)
    s.shutdown(socket.SHUT_WR)
    expect_close(s, "garbage into the TLS handshake")
    s.close()


def k_tls_vanish(s):
    starttls(s)
    s.sendall(CLIENT_HELLO[:rng.randrange(1, len(CLIENT_HELLO) + 1)])
    vanish(s)


def k_tls_stall(s):
    starttls(s)
    return "handshake"


def nbdinfo(kill_after):
    uri = "nbds+unix://alice@/?socket=%s&tls-psk-file=%s" % (path, psk_file)
    p = subprocess.Popen(["nbdinfo", "--size", uri], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    if kill_after is None:
        out, err = p.communicate(timeout=60)
        return p.returncode, out, err
    time.sleep(kill_after)
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=60)
    return None


def k_tls_nbdinfo(s):
    s.close()                           # nbdinfo makes its own connection
    rc, out, err = nbdinfo(None)
    if rc != 0 or not out.strip().isdigit():
        fail("nbdinfo-tls", "exit %d: %s" % (rc, err.decode().strip()[-200:]))


def k_tls_nbdinfo_killed(s):
    s.close()
    nbdinfo(rng.random() * 0.05)


KINDS = [("vanish", k_vanish), ("vanish-in-option", k_vanish_option),
         ("garbage-before", k_garbage_before), ("garbage-after", k_garbage_after),
         ("read-and-vanish", k_read_vanish), ("write-and-vanish", k_write_vanish),
         ("stall-mid-payload", k_stall_payload), ("stall-in-handshake", k_stall_handshake),
         ("good", k_good), ("tls-garbage", k_tls_garbage), ("tls-vanish", k_tls_vanish),
         ("tls-stall", k_tls_stall), ("tls-nbdinfo", k_tls_nbdinfo),
         ("tls-nbdinfo-killed", k_tls_nbdinfo_killed)]


def reap_cut(block_oldest=False):
    """Stalled handshakes: each must see the server's EOF within
    hs_timeout + CUT_MARGIN of its connect. Removes those cut (and those
    overdue, counted as failures); with block_oldest, waits for the oldest."""
    now = time.monotonic()
    for i, (s, kind, t) in enumerate(list(hs_stalled)):
        left = t + hs_timeout + CUT_MARGIN - now
        wait = block_oldest and i == 0
        s.settimeout(max(left, 0.001) if wait else 0.0)
        try:
            eof = s.recv(1 << 16) == b""
            if not eof:
                fail(kind, "the server sent data to a stalled handshake")
        except (ConnectionResetError, BrokenPipeError):
            eof = True
        except (BlockingIOError, socket.timeout):
            eof = False
        age = time.monotonic() - t
        if eof:
            cut_secs.append(age)
        elif age > hs_timeout + CUT_MARGIN:
            fail(kind, "still open %.1f s after the connect (--handshake-timeout=%g)"
                 % (age, hs_timeout))
        else:
            continue
        s.close()
        hs_stalled.remove((s, kind, t))


def status():
    out = subprocess.run([os.environ["URAID"], "status", "--json", path],
                         capture_output=True, timeout=30, text=True)
    assert out.returncode == 0, "uraid status: %s" % out.stderr.strip()
    return json.loads(out.stdout)["server"]


def over_limit():
    """Clients added until one is refused: at max_conns at the latest (the
    stalled ones and fio count too), with ERR_POLICY and the reason, and
    uraid status shows the connections at the limit; then they all leave."""
    held, refused = [], None
    try:
        refused0 = status()["connections_refused"]
        reap_cut()
        cut0 = len(cut_secs)
        for _ in range(max_conns + 1):
            s = connect(path)
            held.append(s)
            rtype, msg = opt_go_raw(s)
            if rtype == REP_ACK:
                continue
            refused = (rtype, msg)
            break
        served = len(held) - (1 if refused else 0)
        # stalled handshakes the server cut by now no longer count (those
        # it cut after the refusal are left out too: a bound on the low side)
        reap_cut()
        others = len(stalled) + len(hs_stalled)
        if refused is None:
            fail("over-limit", "%d clients served beside %d stalled: none refused"
                 % (served, others))
            return
        rtype, msg = refused
        if rtype != REP_ERR_POLICY or b"too many connections" not in msg:
            fail("over-limit", "refused with %#x %r" % (rtype, msg))
        if served + others > max_conns:
            fail("over-limit", "%d served beside %d stalled: more than %d"
                 % (served, others, max_conns))
        # at the limit: only stalled handshakes the server cut meanwhile, and
        # fio between two passes, may be gone
        st = status()
        reap_cut()
        gone = len(cut_secs) - cut0 + 1
        if not max_conns - gone <= st["connections"] <= max_conns or \
                st["max_connections"] != max_conns or st["connections_refused"] <= refused0:
            fail("over-limit", "uraid status at the refusal: %d of %d connections, %d refused"
                 % (st["connections"], st["max_connections"], st["connections_refused"]))
        refusals.append((served, msg.decode()))
    except (AssertionError, EOFError, OSError) as e:
        fail("over-limit", repr(e))
    finally:
        for s in held:
            s.close()

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
        held = fn(s)
        if held == "handshake":
            hs_stalled.append((s, name, time.monotonic()))
        elif held:
            stalled.append(s)
        while len(stalled) + len(hs_stalled) > MAX_STALLED:
            if stalled:
                stalled.pop(0).close()
            else:
                reap_cut(block_oldest=True)
    except (ConnectionResetError, BrokenPipeError) as e:
        # a client that hangs up on the server, or sends it garbage, may well
        # see its connection reset: the well-behaved and the stalled may not
        if name == "good" or "stall" in name:
            fail(name, repr(e))
        s.close()
    except (AssertionError, EOFError, socket.timeout, OSError) as e:
        fail(name, repr(e))
        s.close()
    reap_cut()
    if rng.random() < 0.02:             # now and then the stalled ones go at once
        while stalled:
            stalled.pop().close()
    if cycle % OVERLIMIT_EVERY == OVERLIMIT_EVERY - 1:
        over_limit()
for s in stalled:
    s.close()
while hs_stalled:
    reap_cut(block_oldest=True)
print("kinds: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))
if cut_secs:
    print("stalled handshakes cut by the server: %d, %.1f-%.1f s after the connect"
          % (len(cut_secs), min(cut_secs), max(cut_secs)))
print("over the limit: %d rounds refused (served before: %s); message: %s"
      % (len(refusals), ",".join(str(n) for n, _ in refusals) or "-",
         refusals[0][1] if refusals else "-"))
print("%d failed" % len(failures))
sys.exit(1 if failures else 0)
