#!/usr/bin/env python3
"""NBD block status against `uraid serve`, on the wire (tests/cli/
test-serve-blockstatus.sh runs this).

  nbd_blockstatus.py write SOCKET SEED COUNT MAXLEN ALIGN REF
      writes COUNT seeded ranges (offsets and lengths multiples of ALIGN, at
      most MAXLEN bytes, in the first three quarters of the export) with
      random bytes, keeps the export's expected bytes in the file REF (zeroes
      elsewhere) and prints the written ranges as "offset length" lines,
      merged and sorted.
  nbd_blockstatus.py expect SIZE SPANS [RAID5_DISKS CHUNK MISSING_SLOT]
      the map the export must show: "offset length hole|data" lines, holes
      outside the written spans; with the last three, a left-symmetric
      RAID 5 without the member in MISSING_SLOT: every chunk whose data
      lives there is data too (it is read from parity).
  nbd_blockstatus.py nbdinfo FILE | qemu FILE
      the same lines from `nbdinfo --map` or `qemu-img map --output=json`
      output (neighbours of one kind merged).
  nbd_blockstatus.py wire SOCKET
      the protocol's cases: BLOCK_STATUS refused (EINVAL) before
      base:allocation is selected, REQ_ONE answered with one extent no
      longer than asked, a range past the end refused with an error chunk
      (structured replies), reads answered with OFFSET_DATA chunks, the
      extents of one reply consecutive and nonzero.
Prints one line per case; exits 1 if any case failed.
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nbd_wire import (CMD_READ, CMD_WRITE, EINVAL, IHAVEOPT, OPT_GO, REP_MAGIC,  # noqa: E402
                      Cases, connect, go, greeting, recv_exact, reply, request)

OPT_STRUCTURED_REPLY, OPT_LIST_META, OPT_SET_META = 8, 9, 10
REP_ACK, REP_INFO, REP_META = 1, 3, 4
CMD_BLOCK_STATUS, FLAG_REQ_ONE = 7, 1 << 3
STRUCT_MAGIC = 0x668E33EF
TYPE_NONE, TYPE_DATA, TYPE_BS, TYPE_ERROR = 0, 1, 5, (1 << 15) | 1
STATE_HOLE, STATE_ZERO = 1, 2


def option(s, opt, data=b""):
    s.sendall(struct.pack(">QII", IHAVEOPT, opt, len(data)) + data)
    replies = []
    while True:
        magic, o, rtype, length = struct.unpack(">QIII", recv_exact(s, 20))
        assert magic == REP_MAGIC and o == opt, "option reply magic/option"
        replies.append((rtype, recv_exact(s, length)))
        if rtype == REP_ACK or rtype & (1 << 31):
            return replies


def meta_data(queries, name=b""):
    d = struct.pack(">I", len(name)) + name + struct.pack(">I", len(queries))
    for q in queries:
        d += struct.pack(">I", len(q)) + q
    return d


def session(sock_path, structured=True, meta=True):
    """Handshake: structured replies and base:allocation as asked; GO.
    Returns (socket, export size, context id or None)."""
    s = connect(sock_path)
    greeting(s)
    s.sendall(struct.pack(">I", 3))
    ctx = None
    if structured:
        assert option(s, OPT_STRUCTURED_REPLY)[-1][0] == REP_ACK, "structured replies refused"
    if meta:
        reps = option(s, OPT_SET_META, meta_data([b"base:allocation"]))
        assert reps[-1][0] == REP_ACK, "SET_META_CONTEXT: %#x" % reps[-1][0]
        for rtype, payload in reps[:-1]:
            assert rtype == REP_META and payload[4:] == b"base:allocation", "context reply"
            ctx = struct.unpack(">I", payload[:4])[0]
    data = struct.pack(">IH", 0, 0)
    size = None
    for rtype, payload in option(s, OPT_GO, data):
        if rtype == REP_INFO and struct.unpack(">H", payload[:2])[0] == 0:
            size = struct.unpack(">Q", payload[2:10])[0]
    assert size, "no export size"
    return s, size, ctx


def chunks(s, cookie):
    """Structured reply chunks of one request: [(flags, type, payload)]."""
    out = []
    while True:
        magic, flags, typ, c, length = struct.unpack(">IHHQI", recv_exact(s, 20))
        assert magic == STRUCT_MAGIC, "structured reply magic %#x" % magic
        assert c == cookie, "cookie %d, %d expected" % (c, cookie)
        out.append((flags, typ, recv_exact(s, length)))
        if flags & 1:
            return out


def extents(payload):
    ctx = struct.unpack(">I", payload[:4])[0]
    body = payload[4:]
    assert len(body) % 8 == 0 and body, "block status payload of %d bytes" % len(payload)
    return ctx, [struct.unpack(">II", body[i:i + 8]) for i in range(0, len(body), 8)]


def write_ranges(sock_path, seed, count, maxlen, align, ref_path):
    print("nbd_blockstatus: seed %d" % seed, file=sys.stderr)
    rng = random.Random(seed)
    s, size = connect(sock_path), None
    size, _ = go(s)
    ref = bytearray(size)
    spans = []
    limit = size * 3 // 4
    for i in range(count):
        length = align * rng.randint(1, maxlen // align)
        off = align * rng.randrange(0, (limit - length) // align)
        data = rng.randbytes(length)
        request(s, CMD_WRITE, off, length, i + 1, 0, data)
        err, c = reply(s)
        assert err == 0 and c == i + 1, "write %d+%d: error %d" % (off, length, err)
        ref[off:off + length] = data
        spans.append((off, off + length))
    request(s, 2, 0, 0, 0)      # DISC
    with open(ref_path, "wb") as f:
        f.write(ref)
    spans.sort()
    merged = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    for a, b in merged:
        print(a, b - a)


def wire(sock_path):
    cases = Cases()
    case = cases.case

    @case("BLOCK_STATUS before base:allocation is selected: EINVAL, connection goes on")
    def _():
        s, size, _ = session(sock_path, meta=False)
        request(s, CMD_BLOCK_STATUS, 0, 4096, 7)
        ch = chunks(s, 7)
        assert ch[-1][1] == TYPE_ERROR, "chunk type %#x" % ch[-1][1]
        assert struct.unpack(">I", ch[-1][2][:4])[0] == EINVAL, "error value"
        request(s, CMD_READ, 0, 512, 8)
        ch = chunks(s, 8)
        assert ch[0][1] == TYPE_DATA and len(ch[0][2]) == 8 + 512, "read after it"

    @case("SET_META_CONTEXT before structured replies is refused")
    def _():
        s = connect(sock_path)
        greeting(s)
        s.sendall(struct.pack(">I", 3))
        reps = option(s, OPT_SET_META, meta_data([b"base:allocation"]))
        assert len(reps) == 1 and reps[0][0] == (1 << 31) | 3, "reply %#x" % reps[0][0]

    @case("LIST_META_CONTEXT with the base: wildcard lists base:allocation once")
    def _():
        s = connect(sock_path)
        greeting(s)
        s.sendall(struct.pack(">I", 3))
        reps = option(s, OPT_LIST_META, meta_data([b"base:", b"base:allocation", b"x-a:b"]))
        metas = [p for t, p in reps if t == REP_META]
        assert reps[-1][0] == REP_ACK and len(metas) == 1, "replies %r" % reps
        assert metas[0] == struct.pack(">I", 0) + b"base:allocation", "context %r" % metas[0]

    @case("a meta context option for another export: ERR_UNKNOWN")
    def _():
        s = connect(sock_path)
        greeting(s)
        s.sendall(struct.pack(">I", 3))
        option(s, OPT_STRUCTURED_REPLY)
        reps = option(s, OPT_SET_META, meta_data([b"base:allocation"], b"no-such-export"))
        assert reps[-1][0] == (1 << 31) | 6, "reply %#x" % reps[-1][0]

    @case("a query length past the option's end: ERR_INVALID, the session goes on")
    def _():
        s = connect(sock_path)
        greeting(s)
        s.sendall(struct.pack(">I", 3))
        option(s, OPT_STRUCTURED_REPLY)
        bad = struct.pack(">III", 0, 1, 0xFFFFFFF0) + b"base:allocation"
        reps = option(s, OPT_SET_META, bad)
        assert reps[-1][0] == (1 << 31) | 3, "reply %#x" % reps[-1][0]
        assert option(s, OPT_SET_META, meta_data([b"base:allocation"]))[-1][0] == REP_ACK

    @case("whole export: consecutive nonzero extents of known flags, one DONE chunk each")
    def _():
        s, size, ctx = session(sock_path)
        at, cookie = 0, 100
        while at < size:
            cookie += 1
            request(s, CMD_BLOCK_STATUS, at, min(size - at, 0xFFFFFE00), cookie)
            ch = chunks(s, cookie)
            assert len(ch) == 1 and ch[0][1] == TYPE_BS, "chunks %r" % [c[:2] for c in ch]
            c, ext = extents(ch[0][2])
            assert c == ctx, "context id %d, %d selected" % (c, ctx)
            for length, flags in ext:
                assert length and length % 512 == 0, "extent length %d" % length
                assert flags in (0, STATE_HOLE | STATE_ZERO), "flags %d" % flags
                at += length
            assert at <= size, "extents run past the end"

    @case("REQ_ONE: exactly one extent, no longer than asked")
    def _():
        s, size, _ = session(sock_path)
        for i, (off, length) in enumerate([(0, 512), (4096, 65536), (size - 1024, 1024),
                                           (0, size)]):
            request(s, CMD_BLOCK_STATUS, off, min(length, 0xFFFFFE00), 200 + i, FLAG_REQ_ONE)
            ch = chunks(s, 200 + i)
            assert len(ch) == 1 and ch[0][1] == TYPE_BS, "chunk type"
            _, ext = extents(ch[0][2])
            assert len(ext) == 1 and 0 < ext[0][0] <= length, "extents %r" % ext

    @case("past the end or misaligned: EINVAL error chunks; unknown flag: EINVAL")
    def _():
        s, size, _ = session(sock_path)
        for i, (off, length, fl) in enumerate([(size, 512, 0), (size - 512, 1024, 0),
                                               (100, 512, 0), (0, 0, 0), (0, 512, 1)]):
            request(s, CMD_BLOCK_STATUS, off, length, 300 + i, fl)
            ch = chunks(s, 300 + i)
            assert len(ch) == 1 and ch[0][1] == TYPE_ERROR, "case %d: type %#x" % (i, ch[0][1])
            assert struct.unpack(">I", ch[0][2][:4])[0] == EINVAL, "case %d: error" % i

    @case("reads with structured replies: one OFFSET_DATA chunk, DONE; errors as chunks")
    def _():
        s, size, _ = session(sock_path)
        request(s, CMD_READ, 8192, 4096, 400)
        ch = chunks(s, 400)
        assert len(ch) == 1 and ch[0][1] == TYPE_DATA, "read chunk"
        assert struct.unpack(">Q", ch[0][2][:8])[0] == 8192 and len(ch[0][2]) == 8 + 4096
        request(s, CMD_READ, size, 4096, 401)
        ch = chunks(s, 401)
        assert ch[-1][1] == TYPE_ERROR and struct.unpack(">I", ch[-1][2][:4])[0] == EINVAL

    @case("many BLOCK_STATUS requests in flight at once all answered, in any order")
    def _():
        s, size, _ = session(sock_path)
        n = 64
        for i in range(n):
            request(s, CMD_BLOCK_STATUS, (i * 65536) % size, 65536, 1000 + i)
        seen = set()
        for _ in range(n):
            magic, flags, typ, c, length = struct.unpack(">IHHQI", recv_exact(s, 20))
            recv_exact(s, length)
            assert magic == STRUCT_MAGIC and flags & 1 and typ == TYPE_BS, "reply"
            seen.add(c)
        assert seen == set(range(1000, 1000 + n)), "cookies"

    return cases.failures


def merged_lines(runs):
    out = []
    for off, length, hole in runs:
        if out and out[-1][2] == hole and out[-1][0] + out[-1][1] == off:
            out[-1][1] += length
        else:
            assert not out or out[-1][0] + out[-1][1] == off, "a gap before %d" % off
            out.append([off, length, hole])
    for off, length, hole in out:
        print(off, length, "hole" if hole else "data")


def expect(size, spans_path, degraded):
    data = [False] * (size // 512)
    for line in open(spans_path):
        off, length = map(int, line.split())
        for sec in range(off // 512, (off + length) // 512):
            data[sec] = True
    if degraded:
        n, chunk, missing = degraded
        for c in range(size // chunk):
            row, k = divmod(c, n - 1)
            pd = (n - 1) - row % n
            if (pd + 1 + k) % n == missing:
                for sec in range(c * chunk // 512, (c + 1) * chunk // 512):
                    data[sec] = True
    merged_lines((i * 512, 512, not d) for i, d in enumerate(data))


def from_nbdinfo(path):
    runs = []
    for line in open(path):
        f = line.split()
        if len(f) >= 3:
            runs.append((int(f[0]), int(f[1]), int(f[2]) & 1 == 1))
    merged_lines(runs)


def from_qemu(path):
    import json
    merged_lines((m["start"], m["length"], not m["data"] and m["zero"])
                 for m in json.load(open(path)))


if __name__ == "__main__":
    if sys.argv[1] == "expect":
        deg = tuple(map(int, sys.argv[4:7])) if len(sys.argv) > 4 else None
        expect(int(sys.argv[2]), sys.argv[3], deg)
        sys.exit(0)
    if sys.argv[1] == "nbdinfo":
        from_nbdinfo(sys.argv[2])
        sys.exit(0)
    if sys.argv[1] == "qemu":
        from_qemu(sys.argv[2])
        sys.exit(0)
    if sys.argv[1] == "write":
        write_ranges(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]),
                     int(sys.argv[6]), sys.argv[7])
        sys.exit(0)
    sys.exit(1 if wire(sys.argv[2]) else 0)
