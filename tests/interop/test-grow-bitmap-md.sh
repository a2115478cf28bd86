#!/bin/bash
# Referee for `grow --size` with an internal bitmap, both ways, in one boot:
#  J  uraid serves a RAID 1 of 4 MiB per member with a 4 KiB bitmap chunk
#     (8 sectors reserved) whose members hold different random bytes past
#     the old end (only a resync of the grown range makes them agree),
#     writes it, grows it to the members' room (39936
#     KiB: 9984 bits fit the 8 sectors, the chunk stays), writes past the old
#     end and stops: md assembles it, reads the bitmap (4 KB chunk, sync size
#     39936), its check finds 0 mismatches and the array reads the bytes;
#  L  md grows the same array as uraid made it: it keeps 4 KB too;
#  K  md grows its own array (sectors_reserved 0: the chunk doubles to
#     32 KiB): uraid serves the result with the bitmap md resized, reads
#     md's bytes, and its check finds 0 mismatches;
#  M  metadata 1.0: uraid adds a bitmap to a served RAID 1 made without one
#     (16 sectors below the superblock, under the bad-block log, as mdadm's
#     add_internal_bitmap1): md assembles it with the bitmap at -16, reads
#     the bytes, writes 1 MiB, its check finds 0; uraid reads md's write;
#  R  RAID 10 near=2 of 4 with a bitmap, grown by uraid grow --size=max
#     (8 -> 23 MiB per member): md assembles it at 47104 KiB, its bitmap's
#     sync size the array's (md's raid10 counts the bitmap in array
#     sectors), reads the bytes uraid wrote past the old end, check 0;
#  S  metadata 1.0 without a bitmap, the image files grown 24 -> 40 MiB:
#     uraid grow --size=max moves the superblock to the new end (md's
#     super_1_rdev_size_change): md finds it there, runs 40944 KiB, reads
#     the bytes, check 0.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_serving 20261202
need nbdinfo nbdcopy qemu-io
bm() { "$URAID" examine --json "$1" | python3 -c \
    'import json, sys; b = json.load(sys.stdin)[0]["bitmap"]; print(b["chunk_bytes"], b["sync_bytes"])'; }

# J: uraid grows
J=()
for i in 0 1; do truncate -s 40M "$tmp/j$i"; J+=("$tmp/j$i"); done
"$URAID" create --level=1 --raid-devices=2 --size=4M --bitmap=internal --bitmap-chunk=4K \
    --assume-clean --name=j "${J[@]}" >/dev/null
# data offset 1 MiB: the old end is at 5 MiB, the room ends at 40 MiB
for i in 0 1; do
    randfile $((SEED + 10 + i)) $((35 << 20)) "$tmp/j.garbage"
    dd if="$tmp/j.garbage" of="${J[$i]}" bs=1M seek=5 conv=notrunc status=none
done
rm -f "$tmp/j.garbage"
serve j "${J[@]}"
uri="nbd+unix:///?socket=$tmp/j.sock"
randfile "$SEED" $((4 << 20)) "$tmp/j.head"
nbdcopy "$tmp/j.head" "$uri"
out=$("$URAID" grow j --size=max 2>&1)
check "J: uraid grow --size=max with the bitmap: $out" test $? -eq 0
for _ in $(seq 300); do "$URAID" status j | grep -q "Background : none" && break; sleep 0.2; done
check "J: the grown range resynced, none of it passed over by the bitmap" \
    eval '! "$URAID" status j | grep -q "Bitmap Skip"'
randfile $((SEED + 1)) $((2 << 20)) "$tmp/j.tail"
qemu-io -f raw -c "write -q -s $tmp/j.tail $((30 << 20)) $((2 << 20))" "$uri" >/dev/null
check "J: 2 MiB written past the old end" test $? -eq 0
nbdcopy "$uri" "$tmp/j.want"
check "J: uraid exports 39936 KiB" test "$(stat -c %s "$tmp/j.want")" = $((39936 * 1024))
stop j
check "J: the bitmap on the members: 4 KiB chunk, 39936 KiB" test "$(bm "${J[0]}")" = "4096 $((39936 * 1024))"

# L: as uraid makes it, for md to grow
L=()
for i in 0 1; do truncate -s 40M "$tmp/l$i"; L+=("$tmp/l$i"); done
"$URAID" create --level=1 --raid-devices=2 --size=4M --bitmap=internal --bitmap-chunk=4K \
    --assume-clean --name=l "${L[@]}" >/dev/null

# K: md's disks
K=()
for i in 0 1; do truncate -s 40M "$tmp/k$i"; K+=("$tmp/k$i"); done
randfile $((SEED + 2)) $((4 << 20)) "$tmp/k.head"
randfile $((SEED + 3)) $((2 << 20)) "$tmp/k.tail"
truncate -s $((39936 * 1024)) "$tmp/k.want"
dd if="$tmp/k.head" of="$tmp/k.want" conv=notrunc status=none
dd if="$tmp/k.tail" of="$tmp/k.want" bs=1M seek=30 conv=notrunc status=none

# M: uraid adds a bitmap to a 1.0 array
M=()
for i in 0 1; do truncate -s 40M "$tmp/m$i"; M+=("$tmp/m$i"); done
"$URAID" create --level=1 --raid-devices=2 --metadata=1.0 --bitmap=none --assume-clean \
    --name=m "${M[@]}" >/dev/null
serve m "${M[@]}"
randfile $((SEED + 4)) $((4 << 20)) "$tmp/m.head"
randfile $((SEED + 5)) $((1 << 20)) "$tmp/m.tail"
nbdcopy "$tmp/m.head" "nbd+unix:///?socket=$tmp/m.sock"
out=$("$URAID" grow m --bitmap=internal 2>&1)
check "M: uraid grow --bitmap=internal on 1.0: $out" test $? -eq 0
stop m

# R: uraid grows a RAID 10's size
R=()
for i in 0 1 2 3; do truncate -s 24M "$tmp/r$i"; R+=("$tmp/r$i"); done
"$URAID" create --level=10 --layout=n2 --raid-devices=4 --chunk=64 --size=8M \
    --bitmap=internal --bitmap-chunk=64K --assume-clean --name=r "${R[@]}" >/dev/null
serve r "${R[@]}"
out=$("$URAID" grow r --size=max 2>&1)
check "R: uraid grow --size=max on RAID 10 n2: $out" test $? -eq 0
for _ in $(seq 300); do "$URAID" status r | grep -q "Background : none" && break; sleep 0.2; done
randfile $((SEED + 6)) $((2 << 20)) "$tmp/r.tail"
qemu-io -f raw -c "write -q -s $tmp/r.tail $((40 << 20)) $((2 << 20))" \
    "nbd+unix:///?socket=$tmp/r.sock" >/dev/null
check "R: 2 MiB written at 40 MiB, past the old end" test $? -eq 0
nbdcopy "nbd+unix:///?socket=$tmp/r.sock" "$tmp/r.want"
check "R: uraid exports 47104 KiB" test "$(stat -c %s "$tmp/r.want")" = $((47104 * 1024))
stop r

# S: a 1.0 array on grown images, its superblock moved by uraid
S=()
for i in 0 1; do truncate -s 24M "$tmp/s$i"; S+=("$tmp/s$i"); done
"$URAID" create --level=1 --raid-devices=2 --metadata=1.0 --bitmap=none --assume-clean \
    --name=s "${S[@]}" >/dev/null
serve s "${S[@]}"
randfile $((SEED + 7)) $((4 << 20)) "$tmp/s.head"
nbdcopy "$tmp/s.head" "nbd+unix:///?socket=$tmp/s.sock"
truncate -s 40M "${S[@]}"
out=$("$URAID" grow s --size=max 2>&1)
check "S: uraid grow --size=max on 1.0 after the images grew: $out" test $? -eq 0
for _ in $(seq 300); do "$URAID" status s | grep -q "Background : none" && break; sleep 0.2; done
qemu-io -f raw -c "write -q -s $tmp/s.head $((30 << 20)) $((4 << 20))" \
    "nbd+unix:///?socket=$tmp/s.sock" >/dev/null
check "S: 4 MiB written at 30 MiB, past the old end" test $? -eq 0
nbdcopy "nbd+unix:///?socket=$tmp/s.sock" "$tmp/s.want"
check "S: uraid exports 40944 KiB" test "$(stat -c %s "$tmp/s.want")" = $((40944 * 1024))
stop s

cat >"$tmp/guest.sh" <<'GUEST'
rc=0
wait_idle() { while [ "$(cat /sys/block/$1/md/sync_action)" != idle ]; do sleep 0.2; done; }
echo 200000 >/proc/sys/dev/raid/speed_limit_max
mdadm --assemble --run /dev/md0 /dev/vda /dev/vdb >/dev/null 2>&1 || { echo "J: assemble failed"; rc=1; }
echo "J bitmap $(mdadm -X /dev/vda | sed -n 's/ *Chunksize : //p')/$(mdadm -X /dev/vda | sed -n 's/ *Sync Size : \([0-9]*\).*/\1/p')"
echo "J size=$(blockdev --getsize64 /dev/md0)"
sleep 0.5; wait_idle md0
echo check >/sys/block/md0/md/sync_action
sleep 0.5; wait_idle md0
echo "J mismatch_cnt=$(cat /sys/block/md0/md/mismatch_cnt)"
echo "J sha=$(sha256sum </dev/md0 | cut -d' ' -f1)"
mdadm --stop /dev/md0 >/dev/null 2>&1
mdadm --assemble --run /dev/md2 /dev/vde /dev/vdf >/dev/null 2>&1 || { echo "L: assemble failed"; rc=1; }
mdadm --grow /dev/md2 --size=max >/dev/null 2>&1 || { echo "L: grow failed"; rc=1; }
echo "L bitmap $(mdadm -X /dev/vde | sed -n 's/ *Chunksize : //p')"
mdadm --stop /dev/md2 >/dev/null 2>&1
mdadm --create /dev/md1 --run --assume-clean --level=1 --raid-devices=2 --size=4M --metadata=1.2 \
    --bitmap=internal --bitmap-chunk=4K /dev/vdc /dev/vdd >/dev/null 2>&1 || { echo "K: create failed"; rc=1; }
dd if=/host/k.head of=/dev/md1 bs=1M conv=fsync 2>/dev/null || { echo "K: write failed"; rc=1; }
mdadm --grow /dev/md1 --size=max >/dev/null 2>&1 || { echo "K: grow failed"; rc=1; }
sleep 0.5; wait_idle md1
dd if=/host/k.tail of=/dev/md1 bs=1M seek=30 conv=fsync 2>/dev/null || { echo "K: write failed"; rc=1; }
echo "K bitmap $(mdadm -X /dev/vdc | sed -n 's/ *Chunksize : //p')"
mdadm --stop /dev/md1 >/dev/null 2>&1
mdadm --assemble --run /dev/md3 /dev/vdg /dev/vdh >/dev/null 2>&1 || { echo "M: assemble failed"; rc=1; }
echo "M location=$(cat /sys/block/md3/md/bitmap/location) chunk=$(mdadm -X /dev/vdg | sed -n 's/ *Chunksize : //p')"
echo "M head=$(head -c 4194304 /dev/md3 | sha256sum | cut -d' ' -f1)"
dd if=/host/m.tail of=/dev/md3 bs=1M seek=8 conv=fsync 2>/dev/null || { echo "M: write failed"; rc=1; }
echo check >/sys/block/md3/md/sync_action
sleep 0.5; wait_idle md3
echo "M mismatch_cnt=$(cat /sys/block/md3/md/mismatch_cnt)"
mdadm --stop /dev/md3 >/dev/null 2>&1
mdadm --assemble --run /dev/md4 /dev/vdi /dev/vdj /dev/vdk /dev/vdl >/dev/null 2>&1 ||
    { echo "R: assemble failed"; rc=1; }
echo "R size=$(blockdev --getsize64 /dev/md4) sync=$(mdadm -X /dev/vdi | sed -n 's/ *Sync Size : \([0-9]*\).*/\1/p')"
sleep 0.5; wait_idle md4
echo check >/sys/block/md4/md/sync_action
sleep 0.5; wait_idle md4
echo "R mismatch_cnt=$(cat /sys/block/md4/md/mismatch_cnt)"
echo "R sha=$(sha256sum </dev/md4 | cut -d' ' -f1)"
mdadm --stop /dev/md4 >/dev/null 2>&1
mdadm --assemble --run /dev/md5 /dev/vdm /dev/vdn >/dev/null 2>&1 || { echo "S: assemble failed"; rc=1; }
echo "S size=$(blockdev --getsize64 /dev/md5) super=$(mdadm --examine /dev/vdm | sed -n 's/ *Super Offset : \([0-9]*\).*/\1/p')"
sleep 0.5; wait_idle md5
echo check >/sys/block/md5/md/sync_action
sleep 0.5; wait_idle md5
echo "S mismatch_cnt=$(cat /sys/block/md5/md/mismatch_cnt)"
echo "S sha=$(sha256sum </dev/md5 | cut -d' ' -f1)"
mdadm --stop /dev/md5 >/dev/null 2>&1
exit $rc
GUEST

out=$(interop_run -f "$tmp/k.head" -f "$tmp/k.tail" -f "$tmp/m.tail" "$tmp/guest.sh" \
    "${J[@]}" "${K[@]}" "${L[@]}" "${M[@]}" "${R[@]}" "${S[@]}")
rc=$?
echo "$out"
check "guest script ran (exit $rc)" test $rc -eq 0
check "J: md reads uraid's resized bitmap: 4 KB chunks over 39936 KiB" \
    grep -q "^J bitmap 4 KB/39936$" <<<"$out"
check "L: md keeps the 4 KB chunk of the same array as uraid did" grep -q "^L bitmap 4 KB$" <<<"$out"
check "J: md's array is 39936 KiB" grep -q "^J size=$((39936 * 1024))$" <<<"$out"
check "J: md's check finds 0 mismatches" grep -q "^J mismatch_cnt=0$" <<<"$out"
check "J: md reads the bytes uraid wrote" \
    grep -q "^J sha=$(sha256sum <"$tmp/j.want" | cut -d' ' -f1)$" <<<"$out"

check "K: md resized its bitmap to 32 KB chunks" grep -q "^K bitmap 32 KB$" <<<"$out"
check "K: uraid sees md's bitmap: 32 KiB chunk, 39936 KiB" test "$(bm "${K[0]}")" = "32768 $((39936 * 1024))"
serve k --name=k "${K[@]}"
nbdcopy "nbd+unix:///?socket=$tmp/k.sock" "$tmp/k.read"
check "K: uraid reads the bytes md wrote" cmp -s "$tmp/k.read" "$tmp/k.want"
"$URAID" check --wait k >/dev/null
check "K: uraid's check finds 0 mismatches" test $? -eq 0
stop k

check "M: md runs uraid's 1.0 bitmap at -16 with 64 MB chunks" \
    grep -q "^M location=-16 chunk=64 MB$" <<<"$out"
check "M: md reads the bytes uraid wrote" \
    grep -q "^M head=$(sha256sum <"$tmp/m.head" | cut -d' ' -f1)$" <<<"$out"
check "M: md's check finds 0 mismatches" grep -q "^M mismatch_cnt=0$" <<<"$out"
check "M: mdadm's superblock checksums correct" \
    eval 'mdadm --examine "${M[0]}" | grep -q "Checksum : .* - correct"'
serve m "${M[@]}"
check "M: uraid reads md's write at 8 MiB" \
    eval 'nbdcopy "nbd+unix:///?socket=$tmp/m.sock" - | head -c $((9 << 20)) | tail -c $((1 << 20)) |
          cmp -s - "$tmp/m.tail"'
"$URAID" check --wait m >/dev/null
check "M: uraid's check finds 0 mismatches" test $? -eq 0
stop m

check "R: md runs uraid's grown RAID 10 at 47104 KiB, bitmap sync size the same" \
    grep -q "^R size=$((47104 * 1024)) sync=47104$" <<<"$out"
check "R: md's check finds 0 mismatches" grep -q "^R mismatch_cnt=0$" <<<"$out"
check "R: md reads the bytes uraid wrote" \
    grep -q "^R sha=$(sha256sum <"$tmp/r.want" | cut -d' ' -f1)$" <<<"$out"
check "S: md finds the moved 1.0 superblock at 81904 and runs 40944 KiB" \
    grep -q "^S size=$((40944 * 1024)) super=81904$" <<<"$out"
check "S: md's check finds 0 mismatches" grep -q "^S mismatch_cnt=0$" <<<"$out"
check "S: md reads the bytes uraid wrote" \
    grep -q "^S sha=$(sha256sum <"$tmp/s.want" | cut -d' ' -f1)$" <<<"$out"
exit $fails
