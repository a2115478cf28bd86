#!/bin/bash
# Pools on block devices (loop devices over image files; root needed, else
# skipped): a volume served as ranges of the whole devices keeps off every
# uraid that wants a whole device (create, zero-superblock, pool create
# --force): they take a lock on all of it, which the served range's lock
# refuses, where O_EXCL alone let them write the served sectors. The images
# stay byte-identical through the refusals, and the served volume is deleted
# only once stopped.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
need losetup sha256sum
[ "$(id -u)" -eq 0 ] || { echo "not root: no loop devices"; exit 77; }
work_dir pool-block
cd "$work" || exit 1

truncate -s 64M b0.img b1.img
L0=$(losetup --show -f b0.img) || { echo "no loop device"; exit 77; }
L1=$(losetup --show -f b1.img) || { losetup -d "$L0"; echo "no loop device"; exit 77; }
spid=
cleanup() {
    [ -n "$spid" ] && { "$URAID" stop v1 >/dev/null 2>&1 || kill "$spid"; wait "$spid"; }
    losetup -d "$L0" "$L1"
}
trap cleanup EXIT

snapshot() { sha256sum b0.img b1.img; }
refuse() {   # refuse "message part" uraid-args...
    local want=$1; shift
    local before after out rc
    sync; before=$(snapshot)
    out=$("$URAID" "$@" 2>&1)
    rc=$?
    sync; after=$(snapshot)
    if [ $rc -eq 0 ]; then echo "FAIL: accepted: uraid $*"; fails=$((fails + 1)); return; fi
    if [[ $out != *"$want"* ]]; then
        echo "FAIL: uraid $*: expected '$want', got: $out"; fails=$((fails + 1)); return
    fi
    if [ "$before" != "$after" ]; then
        echo "FAIL: uraid $*: an image changed"; fails=$((fails + 1)); return
    fi
    echo "ok (exit $rc): $out"
}

check "pool create on two loop devices" "$URAID" pool create lb "$L0" "$L1"
check "volume create v1 (mirror)" "$URAID" volume create lb v1 --level=1 --size=8M "$L0" "$L1"
"$URAID" serve --pool=lb --volume=v1 --socket="$work/v1.sock" --pid-file="$work/v1.pid" \
    "$L0" "$L1" >"$work/v1.out" 2>&1 &
spid=$!
for _ in $(seq 100); do [ -s "$work/v1.pid" ] && break; sleep 0.1; done
check "v1 served from ranges of the loop devices" test -s "$work/v1.pid"

refuse "in use by another uraid" create --level=1 -n 2 --force "$L0" "$L1"
refuse "served array 'v1'" zero-superblock "$L0"
refuse "in use" pool create --force other "$L0"
refuse "volume 'v1' is in use" volume delete lb v1 "$L0" "$L1"

check "v1 stopped" bash -c "'$URAID' stop v1 >/dev/null && wait $spid 2>/dev/null; true"
wait "$spid" 2>/dev/null
spid=
check "volume delete once stopped" "$URAID" volume delete lb v1 "$L0" "$L1"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
