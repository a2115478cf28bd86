#!/usr/bin/env python3
"""The client of tests/cli/test-cache-crash.sh: flush semantics of a
write-back cache across a crash of the server.

  cache_crash.py write SOCKET SEED DIR
      Phase A: random writes (4 KiB aligned, 4 KiB .. 256 KiB, 16 in flight,
      the same blocks written several times over), then FLUSH, whose reply is
      awaited. The image every byte must hold from then on is saved as
      DIR/flushed.img. Phase B: more writes of the same kind, never flushed,
      4 KiB .. 64 KiB within the even-numbered 256 KiB extents of the
      export, some of them FUA, until the connection breaks (the test kills the
      server with SIGKILL). Each phase-B write is logged in DIR/after.log
      before it is sent, and "ack" lines once its reply came. DIR/phase-b
      appears after 200 phase-B writes were acknowledged.
  cache_crash.py verify SOCKET SEED DIR
      Reads the whole export and checks every 4 KiB block (below).

What is asserted, per 4 KiB block of the export:
  - a block no phase-B write touched holds exactly its content at the FLUSH
    (the last phase-A data written to it, or what it held before phase A,
    read back first);
  - a block a phase-B write touched holds its content at the FLUSH or the
    data of one of the phase-B writes that covered it (sent, acknowledged or
    not): whole, never a mix within the block, never an older phase-A
    version, never anything else (every write covers whole 4 KiB blocks);
  - a block whose last phase-B write was FUA and acknowledged, with no
    phase-B write sent to it after that one, holds that FUA write's data.
Data of write N is random bytes from the seed (SEED * 1000003 + N): the
verifier regenerates them.
"""
import os
import random
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nbd_wire import (CMD_FLUSH, CMD_READ, CMD_WRITE, FLAG_FUA, connect, go,  # noqa: E402
                      recv_exact, reply, request)

BLOCK = 4096
IN_FLIGHT = 16
PHASE_A_WRITES = 1500
TFLAG_SEND_FLUSH, TFLAG_SEND_FUA = 1 << 2, 1 << 3


def data_of(seed, n, length):
    return random.Random(seed * 1000003 + n).randbytes(length)


def pick(rng, size):
    """A write: 4 KiB aligned, 4 KiB .. 512 KiB, within the export (512 KiB:
    write-back caches it on RAID 4/5/6 and destages it in whole rows)."""
    blocks = rng.choice((1, 1, 1, 2, 4, 8, 16, 32, 64, 128))
    blocks = min(blocks, size // BLOCK)
    off = rng.randrange(0, size // BLOCK - blocks + 1) * BLOCK
    return off, blocks * BLOCK


EXTENT = 256 << 10


def pick_b(rng, size):
    """A phase-B write: within one of the even 256 KiB extents, so that
    the odd ones (half the export) must hold exactly what was flushed."""
    blocks = rng.choice((1, 1, 1, 2, 4, 8, 16))
    ext = rng.randrange(0, size // EXTENT // 2) * 2
    off = ext * EXTENT + rng.randrange(0, EXTENT // BLOCK - blocks + 1) * BLOCK
    return off, blocks * BLOCK


class Pipe:
    """Requests with up to IN_FLIGHT outstanding; replies read by a thread."""

    def __init__(self, s):
        self.s = s
        self.slots = threading.Semaphore(IN_FLIGHT)
        self.lock = threading.Lock()
        self.pending = {}
        self.errors = []
        self.broken = False
        self.since_drain = set()
        self.reader = threading.Thread(target=self.read_replies, daemon=True)
        self.reader.start()

    def read_replies(self):
        try:
            while True:
                err, cookie = reply(self.s)
                with self.lock:
                    done = self.pending.pop(cookie)
                if err:
                    self.errors.append((cookie, err))
                if done:
                    done(err)
                self.slots.release()
        except (EOFError, OSError, AssertionError):
            self.broken = True
            # wake a sender blocked on a slot
            for _ in range(IN_FLIGHT):
                self.slots.release()

    def send(self, typ, off, length, cookie, flags=0, payload=b"", done=None):
        self.slots.acquire()
        if self.broken:
            raise EOFError("connection lost")
        with self.lock:
            self.pending[cookie] = done
        request(self.s, typ, off, length, cookie, flags, payload)

    def send_ordered(self, typ, off, length, cookie, flags=0, payload=b"", done=None):
        """NBD does not order requests in flight: a write that overlaps one
        sent since the last drain waits for every request before it."""
        blocks = range(off // BLOCK, (off + length) // BLOCK)
        if any(b in self.since_drain for b in blocks):
            self.drain()
            self.since_drain.clear()
        self.since_drain.update(blocks)
        self.send(typ, off, length, cookie, flags, payload, done)

    def drain(self):
        for _ in range(IN_FLIGHT):
            self.slots.acquire()
        if self.broken:
            raise EOFError("connection lost")
        for _ in range(IN_FLIGHT):
            self.slots.release()


def write(sock_path, seed, d):
    rng = random.Random(seed)
    s = connect(sock_path)
    s.settimeout(60)
    size, tflags = go(s)
    assert tflags & TFLAG_SEND_FLUSH and tflags & TFLAG_SEND_FUA, \
        "the export does not advertise FLUSH and FUA (flags %#x)" % tflags
    size -= size % BLOCK
    # what the export holds before (an earlier seed's data, or zeroes)
    image = read_all(s, size)
    p = Pipe(s)
    n = 0
    for _ in range(PHASE_A_WRITES):
        off, length = pick(rng, size)
        data = data_of(seed, n + 1, length)
        image[off:off + length] = data
        n += 1
        p.send_ordered(CMD_WRITE, off, length, n, payload=data)
    p.drain()
    assert not p.errors, "phase A write errors: %r" % p.errors[:4]
    flushed = []
    p.drain()
    p.send(CMD_FLUSH, 0, 0, n + 1, done=lambda err: flushed.append(err))
    p.drain()
    p.since_drain.clear()
    assert flushed == [0], "FLUSH failed: %r" % flushed
    with open(os.path.join(d, "flushed.img"), "wb") as f:
        f.write(image)
    print("phase A: %d writes, flushed (%d MiB export)" % (PHASE_A_WRITES, size >> 20))
    sys.stdout.flush()
    log = open(os.path.join(d, "after.log"), "w", buffering=1)
    log_lock = threading.Lock()
    acked = [0]

    def note(line):
        with log_lock:
            log.write(line)

    def acker(k):
        def done(err):
            if not err:
                note("ack %d\n" % k)
                acked[0] += 1
                if acked[0] == 200:
                    open(os.path.join(d, "phase-b"), "w").close()
        return done
    n += 1
    sent = 0
    try:
        while True:
            n += 1
            off, length = pick_b(rng, size)
            fua = rng.random() < 0.1
            note("w %d %d %d %d\n" % (n, off, length, int(fua)))
            p.send_ordered(CMD_WRITE, off, length, n, FLAG_FUA if fua else 0,
                   data_of(seed, n, length), done=acker(n))
            sent += 1
    except (EOFError, OSError):
        pass
    print("phase B: %d writes sent, %d acknowledged when the connection broke" % (sent, acked[0]))


def read_all(s, size):
    out = bytearray()
    chunk = 1 << 20
    cookie = 1
    for off in range(0, size, chunk):
        length = min(chunk, size - off)
        request(s, CMD_READ, off, length, cookie)
        err, c = reply(s)
        assert err == 0 and c == cookie, "read at %d: error %d" % (off, err)
        out += recv_exact(s, length)
        cookie += 1
    return out


def verify(sock_path, seed, d):
    image = open(os.path.join(d, "flushed.img"), "rb").read()
    size = len(image)
    # per block: the phase-B writes that covered it, in the order sent
    touched = {}
    writes = {}
    acks = set()
    for line in open(os.path.join(d, "after.log")):
        f = line.split()
        if f[0] == "w" and len(f) == 5:
            n, off, length, fua = map(int, f[1:])
            writes[n] = (off, length, fua)
            for b in range(off // BLOCK, (off + length) // BLOCK):
                touched.setdefault(b, []).append(n)
        elif f[0] == "ack" and len(f) == 2:
            acks.add(int(f[1]))
    s = connect(sock_path)
    s.settimeout(60)
    got_size, _ = go(s)
    assert got_size - got_size % BLOCK == size, "export size %d, was %d" % (got_size, size)
    got = read_all(s, size)
    # every phase-B write's data generated once: which blocks hold it
    holds = {}
    for n, (off, length, _) in writes.items():
        data = data_of(seed, n, length)
        for i in range(0, length, BLOCK):
            b = (off + i) // BLOCK
            if got[b * BLOCK:(b + 1) * BLOCK] == data[i:i + BLOCK]:
                holds.setdefault(b, set()).add(n)
    bad = []
    counts = {"untouched": 0, "flushed": 0, "new": 0, "fua": 0}
    for b in range(size // BLOCK):
        have = got[b * BLOCK:(b + 1) * BLOCK]
        old = image[b * BLOCK:(b + 1) * BLOCK]
        if b not in touched:
            counts["untouched"] += 1
            if have != old:
                bad.append("block %d (offset %d): no write after the flush, content changed" % (b, b * BLOCK))
            continue
        last = touched[b][-1]
        if writes[last][2] and last in acks:
            counts["fua"] += 1
            if last not in holds.get(b, ()):
                bad.append("block %d (offset %d): FUA write %d acknowledged, last sent there, not on disk"
                           % (b, b * BLOCK, last))
            continue
        if have == old:
            counts["flushed"] += 1
        elif b in holds:
            counts["new"] += 1
        else:
            bad.append("block %d (offset %d): neither its flushed content nor one of the %d writes after it"
                       % (b, b * BLOCK, len(touched[b])))
    print("verify: %d blocks not written after the flush intact; written after it: %d old, %d new, "
          "%d acknowledged FUA" % (counts["untouched"], counts["flushed"], counts["new"], counts["fua"]))
    for line in bad[:10]:
        print("  " + line)
    if bad:
        print("verify: %d bad blocks (what was read: %s)" % (len(bad), os.path.join(d, "read.img")))
        with open(os.path.join(d, "read.img"), "wb") as f:
            f.write(got)
        sys.exit(1)


if __name__ == "__main__":
    cmd, sock_path, seed, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    print("cache_crash %s: seed %d" % (cmd, seed))
    {"write": write, "verify": verify}[cmd](sock_path, seed, d)
