#!/bin/bash
# RAID 10 reshapes with `uraid grow` on served arrays of image files, as md
# 6.1 / mdadm 4.2 make them (forwards, the data offset down):
#  1. near=2, 4 -> 6 members (--add the two spares): fio writes the whole
#     array first (crc32c verify headers, seeded); the grow starts
#     throttled; mdadm --examine shows md's fields (feature map 0x44, data
#     offset 2048 -> 1920, delta 2); fio verifies every block through NBD
#     while the reshape runs; kill -9 of the server half-way; served again
#     it goes on from the checkpoint and finishes: fio verifies, the size is
#     6/4 of the old one, `uraid check` finds 0 mismatches, mdadm --examine
#     shows 6 devices, no reshape, data offset 1920;
#  2. near=2 chunk 64 -> 32 KiB at the same count, fio writing and
#     verifying through it; then n2 -> o2;
#  3. refusals (exit 1, one line, members unchanged): a far layout, to a
#     far layout, fewer members while the data does not fit (the size
#     asked is named), a change of the number of copies;
#  4. near=2, 5 -> 4 members (backwards, md's way: no room after the data,
#     so the used size one chunk smaller first, as mdadm): refused until
#     --array-size, then fio verifies during it; kill -9 half-way; served
#     again it finishes: mdadm --examine shows delta -1 and the data offset
#     2048 -> 2176 while it runs, 4 devices and data offset 2176 after, the
#     fifth member a spare; fio verifies, 0 mismatches.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
# uri, examine, sums, check_zero, quiet, refused (its own helpers below stand
# over the library's)
. "$(dirname "$0")/lib/grow.sh"
need fio nbdinfo mdadm sha256sum
work_dir grow-raid10
SEED=${SEED:-20261218}
echo "seed $SEED, work in $work"
fails=0

fio_job() {   # NAME ARGS: the same job each time: same offsets, same data
    local name=$1; shift
    (cd "$work" && fio --ioengine=nbd --uri="$(uri "$name")" --rw=randwrite \
        --bssplit=4k/50:64k/50 --iodepth=8 --verify=crc32c --verify_fatal=1 \
        --randseed="$SEED" --size="$size" --name=r10 "$@" >"$work/fio-$name.out" 2>&1)
}
fio_ok() { grep -q "err= 0" "$work/fio-$1.out"; }

# ---- 1. near=2 4 -> 6, kill -9 half-way ----
mem=()
for i in 0 1 2 3 4 5; do truncate -s 64M "$work/a$i"; mem+=("$work/a$i"); done
"$URAID" create --level=10 --layout=n2 --raid-devices=4 --chunk=64 --bitmap=none --assume-clean --name=ra \
    --run "${mem[@]:0:4}" >/dev/null
serve_bg "$work" ra "${mem[@]:0:4}" || exit 1
old_bytes=$(nbdinfo --size "$(uri ra)")
size=$((old_bytes / 1048576))M
fio_job ra --do_verify=0 --end_fsync=1
check "fio wrote the array ($size)" fio_ok ra
"$URAID" tune ra --speed-min=1000 --speed-max=3000 >/dev/null
out=$("$URAID" grow ra --raid-devices=6 --add "$work/a4" "$work/a5" 2>&1); rc=$?
check "near=2 4 -> 6 with --add (rc $rc): $out" test $rc -eq 0
ex=$(mdadm --examine "${mem[0]}" 2>&1)
check "  examine: feature map 0x44, delta 2, new offset 1920" \
    eval 'grep -q "Feature Map : 0x44" <<<"$ex" && grep -q "Delta Devices : 2" <<<"$ex" &&
          grep -q "New Offset : 1920 sectors" <<<"$ex"' 
mdadm --examine "${mem[0]}" | grep -E "Feature Map|Raid Devices|Data Offset|New Offset|Reshape|Delta" |
    sed 's/^/  /'
fio_job ra --verify_only
check "every block verifies through NBD during the reshape" fio_ok ra
check "the reshape was still running then" \
    bash -c "'$URAID' status ra | grep -q 'Background : reshape'"
kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
pos=$(examine "${mem[0]}" "Reshape pos'n")
echo "  killed at $pos"
check "killed in mid-reshape (a checkpoint on disk)" test -n "$pos"
serve_bg "$work" ra "${mem[@]}" || exit 1
"$URAID" tune ra --speed-max=200000 >/dev/null
check "served again, it goes on from the checkpoint and ends" settled ra 600
fio_job ra --verify_only
check "every block verifies after the reshape" fio_ok ra
check "0 mismatches" check_zero ra
stop_served ra
serve_bg "$work" ra "${mem[@]}" || exit 1
new_bytes=$(nbdinfo --size "$(uri ra)")
check "the array is 6/4 of the size ($old_bytes -> $new_bytes)" \
    test "$new_bytes" -eq $((old_bytes * 6 / 4))
stop_served ra
ex=$(mdadm --examine "${mem[5]}" 2>&1)
check "examine: 6 devices, no reshape, data offset 1920" \
    eval 'grep -q "Raid Devices : 6" <<<"$ex" && ! grep -q "Reshape" <<<"$ex" &&
          grep -q "Data Offset : 1920 sectors" <<<"$ex"' 

# ---- 2. near=2 chunk 64 -> 32 KiB, then n2 -> o2 ----
mem=()
for i in 0 1 2 3; do truncate -s 48M "$work/b$i"; mem+=("$work/b$i"); done
"$URAID" create --level=10 --layout=n2 --raid-devices=4 --chunk=64 --bitmap=none --assume-clean --name=rb \
    --run "${mem[@]}" >/dev/null
serve_bg "$work" rb "${mem[@]}" || exit 1
size=$(($(nbdinfo --size "$(uri rb)") / 1048576))M
fio_job rb --do_verify=0 --end_fsync=1
"$URAID" tune rb --speed-min=1000 --speed-max=8000 >/dev/null
out=$("$URAID" grow rb --chunk=32 2>&1); rc=$?
check "chunk 64 -> 32 KiB (rc $rc): $out" test $rc -eq 0
echo "  data offset $(examine "${mem[0]}" "Data Offset") -> new $(examine "${mem[0]}" "New Offset")"
fio_job rb --verify_only
check "  every block verifies during the chunk change" fio_ok rb
"$URAID" tune rb --speed-max=200000 >/dev/null
check "  done" settled rb 600
check "  examine: chunk 32K" test "$(examine "${mem[0]}" "Chunk Size")" = 32K
fio_job rb --verify_only
check "  every block verifies after it" fio_ok rb
check "  0 mismatches" check_zero rb
out=$("$URAID" grow rb --layout=o2 2>&1); rc=$?
check "n2 -> o2 (rc $rc): $out" test $rc -eq 0
check "  done" settled rb 600
check "  examine: offset=2" test "$(examine "${mem[0]}" "Layout")" = "offset=2"
fio_job rb --verify_only
check "  every block verifies after it" fio_ok rb
check "  0 mismatches" check_zero rb

# ---- 3. refusals ----
refused rb "to a far layout" --layout=f2
refused rb "fewer members while the data does not fit" --raid-devices=3
out=$("$URAID" grow rb --raid-devices=3 2>&1)
check "  it names --array-size: $out" grep -q "array-size" <<<"$out"
refused rb "a change of the number of copies" --layout=o3
stop_served rb
mem=()
for i in 0 1 2 3 4; do truncate -s 32M "$work/c$i"; mem+=("$work/c$i"); done
"$URAID" create --level=10 --layout=f2 --raid-devices=4 --chunk=64 --bitmap=none --assume-clean --name=rc \
    --run "${mem[@]:0:4}" >/dev/null
serve_bg "$work" rc "${mem[@]:0:4}" || exit 1
"$URAID" add rc "$work/c4" >/dev/null
refused rc "a far layout (mdadm's words)" --raid-devices=5
stop_served rc

# ---- 4. near=2 5 -> 4 (backwards), kill -9 half-way ----
mem=()
for i in 0 1 2 3 4; do truncate -s 48M "$work/d$i"; mem+=("$work/d$i"); done
"$URAID" create --level=10 --layout=n2 --raid-devices=5 --chunk=64 --bitmap=none --assume-clean --name=rd \
    --run "${mem[@]}" >/dev/null
serve_bg "$work" rd "${mem[@]}" || exit 1
out=$("$URAID" grow rd --raid-devices=4 2>&1); rc=$?
check "5 -> 4 refused before --array-size (rc $rc): $out" test $rc -eq 1
want=$(grep -o 'array-size=[0-9]*K' <<<"$out" | head -1 | tr -dc 0-9)
check "  the refusal names the size ($want KiB)" test -n "$want"
want=${want:-0}
size=$((want / 1024))M
fio_job rd --do_verify=0 --end_fsync=1
check "fio wrote the part that stays ($size)" fio_ok rd
out=$("$URAID" grow rd --array-size="${want}K" 2>&1); rc=$?
check "--array-size=${want}K (rc $rc): $out" test $rc -eq 0
"$URAID" tune rd --speed-min=1000 --speed-max=3000 >/dev/null
out=$("$URAID" grow rd --raid-devices=4 2>&1); rc=$?
check "near=2 5 -> 4 (rc $rc): $out" test $rc -eq 0
ex=$(mdadm --examine "${mem[0]}" 2>&1)
check "  examine: feature map 0x44, delta -1, new offset 2176" \
    eval 'grep -q "Feature Map : 0x44" <<<"$ex" && grep -q "Delta Devices : -1" <<<"$ex" &&
          grep -q "New Offset : 2176 sectors" <<<"$ex"'
mdadm --examine "${mem[0]}" | grep -E "Feature Map|Raid Devices|Used Dev|Data Offset|New Offset|Reshape|Delta" |
    sed 's/^/  /'
fio_job rd --verify_only
check "every block verifies through NBD during the shrink" fio_ok rd
check "the reshape was still running then" \
    bash -c "'$URAID' status rd | grep -q 'Background : reshape'"
kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
pos=$(examine "${mem[0]}" "Reshape pos'n")
echo "  killed at $pos"
check "killed in mid-reshape (a checkpoint on disk)" test -n "$pos"
serve_bg "$work" rd "${mem[@]}" || exit 1
"$URAID" tune rd --speed-max=200000 >/dev/null
check "served again, it goes on from the checkpoint and ends" settled rd 600
fio_job rd --verify_only
check "every block verifies after the shrink" fio_ok rd
check "0 mismatches" check_zero rd
check "the array is ${want} KiB" test "$(nbdinfo --size "$(uri rd)")" -eq $((want * 1024))
stop_served rd
ex=$(mdadm --examine "${mem[0]}" 2>&1)
check "examine: 4 devices, no reshape, data offset 2176" \
    eval 'grep -q "Raid Devices : 4" <<<"$ex" && ! grep -q "Reshape" <<<"$ex" &&
          grep -q "Data Offset : 2176 sectors" <<<"$ex"'
ex=$(mdadm --examine "${mem[4]}" 2>&1)
check "examine: the fifth member is a spare" grep -q "Device Role : spare" <<<"$ex"

echo "$fails failed"
[ $fails -eq 0 ]
