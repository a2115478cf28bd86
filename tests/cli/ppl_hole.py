#!/usr/bin/env python3
"""The client of test-ppl.sh's write-hole case (RAID 5, DATA_DISKS data
chunks of CHUNK bytes per row).

  ppl_hole.py write SOCKET SEED CHUNK DATA_DISKS
      Random writes (4 KiB aligned, 4..16 KiB, 16 in flight) into data
      chunk 1 of random rows only, until the connection breaks (the test
      kills the server with SIGKILL).
  ppl_hole.py verify SOCKET FILE CHUNK DATA_DISKS
      Reads the whole export; every 4 KiB block outside data chunk 1 of its
      row (never written since FILE was written) must equal FILE's. Prints
      "bad=N of M" and exits 1 when N > 0.

A row torn by the kill (chunk 1 written, parity not, or the other way)
whose member holding chunk 0 or 2 is then missing reads back wrong there
unless the parity was made whole first: the write hole.
"""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nbd_wire import CMD_READ, CMD_WRITE, connect, go, recv_exact, reply, request  # noqa: E402


def write(sock, seed, chunk, dd):
    rng = random.Random(seed)
    s = connect(sock)
    size, _ = go(s)
    rows = size // (chunk * dd)
    cookie = 0
    inflight = 0
    try:
        while True:
            while inflight < 16:
                length = rng.choice((4096, 8192, 16384))
                off = rng.randrange(rows) * chunk * dd + chunk + \
                    rng.randrange((chunk - length) // 4096 + 1) * 4096
                cookie += 1
                request(s, CMD_WRITE, off, length, cookie, payload=rng.randbytes(length))
                inflight += 1
            reply(s)
            inflight -= 1
    except Exception:                               # noqa: BLE001 - the kill ends it
        return 0


def verify(sock, path, chunk, dd):
    s = connect(sock)
    size, _ = go(s)
    ref = open(path, "rb")
    bad = total = 0
    step = 1 << 20
    for off in range(0, size, step):
        n = min(step, size - off)
        request(s, CMD_READ, off, n, 1)
        err, _ = reply(s)
        assert err == 0, "read error %d at %d" % (err, off)
        got = recv_exact(s, n)
        ref.seek(off)
        want = ref.read(n)
        for b in range(0, n, 4096):
            at = off + b
            if (at % (chunk * dd)) // chunk == 1:
                continue
            total += 1
            if got[b:b + 4096] != want[b:b + 4096]:
                bad += 1
    print("bad=%d of %d" % (bad, total))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "write":
        sys.exit(write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])))
    sys.exit(verify(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])))
