#!/bin/bash
# uraid grow --size on served arrays with an internal write-intent bitmap:
# the bitmap follows the size as md_bitmap_resize does (measured in the
# referee guest with md 6.1 / mdadm 4.2):
#  - RAID 1, 4 MiB per member, bitmap chunk 4 KiB (1024 bits), 8 sectors
#    reserved in the header (uraid create's): --size=max to 39936 KiB needs
#    9984 bits, which fit: the chunk stays (md keeps it too);
#  - the same with sectors_reserved 0 (as mdadm makes it): md's room is the
#    one sector the bits fill, so the chunk doubles to 32 KiB (1248 bits),
#    md's answer for its own array;
#  - RAID 5 of 2, 8 MiB, chunk 64 KiB: 624 bits still fit, the chunk stays;
#  - set bits carried over, metadata 1.0 (see below).
# Before serving, different random bytes lie past the old end on each
# member, so that the grown range matches only once it is resynced (md's
# md_bitmap_resize sets every new chunk's bit, on disk too: none may be
# passed over as clean by the bitmap).
# After each: the header (uraid examine --json and mdadm --examine-bitmap
# when a loop device can be had) has the new sync size and chunk, fio's
# writes during the grow verify (crc32c), the data written first reads back,
# the grown range is resynced and `uraid check` finds 0 mismatches, and the
# array is assembled again with its bitmap.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/grow.sh"
need fio nbdcopy nbdinfo python3 mdadm qemu-io
work_dir grow-size-bitmap
echo "work in $work"
SEED=1804
echo "data seed $SEED"
randfile $SEED $((2 << 20)) "$work/data"

no_skip() {   # the last resync passed over nothing as clean by the bitmap
    local out
    out=$("$URAID" status "$1")
    ! grep -q "Bitmap Skip" <<<"$out" || { grep "Bitmap Skip" <<<"$out"; return 1; }
}

# unreserve MEMBER...: the bitmap header's sectors_reserved set to 0, as
# mdadm writes it (metadata 1.2: the header at byte 8192, the field at +64)
unreserve() {
    python3 -c 'import struct, sys
for p in sys.argv[1:]:
    with open(p, "r+b") as f:
        f.seek(8192 + 64); f.write(struct.pack("<I", 0))' "$@"
}

# grow_case NAME CHUNK SYNC RESERVED CREATE-ARGS...: expected chunk_bytes and
# sync_bytes after; RESERVED 0 zeroes sectors_reserved first
grow_case() {
    local name=$1 want_chunk=$2 want_sync=$3 reserved=$4; shift 4
    local mem=("$work/$name"0 "$work/$name"1)
    truncate -s 40M "${mem[@]}"
    "$URAID" create --name="$name" --raid-devices=2 --bitmap=internal --assume-clean "$@" \
        "${mem[@]}" >/dev/null || { check "$name: create" false; return; }
    [ "$reserved" = 0 ] && unreserve "${mem[@]}"
    echo "  garbage past the old end: seeds $((SEED + 10)), $((SEED + 11))"
    scribble $((SEED + 10)) "${mem[@]}"
    echo "  before: chunk $(bitmap_field "${mem[0]}" chunk_bytes), sync $(bitmap_field "${mem[0]}" sync_bytes) bytes"
    serve_bg "$work" "$name" --speed-min=100000 "${mem[@]}" || { check "$name: serve" false; return; }
    nbdcopy "$work/data" "$(uri "$name")"
    fio_bg "$name"
    local out rc
    out=$("$URAID" grow "$name" --size=max 2>&1); rc=$?
    check "$name: --size=max with a bitmap (rc $rc): $out" test $rc -eq 0
    wait "$fpid"
    check "$name:   fio verified its writes through the grow" grep -q "err= 0" "$work/fio-$name.log"
    check "$name:   the new range resynced" settled "$name"
    check "$name:   none of it passed over as clean by the bitmap" no_skip "$name"
    check "$name:   NBD exports 39936 KiB" test "$(nbdinfo --size "$(uri "$name")")" = $((39936 * 1024))
    check "$name:   data" data_ok "$name"
    check "$name:   0 mismatches" check_zero "$name"
    stop_served "$name"
    local chunk sync
    chunk=$(bitmap_field "${mem[0]}" chunk_bytes)
    sync=$(bitmap_field "${mem[1]}" sync_bytes)
    check "$name:   bitmap chunk $chunk bytes (md: $want_chunk)" test "$chunk" = "$want_chunk"
    check "$name:   bitmap sync size $sync bytes (md: $want_sync)" test "$sync" = "$want_sync"
    if [ "$(id -u)" = 0 ] && loop=$(losetup -r -f --show "${mem[0]}" 2>/dev/null); then
        out=$(mdadm --examine-bitmap "$loop" 2>&1)
        losetup -d "$loop"
        check "$name:   mdadm -X: Chunksize $((want_chunk / 1024)) KB, Sync Size 39936" \
            eval 'grep -q "Chunksize : $((want_chunk / 1024)) KB" <<<"$out" && grep -q "Sync Size : 39936 " <<<"$out"'
    fi
    check "$name:   mdadm --examine: Internal Bitmap, 39936 KiB" \
        eval 'mdadm --examine "${mem[0]}" | grep -q "Internal Bitmap : 8 sectors" &&
              mdadm --examine "${mem[0]}" | grep -q "Array Size : 39936 KiB"'
    check "$name:   served again with its bitmap" serve_bg "$work" "$name" "${mem[@]}"
    check "$name:   data" data_ok "$name"
    check "$name:   status shows the bitmap" grep -q "Bitmap : internal" <<<"$("$URAID" status "$name")"
    stop_served "$name"
}

grow_case r1 4096 $((39936 * 1024)) 8 --level=1 --size=4M --bitmap-chunk=4K
grow_case m1 32768 $((39936 * 1024)) 0 --level=1 --size=4M --bitmap-chunk=4K
grow_case r5 65536 $((39936 * 1024)) 8 --level=5 --chunk=64 --size=8M --bitmap-chunk=64K

# Set bits carried over: a RAID 1 missing a member keeps the bits of what
# is written (nothing clears them while degraded); 64 KiB at 1 MiB set 16
# bits of 4 KiB (256..271), which the 32 KiB chunks hold in 2 (32, 33).
# The member added back then gets those and the whole grown range (its bits
# stay set while degraded; the members' garbage there differs), with what
# was written in it meanwhile (data offset 2048: 30 MiB is member sector
# 2048 + 61440).
d=("$work/d0" "$work/d1")
truncate -s 40M "${d[@]}"
"$URAID" create --name=d --level=1 --raid-devices=2 --size=4M --bitmap=internal \
    --bitmap-chunk=4K --assume-clean "${d[@]}" >/dev/null
unreserve "${d[@]}"
echo "d: garbage past the old end: seeds $((SEED + 20)), $((SEED + 21))"
scribble $((SEED + 20)) "${d[@]}"
serve_bg "$work" d --speed-min=100000 "${d[@]}" || exit 1
"$URAID" fail d "${d[1]}" >/dev/null && "$URAID" remove d "${d[1]}" >/dev/null
check "d: member 1 failed and removed" test $? -eq 0
randfile $((SEED + 1)) 65536 "$work/d.patch"
qemu-io -f raw -c "write -q -s $work/d.patch $((1 << 20)) 65536" "$(uri d)" >/dev/null 2>&1 ||
    check "d: 64 KiB written at 1 MiB" false
patch_ok() { nbdcopy "$(uri d)" - | head -c $((2 << 20)) | tail -c $((1 << 20)) | head -c 65536 |
             cmp -s - "$work/d.patch"; }
sleep 1
check "d: 16 bits set before the grow" test "$(bitmap_field "${d[0]}" dirty_bits)" = 16
out=$("$URAID" grow d --size=max 2>&1); rc=$?
check "d: --size=max degraded, with set bits (rc $rc): $out" test $rc -eq 0
check "d:   bitmap chunk 32 KiB" test "$(bitmap_field "${d[0]}" chunk_bytes)" = 32768
# (and the grown range's 1120 of 32 KiB, 128..1247, set by the resize)
check "d:   the 16 bits are 2 of 32 KiB, with the grown range's 1120" \
    test "$(bitmap_field "${d[0]}" dirty_bits)" = 1122
check "d:   data" patch_ok
# and into the grown range, still degraded: the member added back must get it
qemu-io -f raw -c "write -q -s $work/d.patch $((30 << 20)) 65536" "$(uri d)" >/dev/null 2>&1
check "d:   64 KiB written at 30 MiB, in the grown range" test $? -eq 0
out=$("$URAID" add d "${d[1]}" 2>&1)
check "d: the member added back: $out" test $? -eq 0
check "d:   rebuilt" settled d
check "d:   data" patch_ok
check "d:   0 mismatches" check_zero d
check "d:   the added member holds the write in the grown range" \
    cmp -s <(dd if="${d[1]}" bs=512 skip=$((2048 + 61440)) count=128 status=none) "$work/d.patch"
stop_served d

# The new chunks' bits are set on disk too: a resync stopped early goes on
# from the old end at the next assembly, where clear bits would be passed
# over (so would md). Throttled to 64 KiB/s, stopped at once: 8960 bits of
# 4 KiB cover the grown range (39936 - 4096 KiB).
t=("$work/t0" "$work/t1")
truncate -s 40M "${t[@]}"
"$URAID" create --name=t --level=1 --raid-devices=2 --size=4M --bitmap=internal \
    --bitmap-chunk=4K --assume-clean "${t[@]}" >/dev/null
echo "t: garbage past the old end: seeds $((SEED + 30)), $((SEED + 31))"
scribble $((SEED + 30)) "${t[@]}"
serve_bg "$work" t --speed-min=1 --speed-max=64 "${t[@]}" || exit 1
out=$("$URAID" grow t --size=max 2>&1); rc=$?
check "t: --size=max, resync throttled (rc $rc): $out" test $rc -eq 0
stop_served t
bits=$(bitmap_field "${t[0]}" dirty_bits)
check "t:   stopped early: $bits bits set on disk, at least the grown range's 8960" \
    test "$bits" -ge 8960
serve_bg "$work" t --speed-min=100000 "${t[@]}" || exit 1
check "t:   served again: the resync goes on" settled t
check "t:   0 mismatches" check_zero t
stop_served t

# Metadata 1.0: the bitmap sits 16 sectors before the superblock at the end,
# mdadm's bad-block log 8 before it; 8 sectors reserved: 102396 bits of
# 4 KiB do not fit, 25599 of 16 KiB do. (md with none reserved, as mdadm
# makes it, keeps the one sector the bits fill: 256 KiB, 1600 bits.)
e=("$work/e0" "$work/e1")
truncate -s 400M "${e[@]}"
"$URAID" create --name=e --metadata=1.0 --level=1 --raid-devices=2 --size=4M \
    --bitmap=internal --bitmap-chunk=4K --assume-clean "${e[@]}" >/dev/null
serve_bg "$work" e "${e[@]}" || exit 1
out=$("$URAID" grow e --size=max 2>&1); rc=$?
check "e: 1.0, --size=max with the bitmap (rc $rc): $out" test $rc -eq 0
stop_served e
check "e:   bitmap chunk 16 KiB, 25599 bits" \
    test "$(bitmap_field "${e[0]}" chunk_bytes)/$(bitmap_field "${e[0]}" bits)" = 16384/25599
check "e:   mdadm: checksum correct, the log where it was" \
    eval 'mdadm --examine "${e[0]}" | grep -q "Checksum : .* - correct" &&
          mdadm --examine "${e[0]}" | grep -q "Bad Block Log : 512 entries available at offset -8"'

echo "$fails failures"
[ "$fails" -eq 0 ]
