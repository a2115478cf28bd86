#!/bin/bash
# uraid bench --verify on tmpfs: runs that write and read (raw files with two
# workers sharing one file, a RAID 5 the run creates) find no mismatch and
# check blocks; then one block of a file is corrupted behind the tool's back,
# and a read-only --verify run exits non-zero with one line naming the offset
# and what was expected and found. A block copied to the wrong place and a
# run with another seed are caught too. Runs of 0.3 s each.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "skip: needs a writable /dev/shm"; exit 77; }
work=$(mktemp -d /dev/shm/uraid-bench-verify.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# verified NAME args...: the run succeeds and checked some blocks
verified() {
    local name=$1
    shift
    if ! "$URAID" bench --json --verify --runtime=0.3 "$@" >"$work/out.json" 2>"$work/err"; then
        fail "$name: $(cat "$work/err")"; return
    fi
    n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verify"]["blocks_checked"])' "$work/out.json")
    if [ "$n" -gt 0 ]; then echo "ok $name: $n blocks checked"; else fail "$name: no block checked"; fi
}

# refused NAME PATTERN args...: exit 1, one line on stderr matching PATTERN
refused() {
    local name=$1 pat=$2
    shift 2
    "$URAID" bench --verify --runtime=0.3 "$@" >/dev/null 2>"$work/err"
    local rc=$? msg
    msg=$(cat "$work/err")
    if [ $rc -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && [[ $msg == *$pat* ]]; then
        echo "ok $name: $msg"
    else
        fail "$name: exit $rc, '$msg' (wanted '$pat')"
    fi
}

f=$work/v.img
verified "randwrite, read back at the end" --rw=randwrite --size=8M --iodepth=8 "$f"
verified "randrw 2 workers on one file" --rw=randrw --bssplit=4k/50:16k/50 --iodepth=16 \
    --numjobs=2 --force-write "$f"
# QD 1: each I/O a pread/pwrite in the worker (target_raw_sync.c); 2 workers too
verified "randrw QD 1 (pread/pwrite), 2 workers" --rw=randrw --bssplit=4k/50:16k/50 --iodepth=1 \
    --numjobs=2 --force-write "$f"
m="$work/m0 $work/m1 $work/m2 $work/m3"
# shellcheck disable=SC2086
verified "raid5 randrw 4k..128k" --array --level=5 --chunk=64K --member-size=16M --rw=randrw \
    --bssplit=4k/40:16k/30:128k/30 --iodepth=16 --numjobs=2 $m
# shellcheck disable=SC2086
verified "raid5 file-server profile" --array --profile=file-server --iodepth=8 --force-write $m

# every block of the file written with a header, then read back clean
verified "sequential fill" --rw=write --bs=128k --iodepth=4 --runtime=0.5 --force-write "$f"
verified "sequential read of it" --rw=read --bs=128k --iodepth=4 "$f"
# corrupt 4 bytes inside the 4 KiB block at 40960
printf 'XXXX' | dd of="$f" bs=1 seek=41060 conv=notrunc status=none
refused "corrupted block" "offset 40960: crc32c" --rw=read --bs=128k --iodepth=4 "$f"
# block 2 copied over block 20 (a misdirected write)
dd if="$f" of="$f" bs=4096 skip=2 seek=20 count=1 conv=notrunc status=none
refused "misplaced block" "offset 81920: expected the block written for offset 81920, found the one for offset 8192" \
    --rw=read --bs=4k --offset=80k --size=4k "$f"
# the same corruption found by a QD 1 read (pread) as by io_uring
refused "misplaced block, QD 1" "offset 81920: expected the block written for offset 81920" \
    --rw=read --bs=4k --iodepth=1 --offset=80k --size=4k "$f"
refused "another seed" "expected seed 7, found seed 1" --rw=read --bs=128k --seed=7 \
    --offset=1M --size=1M "$f"
"$URAID" bench --verify --replay=/dev/null "$f" >/dev/null 2>&1 && fail "--verify with --replay accepted"
[ $fails -eq 0 ] && echo "all verify checks passed"
[ $fails -eq 0 ]
