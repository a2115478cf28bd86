#!/bin/bash
# Referee for pools (docs/pools.md): uraid makes a pool on four images and
# four volumes (mirror = RAID 10, simple = RAID 0 on two drives, parity =
# RAID 5, and g, a RAID 5 grown with `volume grow`: written on 3 drives,
# reshaped onto 4, then made larger with --size), writes a seeded pattern
# through each served volume, and stops.
# In the guest the kernel reads each virtio disk's GPT (the partitions
# appear), `mdadm --assemble --scan` starts every volume from its
# partitions, each reads back the same bytes, and a check of the redundant
# ones finds mismatch_cnt 0. Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
interop_tmpdir || exit 1
tmp=$INTEROP_TMP
interop_images "$tmp" 4 64M || exit 1
SEED=2222
echo "seed $SEED"
export URAID_RUN_DIR=$tmp/run
fail() { echo "FAIL: $*"; exit 1; }
d=("$tmp"/disk{0,1,2,3}.img)

"$URAID" pool create tank "${d[@]}" >/dev/null || fail "pool create"
"$URAID" volume create tank m1 --resiliency=mirror --size=24M "${d[@]}" >/dev/null ||
    fail "volume create m1"
"$URAID" volume create tank s1 --level=0 --size=16M --drives=2 "${d[@]}" >/dev/null ||
    fail "volume create s1"
"$URAID" volume create tank g --resiliency=parity --size=8M --drives=3 "${d[@]}" >/dev/null ||
    fail "volume create g"

sums=$tmp/sums
: >"$sums"
serve_write() {   # serve_write VOLUME N: the pattern of SEED+N over it, its sum in $sums
    local v=$1 n=$2 pid size
    "$URAID" serve --pool=tank --volume=$v --socket="$tmp/$v.sock" --threads=1 \
        --pid-file="$tmp/$v.pid" "${d[@]}" >"$tmp/$v.out" 2>&1 &
    pid=$!
    for _ in $(seq 300); do [ -s "$tmp/$v.pid" ] && break; sleep 0.1; done
    size=$(nbdinfo --size "nbd+unix:///$v?socket=$tmp/$v.sock") ||
        fail "$v: not served: $(cat "$tmp/$v.out")"
    python3 -c 'import random, sys
r = random.Random(int(sys.argv[1])); left = int(sys.argv[2])
while left:
    k = min(left, 1 << 20); sys.stdout.buffer.write(r.randbytes(k)); left -= k' \
        $((SEED + n)) "$size" >"$tmp/$v.pat"
    nbdcopy "$tmp/$v.pat" "nbd+unix:///$v?socket=$tmp/$v.sock" || fail "$v: write"
    "$URAID" stop "$v" >/dev/null || kill "$pid"
    wait "$pid"
    rm -f "$tmp/$v.pid"
    echo "$v $size $(sha256sum <"$tmp/$v.pat" | cut -d' ' -f1)" >>"$sums"
}
# g's bytes are written before it grows: md reads them where the reshape put them
serve_write g 4
"$URAID" volume grow tank g --drives=4 "${d[@]}" >/dev/null 2>"$tmp/grow.err" ||
    fail "volume grow g --drives=4: $(cat "$tmp/grow.err")"
"$URAID" volume grow tank g --size=20M "${d[@]}" >/dev/null 2>"$tmp/grow.err" ||
    fail "volume grow g --size=20M: $(cat "$tmp/grow.err")"
"$URAID" volume create tank p1 --resiliency=parity --size=max "${d[@]}" >/dev/null ||
    fail "volume create p1"

n=0
for v in m1 s1 p1; do
    n=$((n + 1))
    serve_write $v $n
done
cat "$sums"

cat >"$tmp/guest.sh" <<'GUEST'
echo "partitions=$(ls /sys/block/vda | grep -c '^vda[0-9]')"
mdadm --assemble --scan --run 2>&1
cat /proc/mdstat
while read -r v size sum; do
    dev=/dev/md/$v
    [ -e "$dev" ] || dev=$(ls -d /dev/md/${v}* 2>/dev/null | head -n1)
    [ -n "$dev" ] && [ -e "$dev" ] || { echo "vol-$v=missing"; continue; }
    md=$(basename "$(readlink -f "$dev")")
    # every slot present and in sync: --run would start a degraded volume too
    want=$(cat /sys/block/$md/md/raid_disks)
    have=$(cat /sys/block/$md/md/dev-*/state 2>/dev/null | grep -c in_sync)
    [ "$want" = "$have" ] && echo "complete-$v=yes" || echo "complete-$v=no ($have of $want)"
    got=$(dd if="$dev" bs=1M 2>/dev/null | head -c "$size" | sha256sum | cut -d' ' -f1)
    [ "$got" = "$sum" ] && echo "vol-$v=same" || echo "vol-$v=differs"
    if [ -e /sys/block/$md/md/sync_action ] && [ "$(cat /sys/block/$md/md/level)" != raid0 ]; then
        echo check >/sys/block/$md/md/sync_action
        sleep 1
        mdadm --wait "$dev" || true
        echo "mismatch-$v=$(cat /sys/block/$md/md/mismatch_cnt)"
    fi
done </host/sums
mdadm --stop --scan
GUEST

out=$(interop_run -f "$sums" "$tmp/guest.sh" "${d[@]}")
rc=$?
echo "$out"
[ $rc = 0 ] || fail "guest script exit $rc"
# vda (d0) holds the label and a partition of each of the four volumes
grep -q '^partitions=5$' <<<"$out" ||
    fail "the guest kernel did not see the GPT's five partitions on vda"
for v in m1 s1 p1 g; do
    grep -qx "complete-$v=yes" <<<"$out" || fail "$v: md assembled it without every member"
    grep -qx "vol-$v=same" <<<"$out" || fail "$v: md did not read the bytes uraid wrote"
done
for v in m1 p1 g; do
    grep -qx "mismatch-$v=0" <<<"$out" || fail "$v: md's check found mismatches"
done
echo "PASS: md assembled every volume (a grown one too) from the GPT partitions, same bytes, check 0"
