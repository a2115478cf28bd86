#!/bin/bash
# uraid grow on served arrays with metadata 1.0 (the superblock at the
# member's end, the data from sector 0), and --size on RAID 10:
#  - --bitmap=none then --bitmap=internal on a 1.0 RAID 1 made with a
#    bitmap: removed (feature 0x1 cleared), added back where mdadm's
#    add_internal_bitmap1 puts it on a running array (whole 4 KiB pages
#    ending right below the 8-sector bad-block log: -16 sectors from the
#    superblock for one page), fio's writes verified during the add, data
#    and check 0 after, served again with the bitmap;
#  - --bitmap=internal on a 1.0 RAID 1 made without one: in the 8 sectors
#    mdadm's create leaves above the bad-block log (the same place);
#  - --size=max on a 1.0 RAID 5 made with --size=8M: the size used grows to
#    the data area (rounded down to the chunk), the new part is resynced,
#    mdadm --examine shows Used Dev Size and Array Size, check 0;
#  - --size=max on a 1.0 RAID 1 whose image files grew: the superblock moves
#    to the new end as md's super_1_rdev_size_change moves it (its offsets
#    and the data area as md computes them, the bad-block log below it),
#    the new part (holding the old superblocks) resynced, check 0, served
#    again; with a bitmap below the superblock it stays (md's rule);
#  - --size on RAID 10 (near and offset; far refused as md's raid10_resize
#    refuses it): grown to max, the new part resynced (in array sectors, as
#    md's recovery_cp = the old raid10_size), and shrunk back under an
#    --array-size, each with fio verify during, check 0, mdadm's fields.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/grow.sh"
need fio nbdcopy nbdinfo python3 mdadm sha256sum
work_dir grow-meta10
echo "work in $work"
SEED=1810
echo "data seed $SEED"
randfile $SEED $((2 << 20)) "$work/data"

nbd_size() { nbdinfo --size "$(uri "$1")" 2>/dev/null || echo none; }
# mdadm prints Used Dev Size only when it differs from Avail Dev Size
used_dev() {
    local u
    u=$(examine "$1" "Used Dev Size" | cut -d' ' -f1)
    [ -n "$u" ] || u=$(examine "$1" "Avail Dev Size" | cut -d' ' -f1)
    echo "$u"
}
sb_ok() { mdadm --examine "$1" | grep -q "Checksum : .* - correct"; }
# size_max NAME WHAT: ${mem[@]} served as NAME with the data written, grown
# with --size=max while fio writes and verifies, resynced; $avail (member 0's
# Avail Dev Size before, sectors) and $size0 (the export's size before) set
size_max() {
    local name=$1 what=$2 out rc
    avail=$(examine "${mem[0]}" "Avail Dev Size" | cut -d' ' -f1)
    serve_bg "$work" "$name" "${mem[@]}" || exit 1
    nbdcopy "$work/data" "$(uri "$name")"
    size0=$(nbd_size "$name")
    fio_bg "$name"
    out=$("$URAID" grow "$name" --size=max); rc=$?
    check "$name: $what --size=max (rc $rc): $out" test $rc -eq 0
    check "$name:   fio verify during" wait "$fpid"
    check "$name:   the new part resynced" settled "$name"
}

# ---- 1.0: --bitmap=none, then --bitmap=internal again ----
mem=("$work/b0" "$work/b1")
truncate -s 40M "${mem[@]}"
"$URAID" create --name=b --metadata=1.0 --level=1 --raid-devices=2 --bitmap=internal \
    --assume-clean "${mem[@]}" >/dev/null
bm0=$(examine "${mem[0]}" "Internal Bitmap")
soff=$(examine "${mem[0]}" "Super Offset" | cut -d' ' -f1)
echo "b: created with the bitmap at: $bm0 (superblock at $soff)"
serve_bg "$work" b "${mem[@]}" || exit 1
nbdcopy "$work/data" "$(uri b)"
out=$("$URAID" grow b --bitmap=none); rc=$?
check "b: 1.0 --bitmap=none (rc $rc): $out" test $rc -eq 0
check "b:   examine: feature 0x0, checksum correct" \
    eval 'test "$(examine "${mem[0]}" "Feature Map")" = 0x0 && sb_ok "${mem[0]}" && sb_ok "${mem[1]}"'
check "b:   data" data_ok b
fio_bg b
out=$("$URAID" grow b --bitmap=internal); rc=$?
check "b: 1.0 --bitmap=internal (rc $rc): $out" test $rc -eq 0
check "b:   fio verify during the add" wait "$fpid"
for m in "${mem[@]}"; do
    check "b:   examine $(basename "$m"): feature 0x1, bitmap 16 sectors below the superblock" \
        test "$(examine "$m" "Feature Map")/$(examine "$m" "Internal Bitmap")" = "0x1/-16 sectors from superblock"
    check "b:   examine $(basename "$m"): checksum correct, the log at -8" \
        eval 'sb_ok "$m" && mdadm --examine "$m" | grep -q "Bad Block Log : 512 entries available at offset -8"'
    check "b:   the header 'bitm' at superblock - 16 on $(basename "$m")" \
        test "$(dd if="$m" bs=512 skip=$((soff - 16)) count=1 2>/dev/null | head -c 4)" = bitm
done
check "b:   the header: chunk 64 MiB (mdadm's default), 1 bit, 8 sectors reserved, events as the array's" \
    test "$(bitmap_field "${mem[0]}" chunk_bytes)/$(bitmap_field "${mem[0]}" bits)/$(bitmap_field "${mem[0]}" sectors_reserved)/$(bitmap_field "${mem[0]}" events)" = "67108864/1/8/$(examine "${mem[0]}" Events)"
check "b:   status shows it" grep -q "Bitmap : internal" <<<"$("$URAID" status b)"
check "b:   data" data_ok b
check "b:   0 mismatches" check_zero b
stop_served b
check "b: served again with the bitmap" serve_bg "$work" b "${mem[@]}"
check "b:   status shows it" grep -q "Bitmap : internal" <<<"$("$URAID" status b)"
check "b:   data" data_ok b
stop_served b

# ---- 1.0 made without a bitmap: the room mdadm leaves below the superblock
# (choose_bm_space: 8 sectors on small members, above the 8-sector log) ----
mem=("$work/n0" "$work/n1")
truncate -s 40M "${mem[@]}"
"$URAID" create --name=n --metadata=1.0 --level=1 --raid-devices=2 --bitmap=none \
    --assume-clean "${mem[@]}" >/dev/null
echo "n: Avail Dev Size $(examine "${mem[0]}" "Avail Dev Size"), Super Offset $(examine "${mem[0]}" "Super Offset")"
serve_bg "$work" n "${mem[@]}" || exit 1
nbdcopy "$work/data" "$(uri n)"
refused n "--bitmap=none without a bitmap" --bitmap=none
fio_bg n
out=$("$URAID" grow n --bitmap=internal); rc=$?
check "n: 1.0 --bitmap=internal (rc $rc): $out" test $rc -eq 0
check "n:   fio verify during the add" wait "$fpid"
check "n:   examine: feature 0x1, bitmap 16 sectors below the superblock, checksum correct" \
    eval 'test "$(examine "${mem[1]}" "Feature Map")/$(examine "${mem[1]}" "Internal Bitmap")" = "0x1/-16 sectors from superblock" && sb_ok "${mem[1]}"'
check "n:   the data area unchanged" \
    test "$(examine "${mem[0]}" "Avail Dev Size" | cut -d' ' -f1)" = 81888
check "n:   data" data_ok n
check "n:   0 mismatches" check_zero n
stop_served n
check "n: served again with the bitmap" serve_bg "$work" n "${mem[@]}"
check "n:   status shows it" grep -q "Bitmap : internal" <<<"$("$URAID" status n)"
check "n:   data" data_ok n
stop_served n

# ---- 1.0: --size=max within the data area ----
mem=("$work/s0" "$work/s1" "$work/s2")
truncate -s 24M "${mem[@]}"
"$URAID" create --name=s --metadata=1.0 --level=5 --raid-devices=3 --chunk=64 --size=8M \
    --bitmap=none --assume-clean "${mem[@]}" >/dev/null
echo "s: Used Dev Size $(examine "${mem[0]}" "Used Dev Size"), Avail $(examine "${mem[0]}" "Avail Dev Size")"
size_max s "1.0"
want=$((avail - avail % 128))
check "s:   examine: Used Dev Size $want sectors (the data area, whole chunks)" \
    test "$(used_dev "${mem[0]}")" = $want
check "s:   examine: Array Size $want KiB, checksum correct" \
    eval 'test "$(examine "${mem[0]}" "Array Size" | cut -d" " -f1)" = $want && sb_ok "${mem[2]}"'
check "s:   NBD exports it: $(nbd_size s) (was $size0)" test "$(nbd_size s)" = $((want * 2 * 512))
check "s:   data" data_ok s
check "s:   0 mismatches" check_zero s
stop_served s

# ---- 1.0: --size=max after the members grew: the superblock moves to the
# new end, as md's super_1_rdev_size_change does (no bitmap there) ----
mem=("$work/g0" "$work/g1")
truncate -s 24M "${mem[@]}"
"$URAID" create --name=g --metadata=1.0 --level=1 --raid-devices=2 --bitmap=none \
    --assume-clean "${mem[@]}" >/dev/null
echo "g: before: Super Offset $(examine "${mem[0]}" "Super Offset"), Avail $(examine "${mem[0]}" "Avail Dev Size")"
serve_bg "$work" g "${mem[@]}" || exit 1
nbdcopy "$work/data" "$(uri g)"
gsize0=$(nbd_size g)
truncate -s 40M "${mem[@]}"
fio_bg g
out=$("$URAID" grow g --size=max); rc=$?
check "g: 1.0 --size=max after the images grew (rc $rc): $out" test $rc -eq 0
check "g:   fio verify during" wait "$fpid"
check "g:   the new part resynced (the old superblocks in it differ)" settled g
# 40 MiB: superblock at (81920 - 16) & ~7 = 81904, the data up to md's
# 4 KiB bitmap space and the 8-sector log below it: 81888 sectors
for m in "${mem[@]}"; do
    check "g:   examine $(basename "$m"): Super Offset 81904, Avail 81888, Used 81888, checksum correct, log at -8" \
        eval 'test "$(examine "$m" "Super Offset" | cut -d" " -f1)/$(examine "$m" "Avail Dev Size" | cut -d" " -f1)/$(used_dev "$m")" = 81904/81888/81888 &&
              sb_ok "$m" && mdadm --examine "$m" | grep -q "Bad Block Log : 512 entries available at offset -8"'
done
check "g:   examine: Array Size 40944 KiB" \
    test "$(examine "${mem[0]}" "Array Size" | cut -d' ' -f1)" = 40944
check "g:   NBD exports it: $(nbd_size g) (was $gsize0)" test "$(nbd_size g)" = $((81888 * 512))
check "g:   data" data_ok g
check "g:   0 mismatches" check_zero g
stop_served g
check "g: served again" serve_bg "$work" g "${mem[@]}"
check "g:   the size kept, data" eval 'test "$(nbd_size g)" = $((81888 * 512)) && data_ok g'
stop_served g
# with a bitmap below the superblock md does not move it, nor does uraid
mem=("$work/h0" "$work/h1")
truncate -s 24M "${mem[@]}"
"$URAID" create --name=h --metadata=1.0 --level=1 --raid-devices=2 --bitmap=internal \
    --assume-clean "${mem[@]}" >/dev/null
hsoff=$(examine "${mem[0]}" "Super Offset" | cut -d' ' -f1)
havail=$(examine "${mem[0]}" "Avail Dev Size" | cut -d' ' -f1)
serve_bg "$work" h "${mem[@]}" || exit 1
truncate -s 40M "${mem[@]}"
out=$("$URAID" grow h --size=max 2>&1); rc=$?
echo "h: 1.0 with a bitmap, --size=max after the images grew: rc $rc: $out"
check "h:   the size used at most the data area below the superblock ($havail sectors)" \
    test "$("$URAID" status --json h | python3 -c 'import json,sys; print(json.load(sys.stdin)["array_bytes"])')" -le $((havail * 512))
stop_served h
# (md's limit too: mdadm looks for a 1.0 superblock at the end, which moved)
check "h:   the superblock still at sector $hsoff" \
    test "$(od -An -tx4 -j $((hsoff * 512)) -N4 "${mem[0]}" | tr -d ' ')" = a92b4efc

# ---- RAID 10 near=2 (1.2, with a bitmap): --size=max, then back down ----
mem=("$work/r0" "$work/r1" "$work/r2" "$work/r3")
truncate -s 24M "${mem[@]}"
"$URAID" create --name=r --level=10 --layout=n2 --raid-devices=4 --chunk=64 --size=8M \
    --bitmap=internal --bitmap-chunk=64K --assume-clean "${mem[@]}" >/dev/null
echo "r: garbage past the old end: seeds $((SEED + 10))..$((SEED + 13))"
scribble $((SEED + 10)) "${mem[@]}"
size_max r "RAID 10 n2"
want=$((avail - avail % 128))
check "r:   examine: Used Dev Size $want sectors, Array Size $want KiB (4 members, 2 copies)" \
    test "$(used_dev "${mem[3]}")/$(examine "${mem[3]}" "Array Size" | cut -d' ' -f1)" = "$want/$want"
check "r:   NBD exports it: $(nbd_size r) (was $size0)" test "$(nbd_size r)" = $((want * 1024))
check "r:   the bitmap covers the array (md's raid10 bitmap sync size)" \
    test "$(bitmap_field "${mem[0]}" sync_bytes)" = $((want * 1024))
check "r:   data" data_ok r
check "r:   0 mismatches (the garbage past the old end resynced)" check_zero r
out=$("$URAID" grow r --size=8M --array-size=16M); rc=$?
check "r: --size=8M with --array-size=16M (rc $rc): $out" test $rc -eq 0
check "r:   examine: Used Dev Size 16384 sectors, checksum correct" \
    eval 'test "$(used_dev "${mem[0]}")" = 16384 && sb_ok "${mem[0]}"'
check "r:   NBD exports 16 MiB" test "$(nbd_size r)" = $((16 << 20))
check "r:   data" data_ok r
check "r:   0 mismatches" check_zero r
stop_served r
check "r: served again" serve_bg "$work" r "${mem[@]}"
check "r:   16 MiB, data" eval 'test "$(nbd_size r)" = $((16 << 20)) && data_ok r'
stop_served r

# ---- RAID 10 offset=2 on metadata 1.0: --size=max within the data area ----
mem=("$work/o0" "$work/o1" "$work/o2" "$work/o3")
truncate -s 24M "${mem[@]}"
"$URAID" create --name=o --metadata=1.0 --level=10 --layout=o2 --raid-devices=4 --chunk=64 \
    --size=8M --bitmap=none --assume-clean "${mem[@]}" >/dev/null
echo "o: garbage past the old end: seeds $((SEED + 20))..$((SEED + 23))"
scribble $((SEED + 20)) "${mem[@]}"
size_max o "RAID 10 o2 1.0"
# o2: whole pairs of chunks (md's calc_sectors: / far_copies, then x far_copies)
want=$((avail - avail % 256))
check "o:   examine: Used Dev Size $want sectors, Array Size $want KiB, checksum correct" \
    eval 'test "$(used_dev "${mem[1]}")/$(examine "${mem[1]}" "Array Size" | cut -d" " -f1)" = "$want/$want" && sb_ok "${mem[1]}"'
check "o:   data" data_ok o
check "o:   0 mismatches (the garbage past the old end resynced)" check_zero o
refused o "RAID 10 --size=8M below what is exported" --size=8M
stop_served o

# ---- RAID 10 far=2: refused, as md's raid10_resize refuses it ----
mem=("$work/f0" "$work/f1" "$work/f2" "$work/f3")
truncate -s 24M "${mem[@]}"
"$URAID" create --name=f --level=10 --layout=f2 --raid-devices=4 --chunk=64 --size=8M \
    --bitmap=none --assume-clean "${mem[@]}" >/dev/null
serve_bg "$work" f "${mem[@]}" || exit 1
refused f "RAID 10 far=2 --size=max" --size=max
stop_served f

echo "$fails failures"
[ "$fails" -eq 0 ]
