#!/bin/bash
# Referee for a pool served whole (docs/pools.md, "Serving a pool"): uraid
# makes a pool on four images with a mirror (RAID 10) and a parity (RAID 5)
# volume, one `uraid serve --pool` serves both; a seeded pattern is written
# through each export, a drive is failed in every volume (uraid fail POOL
# DRIVE), a fifth image is added to the pool while it is served (each
# volume gets a partition on it and is rebuilt onto it, one at a time), and
# the server stops. In the guest, with the five disks (the failed one's
# stale partitions included), `mdadm --assemble --scan` starts both volumes
# complete (the spare's partitions in the failed drive's slots), each
# reads back the same bytes, and a check finds mismatch_cnt 0. Exit 0 pass,
# 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
interop_tmpdir || exit 1
tmp=$INTEROP_TMP
interop_images "$tmp" 5 64M || exit 1
SEED=2223
echo "seed $SEED"
export URAID_RUN_DIR=$tmp/run
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; exit 1; }
d=("$tmp"/disk{0,1,2,3}.img)
spare=$tmp/disk4.img

"$URAID" pool create tank "${d[@]}" >/dev/null || fail "pool create"
"$URAID" volume create tank m1 --resiliency=mirror --size=24M "${d[@]}" >/dev/null ||
    fail "volume create m1"
"$URAID" volume create tank p1 --resiliency=parity --size=24M "${d[@]}" >/dev/null ||
    fail "volume create p1"

"$URAID" serve --pool=tank --socket="$tmp/tank.sock" --threads=1 --pid-file="$tmp/tank.pid" \
    "${d[@]}" >"$tmp/tank.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -s "$tmp/tank.pid" ] && break; sleep 0.1; done
sums=$tmp/sums
: >"$sums"
n=0
for v in m1 p1; do
    n=$((n + 1))
    size=$(nbdinfo --size "nbd+unix:///$v?socket=$tmp/tank.sock") ||
        fail "$v: not served: $(cat "$tmp/tank.out")"
    python3 -c 'import random, sys
r = random.Random(int(sys.argv[1])); left = int(sys.argv[2])
while left:
    k = min(left, 1 << 20); sys.stdout.buffer.write(r.randbytes(k)); left -= k' \
        $((SEED + n)) "$size" >"$tmp/$v.pat"
    nbdcopy "$tmp/$v.pat" "nbd+unix:///$v?socket=$tmp/tank.sock" || fail "$v: write"
    echo "$v $size $(sha256sum <"$tmp/$v.pat" | cut -d' ' -f1)" >>"$sums"
done
cat "$sums"
"$URAID" fail tank "${d[1]}" || fail "uraid fail tank disk1"
truncate -s 64M "$spare"
"$URAID" pool add tank "$spare" "${d[@]}" || fail "pool add (served)"
degraded() { "$URAID" status --json "tank/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["degraded"])'; }
for _ in $(seq 600); do
    [ "$(degraded m1)" = 0 ] && [ "$(degraded p1)" = 0 ] && break
    sleep 0.2
done
[ "$(degraded m1)" = 0 ] && [ "$(degraded p1)" = 0 ] ||
    fail "not rebuilt: m1 $(degraded m1), p1 $(degraded p1) degraded"
for v in m1 p1; do
    nbdcopy "nbd+unix:///$v?socket=$tmp/tank.sock" "$tmp/$v.back" && cmp "$tmp/$v.pat" "$tmp/$v.back" ||
        fail "$v: not the same bytes after the rebuild"
done
"$URAID" stop tank >/dev/null || kill "$pid"
wait "$pid"
pid=

cat >"$tmp/guest.sh" <<'GUEST'
mdadm --assemble --scan --run 2>&1
cat /proc/mdstat
while read -r v size sum; do
    dev=/dev/md/$v
    [ -e "$dev" ] || dev=$(ls -d /dev/md/${v}* 2>/dev/null | head -n1)
    [ -n "$dev" ] && [ -e "$dev" ] || { echo "vol-$v=missing"; continue; }
    md=$(basename "$(readlink -f "$dev")")
    want=$(cat /sys/block/$md/md/raid_disks)
    have=$(cat /sys/block/$md/md/dev-*/state 2>/dev/null | grep -c in_sync)
    [ "$want" = "$have" ] && echo "complete-$v=yes" || echo "complete-$v=no ($have of $want)"
    # the spare (vde) took the failed drive's (vdb) slot
    ls /sys/block/$md/md/ | grep -q '^dev-vde' && echo "spare-$v=yes" || echo "spare-$v=no"
    got=$(dd if="$dev" bs=1M 2>/dev/null | head -c "$size" | sha256sum | cut -d' ' -f1)
    [ "$got" = "$sum" ] && echo "vol-$v=same" || echo "vol-$v=differs"
    echo check >/sys/block/$md/md/sync_action
    sleep 1
    mdadm --wait "$dev" || true
    echo "mismatch-$v=$(cat /sys/block/$md/md/mismatch_cnt)"
done </host/sums
mdadm --stop --scan
GUEST

out=$(interop_run -f "$sums" "$tmp/guest.sh" "${d[@]}" "$spare")
rc=$?
echo "$out"
[ $rc = 0 ] || fail "guest script exit $rc"
for v in m1 p1; do
    grep -qx "complete-$v=yes" <<<"$out" || fail "$v: md assembled it without every member"
    grep -qx "spare-$v=yes" <<<"$out" || fail "$v: the spare's partition is not a member in md"
    grep -qx "vol-$v=same" <<<"$out" || fail "$v: md did not read the bytes uraid wrote"
    grep -qx "mismatch-$v=0" <<<"$out" || fail "$v: md's check found mismatches"
done
echo "PASS: md assembled both volumes with the spare in the failed drive's place, same bytes, check 0"
