#!/bin/bash
# Backwards RAID 5 restripes with `uraid grow` on a served array, under fio
# with verify=crc32c (the members are used for 40 of their 64 MiB, so that
# there is more room after the data than before it):
#  1. chunk 512K -> 64K: mdadm would go backwards (the data offset up):
#     so does uraid (mdadm --examine: feature 0x20, a positive new offset);
#     fio verifies every block during it; kill -9 half-way; served again it
#     goes on from the checkpoint and finishes: fio verifies, `uraid check`
#     finds 0, mdadm --examine shows chunk 64K and no reshape;
#  2. 5 -> 4 members: refused before --array-size with md's reason; with
#     --array-size in the same command it shrinks the export first, then
#     restripes backwards; fio verifies during and after, `uraid check`
#     finds 0, the fifth member is a spare, mdadm --examine: 4 devices.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need fio nbdinfo mdadm
work=$(mktemp -d /tmp/uraid-grow-back.XXXXXX)
export URAID_RUN_DIR=$work/run
SEED=${SEED:-20261204}
echo "seed $SEED, work in $work"
fails=0
spid=
cleanup() { [ -n "$spid" ] && kill -9 "$spid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
serve() { serve_bg "$work" s "$@"; }
fio_job() {   # the same job each time: same offsets, same data
    (cd "$work" && fio --ioengine=nbd --uri="nbd+unix:///?socket=$work/s.sock" --rw=randwrite \
        --bssplit=4k/50:64k/50 --iodepth=8 --verify=crc32c --verify_fatal=1 \
        --randseed="$SEED" --size="$size" --name=back "$@" >"$work/fio.out" 2>&1)
}
examine() { mdadm --examine "$1" >"$work/examine" 2>&1; }
has() { grep -q "$1" "$work/examine"; }
wait_log() { for _ in $(seq "$2"); do grep -q "$1" "$work/s.err" && return 0; sleep 0.1; done; return 1; }

# 1. chunk 512K -> 64K
m=()
for i in 0 1 2 3; do truncate -s 64M "$work/m$i"; m+=("$work/m$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=512 --size=40M --bitmap=none --name=bk \
    "${m[@]}" >/dev/null
serve "${m[@]}" || exit 1
size=$(($(nbdinfo --size "nbd+unix:///?socket=$work/s.sock") / 1048576))M
fio_job --do_verify=0 --end_fsync=1
check "fio wrote the array ($size)" grep -q "err= 0" "$work/fio.out"
"$URAID" tune bk --speed-min=1000 --speed-max=3000 >/dev/null
out=$("$URAID" grow bk --chunk=64 2>&1)
check "uraid grow --chunk=64 started ($out)" grep -q "restripe" <<<"$out"
examine "${m[0]}"
grep -E "Feature Map|Data Offset|New Offset|Reshape|Chunk" "$work/examine" | sed 's/^/  /'
check "mdadm --examine: a backwards reshape (feature 0x20), the new offset above" \
    eval "has 'Feature Map : 0x6[4-7]' && grep -q 'New Offset : [1-9]' '$work/examine'"
fio_job --verify_only
check "every block verifies through NBD during the reshape" grep -q "err= 0" "$work/fio.out"
check "the reshape was still running then" \
    bash -c "'$URAID' status bk | grep -q 'Background : reshape'"
kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
examine "${m[0]}"
check "killed in mid-reshape: the superblocks say so" has "Reshape pos'n"
serve "${m[@]}" || exit 1
"$URAID" tune bk --speed-max=200000 >/dev/null
check "after the kill it went on from the checkpoint and finished" wait_log "reshape done" 1200
fio_job --verify_only
check "every block verifies after the reshape" grep -q "err= 0" "$work/fio.out"
out=$("$URAID" check --wait bk); rc=$?
check "uraid check finds 0 mismatches ($out)" test $rc -eq 0
stop_served bk >/dev/null; spid=
examine "${m[0]}"
grep -E "Feature Map|Data Offset|Chunk" "$work/examine" | sed 's/^/  /'
check "mdadm --examine: chunk 64K, no reshape" \
    eval "has 'Chunk Size : 64K' && ! has \"Reshape pos'n\""

# 2. 5 -> 4 members
: >"$work/s.err"        # the log of part 1 says "reshape done" already
m=()
for i in 0 1 2 3 4; do truncate -s 64M "$work/f$i"; m+=("$work/f$i"); done
"$URAID" create --level=5 --raid-devices=5 --chunk=64 --size=40M --bitmap=none --name=fw \
    "${m[@]}" >/dev/null
serve "${m[@]}" || exit 1
size=120M       # what 4 members hold: fio stays inside it
fio_job --do_verify=0 --end_fsync=1
check "fio wrote the first $size" grep -q "err= 0" "$work/fio.out"
out=$("$URAID" grow fw --raid-devices=4 2>&1); rc=$?
check "fewer members without --array-size refused with md's reason ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q -- '--array-size' <<<'$out'"
"$URAID" tune fw --speed-min=1000 --speed-max=3000 >/dev/null
out=$("$URAID" grow fw --array-size=120M --raid-devices=4 2>&1)
check "uraid grow --array-size=120M --raid-devices=4 started ($out)" grep -q "restripe" <<<"$out"
fio_job --verify_only
check "every block verifies through NBD during the reshape" grep -q "err= 0" "$work/fio.out"
"$URAID" tune fw --speed-max=200000 >/dev/null
check "the reshape finished" wait_log "reshape done" 1200
fio_job --verify_only
check "every block verifies after it" grep -q "err= 0" "$work/fio.out"
out=$("$URAID" check --wait fw); rc=$?
check "uraid check finds 0 mismatches ($out)" test $rc -eq 0
"$URAID" status fw >"$work/status"
check "4 slots, the fifth member a spare" \
    eval "grep -q 'Raid Devices : 4' '$work/status' && grep -qi 'spare.*$work/f4' '$work/status'" ||
    cat "$work/status"
stop_served fw >/dev/null; spid=
examine "${m[0]}"
check "mdadm --examine: 4 devices, no reshape" \
    eval "has 'Raid Devices : 4' && ! has \"Reshape pos'n\""
echo "$fails failed"
[ $fails -eq 0 ]
