#!/bin/bash
# Referee for nested RAID 50/60 (uraid create --level=50|60): uraid makes a
# RAID 50 (2 groups of 3) and a RAID 60 (2 groups of 4) on virtio images,
# serves each and writes a seeded pattern through NBD, with one member failed
# in group 0 of the RAID 60 while it is written (degraded, as md leaves it).
# In the guest md assembles the inner arrays from the disks, then the RAID 0
# from the inner /dev/md devices (md's own stacking: its superblock on their
# data), reads back the same bytes (sha256), and a check of each inner array
# finds mismatch_cnt 0 (the degraded one has nothing to check: skipped).
# The other way in the same boot: md creates a RAID 50 (two RAID 5 of 3,
# then a RAID 0 over /dev/md devices) on six more images and writes a
# pattern; uraid serves those images and reads the same bytes.
# Cheap on purpose (one boot, 12 MiB images): the arrays are made with
# --assume-clean on zeroed images (whose parity is right: zeroes), and the
# pattern then covers every byte, so every stripe's parity is uraid's (or
# md's) own writing, which the checks judge; the checks run side by side.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
command -v nbdcopy >/dev/null && command -v nbdinfo >/dev/null ||
    { echo "SKIP: nbdcopy/nbdinfo not installed"; exit 77; }
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
interop_tmpdir || exit 1
tmp=$INTEROP_TMP
interop_images "$tmp" 20 12M || exit 1
SEED=5060
echo "seed $SEED"
export URAID_RUN_DIR=$tmp/run
fail() { echo "FAIL: $*"; exit 1; }
d=("$tmp"/disk{0..19}.img)
# md's RAID 50: 8 MiB of numbered 16-byte lines
seq -f '%015.0f' 0 524287 >"$tmp/md50.pat"
md50_sum=$(sha256sum <"$tmp/md50.pat" | cut -d' ' -f1)

# name level first-disk count failed-disk(-: none)
sums=$tmp/sums
: >"$sums"
for spec in "r50 5 0 6 -" "r60 6 6 8 7"; do
    read -r name level first n failed <<<"$spec"
    m=("${d[@]:$first:$n}")
    "$URAID" create --level=${level}0 --groups=2 --chunk=64K --name=$name --assume-clean \
        "${m[@]}" \
        >/dev/null || fail "$name: create"
    "$URAID" serve --socket="$tmp/$name.sock" --threads=1 --pid-file="$tmp/$name.pid" \
        "${m[@]}" >"$tmp/$name.out" 2>&1 &
    pid=$!
    for _ in $(seq 300); do [ -s "$tmp/$name.pid" ] && break; sleep 0.1; done
    size=$(nbdinfo --size "nbd+unix:///?socket=$tmp/$name.sock") ||
        fail "$name: not served: $(cat "$tmp/$name.out")"
    [ "$failed" != - ] && { "$URAID" fail "${d[$failed]}" >/dev/null || fail "$name: fail"; }
    python3 -c 'import random, sys
r = random.Random(int(sys.argv[1])); left = int(sys.argv[2])
while left:
    k = min(left, 1 << 20); sys.stdout.buffer.write(r.randbytes(k)); left -= k' \
        $((SEED + level)) "$size" >"$tmp/$name.pat"
    nbdcopy "$tmp/$name.pat" "nbd+unix:///?socket=$tmp/$name.sock" || fail "$name: write"
    "$URAID" stop "$name" >/dev/null || kill "$pid"
    wait "$pid"
    echo "$name $size $(sha256sum <"$tmp/$name.pat" | cut -d' ' -f1)" >>"$sums"
done
cat "$sums"

cat >"$tmp/guest.sh" <<'GUEST'
# r50: vda..vdf (inner md10 vda-c, md11 vdd-f); r60: vdg..vdn (md20 vdg-j, md21 vdk-n)
mdadm --assemble /dev/md10 --run /dev/vda /dev/vdb /dev/vdc 2>&1
mdadm --assemble /dev/md11 --run /dev/vdd /dev/vde /dev/vdf 2>&1
mdadm --assemble /dev/md20 --run /dev/vdg /dev/vdh /dev/vdi /dev/vdj 2>&1
mdadm --assemble /dev/md21 --run /dev/vdk /dev/vdl /dev/vdm /dev/vdn 2>&1
mdadm --assemble /dev/md1 --run /dev/md10 /dev/md11 2>&1
mdadm --assemble /dev/md2 --run /dev/md20 /dev/md21 2>&1
cat /proc/mdstat
mdadm --detail /dev/md1 | grep -E 'Raid Level|Array Size|Name'
mdadm --detail /dev/md2 | grep -E 'Raid Level|Array Size|Name'
while read -r name size sum; do
    case $name in r50) dev=/dev/md1 ;; r60) dev=/dev/md2 ;; esac
    got=$(head -c "$size" "$dev" | sha256sum | cut -d' ' -f1)
    echo "sum-$name=$([ "$got" = "$sum" ] && echo same || echo differs)"
    echo "size-$name=$(blockdev --getsize64 $dev)"
done </host/sums
checked=
for md in md10 md11 md20 md21; do
    if [ "$(cat /sys/block/$md/md/degraded)" != 0 ]; then
        echo "check-$md=degraded"
        continue
    fi
    echo check >/sys/block/$md/md/sync_action
    checked="$checked $md"
done
sleep 1
for md in $checked; do
    mdadm --wait /dev/$md || true
    echo "check-$md=$(cat /sys/block/$md/md/mismatch_cnt)"
done
mdadm --stop /dev/md1 /dev/md2 /dev/md10 /dev/md11 /dev/md20 /dev/md21 2>&1
# md makes a RAID 50 on vdo..vdt for uraid to serve
# (zeroed images: --assume-clean is true of them; uraid reads md's layout)
mdadm --create /dev/md30 --run --level=5 --raid-devices=3 --chunk=64 --metadata=1.2 \
    --assume-clean /dev/vdo /dev/vdp /dev/vdq 2>&1
mdadm --create /dev/md31 --run --level=5 --raid-devices=3 --chunk=64 --metadata=1.2 \
    --assume-clean /dev/vdr /dev/vds /dev/vdt 2>&1
mdadm --create /dev/md3 --run --level=0 --raid-devices=2 --chunk=64 --metadata=1.2 \
    /dev/md30 /dev/md31 2>&1
dd if=/host/md50.pat of=/dev/md3 bs=1M conv=fsync 2>/dev/null
echo "md50-size=$(blockdev --getsize64 /dev/md3)"
mdadm --stop /dev/md3 /dev/md30 /dev/md31 2>&1
GUEST

out=$(interop_run -f "$sums" -f "$tmp/md50.pat" "$tmp/guest.sh" "${d[@]}")
rc=$?
echo "$out"
[ $rc = 0 ] || fail "guest script exit $rc"
for name in r50 r60; do
    grep -qx "sum-$name=same" <<<"$out" || fail "$name: md reads other bytes than uraid served"
    want=$(awk -v n=$name '$1 == n { print $2 }' "$sums")
    grep -qx "size-$name=$want" <<<"$out" || fail "$name: md's size differs from uraid's ($want)"
done
for md in md10 md11 md21; do
    grep -qx "check-$md=0" <<<"$out" || fail "$md: check did not find mismatch_cnt 0"
done
grep -qx "check-md20=degraded" <<<"$out" || fail "md20 (the RAID 60 group with a failed member) is not degraded in md"
# the other way: uraid serves md's RAID 50
m=("${d[@]:14:6}")
"$URAID" serve --socket="$tmp/md50.sock" --threads=1 --pid-file="$tmp/md50.pid" --read-only \
    "${m[@]}" >"$tmp/md50.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -s "$tmp/md50.pid" ] && break; sleep 0.1; done
size=$(nbdinfo --size "nbd+unix:///?socket=$tmp/md50.sock") ||
    fail "md's RAID 50: uraid does not serve it: $(cat "$tmp/md50.out")"
grep -qx "md50-size=$size" <<<"$out" || fail "md's RAID 50: uraid's size $size is not md's"
nbdcopy "nbd+unix:///?socket=$tmp/md50.sock" "$tmp/md50.read" || fail "md's RAID 50: read"
kill "$pid"; wait "$pid"
got=$(head -c "$(stat -c %s "$tmp/md50.pat")" "$tmp/md50.read" | sha256sum | cut -d' ' -f1)
[ "$got" = "$md50_sum" ] || fail "md's RAID 50: uraid reads other bytes than md wrote"
echo "PASS: md assembles uraid's RAID 50 and 60 (inner arrays, then the RAID 0 on them), same bytes, check 0; uraid serves md's RAID 50 with md's bytes"
