#!/bin/bash
# uraid bench on NBD URIs: against `uraid serve` (a RAID 5 on /tmp files) and
# against an nbdkit memory export, both on Unix sockets. Runs of 0.3 s: each
# run's JSON has non-zero IOPS and the export's size as the server gives it;
# --verify writes and reads back through NBD without a mismatch (seed 7);
# writing needs --force-write; a read-only export (nbdkit -r, uraid serve
# --read-only) runs a read workload and refuses one that writes, with one line.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
need python3 nbdkit
work_dir bench-nbd
npid=
cleanup_nbdkit() { [ -n "$npid" ] && kill "$npid" 2>/dev/null; wait "$npid" 2>/dev/null; npid=; }

# figures NAME URI EXPECT_SIZE args...: the run succeeds, IOPS > 0, size as given
figures() {
    local name=$1 uri=$2 size=$3
    shift 3
    if ! "$URAID" bench --json --runtime=0.3 "$@" "$uri" >"$work/out.json" 2>"$work/err"; then
        check "$name: $(cat "$work/err")" false; return
    fi
    check "$name: IOPS > 0, size $size" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
r = j
s = json.dumps(j)
iops = r["total"]["iops"]
assert iops > 0, iops
assert sys.argv[2] in s, "size %s not in the JSON" % sys.argv[2]
' "$work/out.json" "$size"
}

# refused NAME PATTERN args...: exit non-zero, one line matching PATTERN
refused() {
    local name=$1 pat=$2
    shift 2
    "$URAID" bench --runtime=0.3 "$@" >/dev/null 2>"$work/err"
    local rc=$? msg
    msg=$(cat "$work/err")
    check "$name ($msg)" test $rc -ne 0 -a "$(wc -l <"$work/err")" -eq 1
    [[ $msg == *$pat* ]] || check "$name: wanted '$pat'" false
}

verified() {
    local name=$1
    shift
    if ! "$URAID" bench --json --verify --seed=7 --runtime=0.3 "$@" >"$work/out.json" 2>"$work/err"; then
        check "$name: $(cat "$work/err")" false; return
    fi
    check "$name: blocks checked" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["verify"]["blocks_checked"] > 0' "$work/out.json"
}

# --- nbdkit memory export
nbdkit --exit-with-parent -f -U "$work/mem.sock" memory 64M >>"$work/nbdkit.log" 2>&1 &
npid=$!
for _ in $(seq 100); do [ -S "$work/mem.sock" ] && break; sleep 0.1; done
mem="nbd+unix:///?socket=$work/mem.sock"
figures "nbdkit: 4 KiB randread QD 8" "$mem" 67108864 --rw=randread --iodepth=8
figures "nbdkit: randrw 2 workers x QD 4" "$mem" 67108864 --rw=randrw --numjobs=2 --iodepth=4 --force-write
figures "nbdkit: 128 KiB seq write" "$mem" 67108864 --rw=write --bs=128k --iodepth=2 --force-write
refused "nbdkit: writing without --force-write" "add --force-write" --rw=randwrite "$mem"
verified "nbdkit: --verify randrw 2 workers" --rw=randrw --numjobs=2 --iodepth=8 --force-write "$mem"
cleanup_nbdkit
nbdkit --exit-with-parent -f -r -U "$work/ro.sock" memory 16M >>"$work/nbdkit.log" 2>&1 &
npid=$!
for _ in $(seq 100); do [ -S "$work/ro.sock" ] && break; sleep 0.1; done
ro="nbd+unix:///?socket=$work/ro.sock"
figures "nbdkit -r: randread" "$ro" 16777216 --rw=randread --iodepth=4
refused "nbdkit -r: randwrite refused" "read-only" --rw=randwrite --force-write "$ro"
cleanup_nbdkit
refused "no server on the socket" "cannot connect" --rw=randread "nbd+unix:///?socket=$work/none.sock"
refused "an NBD URI with --array" "not NBD URIs" --array --rw=randread "$ro"

# --- uraid serve: a RAID 5 of 4 x 16 MiB (48 MiB of data, less its metadata)
m=()
for i in 0 1 2 3; do truncate -s 16M "$work/m$i.img"; m+=("$work/m$i.img"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --bitmap=none --assume-clean \
    --name=bn "${m[@]}" >/dev/null || exit 1
serve_bg "$work" bn "${m[@]}" || exit 1
srv="nbd+unix:///?socket=$work/bn.sock"
size=$(nbdinfo --size "$srv" 2>/dev/null || echo 0)
check "uraid serve: nbdinfo gives a size ($size)" test "$size" -gt 0
figures "uraid serve: 4 KiB randread QD 16" "$srv" "$size" --rw=randread --iodepth=16
figures "uraid serve: randrw 2 workers x QD 8" "$srv" "$size" --rw=randrw --numjobs=2 --iodepth=8 --force-write
verified "uraid serve: --verify randwrite then read back" --rw=randwrite --iodepth=8 --force-write "$srv"
out=$("$URAID" check --wait bn 2>&1); rc=$?
check "and the array's parity matches ($out)" test $rc -eq 0
check "stopped" stop_served bn
serve_bg "$work" bnro --read-only "${m[@]}" || exit 1
figures "uraid serve --read-only: randread" "nbd+unix:///?socket=$work/bnro.sock" "$size" --rw=randread
refused "uraid serve --read-only: write refused" "read-only" --rw=write --force-write \
    "nbd+unix:///?socket=$work/bnro.sock"
check "stopped" stop_served bn
echo "$fails failed"
[ $fails -eq 0 ]
