#!/bin/bash
# A RAID 5 reshape 3 -> 4 members on a served array (grow-core's engine
# reshape; `uraid grow` starts it once it restripes, until then the helper
# tests/tools/reshape_start does, through the library):
#  1. served RAID 5 of 3 image files, fio writes the whole array (crc32c
#     verify headers, seeded), a 4th image added with `uraid add`, stopped;
#  2. reshape_start starts the reshape and stops it after its first
#     checkpoint: mdadm --examine shows the array in mid-reshape;
#  3. `uraid serve` assembles it and goes on by itself; fio verifies every
#     block through NBD while the reshape runs; kill -9 of the server
#     half-way;
#  4. served again, it goes on from the checkpoint on disk and finishes:
#     fio verifies again, the size is the new one, `uraid check` finds 0
#     mismatches, mdadm --examine shows 4 devices and no reshape.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
TOOL=$(realpath "$BUILD/tests/tools/reshape_start")
. "$(dirname "$0")/lib/common.sh"
need fio nbdinfo mdadm
[ -x "$TOOL" ] || { echo "$TOOL not built (make $BUILD/tests/tools/reshape_start)"; exit 77; }
work=$(mktemp -d /tmp/uraid-grow-reshape.XXXXXX)
export URAID_RUN_DIR=$work/run
SEED=${SEED:-20261202}
echo "seed $SEED, work in $work"
fails=0
spid=
cleanup() { [ -n "$spid" ] && kill -9 "$spid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
serve() { serve_bg "$work" s "$@"; }
fio_job() {   # the same job each time: same offsets, same data
    (cd "$work" && fio --ioengine=nbd --uri="nbd+unix:///?socket=$work/s.sock" --rw=randwrite \
        --bssplit=4k/50:64k/50 --iodepth=8 --verify=crc32c --verify_fatal=1 \
        --randseed="$SEED" --size="$size" --name=reshape "$@" >"$work/fio.out" 2>&1)
}
examine() { mdadm --examine "$work/m0" >"$work/examine" 2>&1; }
has() { grep -q "$1" "$work/examine"; }

m=()
for i in 0 1 2 3; do truncate -s 64M "$work/m$i"; m+=("$work/m$i"); done
"$URAID" create --level=5 --raid-devices=3 --chunk=64 --bitmap=none --name=rg \
    "${m[@]:0:3}" >/dev/null
serve "${m[@]:0:3}" || exit 1
old_bytes=$(nbdinfo --size "nbd+unix:///?socket=$work/s.sock")
size=$((old_bytes / 1048576))M
fio_job --do_verify=0 --end_fsync=1
check "fio wrote the array ($size)" grep -q "err= 0" "$work/fio.out"
check "uraid add the 4th member" "$URAID" add rg "$work/m3"
stop_served rg >/dev/null; spid=

out=$("$TOOL" --raid-devices=4 --speed-kib=4000 --stop-at=1 "${m[@]}" 2>&1)
echo "  $out"
check "the reshape started and stopped after a checkpoint" grep -q "stopped at" <<<"$out"
examine
grep -E "Feature Map|Raid Devices|Data Offset|New Offset|Reshape|Delta" "$work/examine" | sed 's/^/  /'
check "mdadm sees it in mid-reshape (delta 1, a new offset)" \
    eval "has \"Reshape pos'n\" && has 'Delta Devices : 1' && has 'New Offset'"
pos1=$(sed -n "s/.*Reshape pos'n : \([0-9]*\).*/\1/p" "$work/examine")

serve "${m[@]}" || exit 1
"$URAID" tune rg --speed-min=1000 --speed-max=4000 >/dev/null
for _ in $(seq 600); do grep -q "reshape started" "$work/s.err" && break; sleep 0.05; done
check "served in mid-reshape, the reshape went on by itself" grep -q "reshape started" "$work/s.err"
fio_job --verify_only
check "every block verifies through NBD during the reshape" grep -q "err= 0" "$work/fio.out"
check "the reshape was still running then" \
    bash -c "'$URAID' status rg | grep -q 'Background : reshape'"
"$URAID" status rg | grep -E "Background|Reshape" | sed 's/^/  /'
kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
examine
pos2=$(sed -n "s/.*Reshape pos'n : \([0-9]*\).*/\1/p" "$work/examine")
echo "  checkpoints: $pos1 KiB after the helper, ${pos2:-none} KiB at the kill"
check "killed in mid-reshape, the checkpoint moved on" \
    bash -c "[ -n '$pos2' ] && [ '$pos2' -gt '$pos1' ]"

serve "${m[@]}" || exit 1
"$URAID" tune rg --speed-max=200000 >/dev/null
for _ in $(seq 600); do grep -q "reshape done" "$work/s.err" && break; sleep 0.1; done
check "after the kill it went on from the checkpoint and finished" grep -q "reshape done" "$work/s.err"
fio_job --verify_only
check "every block verifies after the reshape" grep -q "err= 0" "$work/fio.out"
new_bytes=$(nbdinfo --size "nbd+unix:///?socket=$work/s.sock" 2>/dev/null || echo 0)
echo "  size $old_bytes -> $new_bytes bytes (served again)"
out=$("$URAID" check --wait rg); rc=$?
check "uraid check finds 0 mismatches ($out)" test $rc -eq 0
stop_served rg >/dev/null; spid=
serve "${m[@]}" || exit 1
new_bytes=$(nbdinfo --size "nbd+unix:///?socket=$work/s.sock")
check "the array is larger: 3 data members ($old_bytes -> $new_bytes bytes)" \
    test "$new_bytes" -eq $((old_bytes * 3 / 2))
stop_served rg >/dev/null; spid=
examine
grep -E "Feature Map|Raid Devices|Data Offset|Array Size" "$work/examine" | sed 's/^/  /'
check "mdadm --examine: 4 devices, no reshape" \
    eval "has 'Raid Devices : 4' && ! has \"Reshape pos'n\""
echo "$fails failed"
[ $fails -eq 0 ]
