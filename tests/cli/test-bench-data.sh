#!/bin/bash
# What uraid bench writes, with fio's options: --zero_buffers writes zeroes,
# --buffer_pattern its bytes repeated from the start of every write (a file
# written through sequentially holds exactly that), the default random data
# does not compress; with --verify on a pattern the run checks clean, a
# read-only --verify pass finds every header, and the bytes after each
# header are the pattern. Runs of 0.5 s on tmpfs.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "skip: needs a writable /dev/shm"; exit 77; }
work=$(mktemp -d /dev/shm/uraid-bench-data.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0

# written NAME PYTHON-PATTERN-EXPR args...: a 4 MiB file the run creates and fills
# sequentially in 64 KiB writes holds, in every 64 KiB, the pattern from its start
# ("random": no 64 KiB block compresses)
written() {
    local name=$1 want=$2 f=$work/$RANDOM.img
    shift 2
    if ! "$URAID" bench --json --rw=write --bs=64k --size=4M --runtime=0.5 "$@" "$f" \
            >"$work/out.json" 2>"$work/err"; then
        echo "FAIL $name: $(cat "$work/err")"; fails=$((fails + 1)); return
    fi
    python3 - "$name" "$want" "$f" "$work/out.json" <<'PY' || fails=$((fails + 1))
import json, sys, zlib
name, want, path, out = sys.argv[1:5]
data = open(path, "rb").read()
d = json.load(open(out))
blocks = [data[i:i + 65536] for i in range(0, 4 << 20, 65536)]
if want == "random":
    # incompressible within a write (buffers are filled once: writes of a slot repeat)
    ok = all(len(zlib.compress(b)) >= len(b) for b in blocks) and d["workload"]["data"] == "random"
else:
    pat = eval(want)
    block = (pat * (65536 // len(pat) + 1))[:65536]
    ok = all(b == block for b in blocks)
    ok = ok and d["workload"]["data"] == ("zero" if pat == b"\0" else "pattern")
print("%s %s: %d blocks, workload.data %s" % ("ok" if ok else "FAIL", name, len(blocks),
                                              d["workload"]["data"]))
sys.exit(0 if ok else 1)
PY
}

written "--zero_buffers" 'b"\0"' --zero_buffers
written "--buffer_pattern=0xdeadbeef" 'b"\xde\xad\xbe\xef"' --buffer_pattern=0xdeadbeef
written "--buffer_pattern='\"abc\"'" 'b"abc"' --buffer_pattern='"abc"'
written "random data by default" random

# --verify on a pattern: the writing runs check clean, a read-only pass too, and the
# pattern follows every header (4 bytes: every write starts at a multiple of 4, so byte
# i of the file is pattern[i % 4] unless a header covers it)
f=$work/v.img
if "$URAID" bench --verify --rw=write --bs=64k --size=4M --runtime=0.5 --buffer_pattern=0xc0ffee00 \
        "$f" >/dev/null 2>"$work/err" &&
   "$URAID" bench --verify --rw=randrw --bs=16k --runtime=0.3 --buffer_pattern=0xc0ffee00 \
        --force-write "$f" >/dev/null 2>>"$work/err" &&
   "$URAID" bench --verify --rw=read --bs=64k --runtime=0.3 "$f" >/dev/null 2>>"$work/err" &&
   python3 - "$f" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
fill = b"\xc0\xff\xee\x00" * 1024
# the verify unit is 4 KiB (the largest dividing 64k and 16k), its header 40 bytes
for u in range(0, len(data), 4096):
    assert data[u:u + 4] == b"URVB", "no block header at %d" % u
    assert data[u + 40:u + 4096] == fill[40:], "the block at %d is not the pattern" % u
print("ok --verify with --buffer_pattern: %d blocks, each a header and the pattern" % (len(data) // 4096))
PY
then :; else echo "FAIL: --verify with --buffer_pattern: $(cat "$work/err")"; fails=$((fails + 1)); fi

[ $fails -eq 0 ] && echo "all data checks passed"
[ $fails -eq 0 ]
