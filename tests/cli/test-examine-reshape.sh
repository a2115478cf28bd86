#!/bin/bash
# Referee: `uraid examine` of members in mid-reshape prints what the host's
# `mdadm --examine` prints, line for line (Reshape pos'n, Delta Devices,
# New Level, New Layout, New Chunksize, New Offset, no Unused Space, the
# Array State over the old slots of a shrink), and --json gives the same
# fields with the direction.
#  1. a RAID 5 3 -> 4 with chunk and layout changes, stopped by uraid after
#     its first checkpoints (tests/tools/reshape_start), every member;
#  2. superblocks edited as md writes them for reshapes uraid does not start
#     (RAID 10 near=2 4 -> 6 with an offset layout and a chunk change, RAID 5
#     -> 6 level change, a RAID 5 4 -> 3 backwards shrink), checksum redone.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
TOOL=$(realpath "$BUILD/tests/tools/reshape_start")
. "$(dirname "$0")/lib/common.sh"
need mdadm python3
[ -x "$TOOL" ] || { echo "$TOOL not built (make $BUILD/tests/tools/reshape_start)"; exit 77; }
work=$(mktemp -d /tmp/uraid-examine-reshape.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0

# Same text from both, TZ fixed for the times; the first differing lines shown.
same_examine() {   # case member...
    local c=$1 m bad=0; shift
    for m in "$@"; do
        TZ=UTC mdadm --examine "$m" >"$work/md.txt" 2>&1
        TZ=UTC "$URAID" examine "$m" >"$work/u.txt" 2>&1
        if ! diff "$work/md.txt" "$work/u.txt" >"$work/diff"; then
            echo "  $c $(basename "$m"): mdadm and uraid differ:"; head -20 "$work/diff" | sed 's/^/    /'
            bad=1
        fi
    done
    check "$c: uraid examine = mdadm --examine on $# member(s)" test $bad = 0
}

# sbedit IMAGE field=value...: edit a 1.2 superblock (at 4 KiB) and redo its
# checksum as md computes it (le32 sum of 256 + 2 * max_dev bytes, folded).
sbedit() {
    python3 - "$@" <<'PY'
import struct, sys
F = {"feature_map": ("I", 8), "level": ("i", 72), "layout": ("I", 76), "raid_disks": ("I", 92),
     "new_level": ("i", 100), "reshape_position": ("Q", 104), "delta_disks": ("i", 112),
     "new_layout": ("I", 116), "new_chunk": ("I", 120), "new_offset": ("i", 124)}
path = sys.argv[1]
with open(path, "r+b") as f:
    f.seek(4096)
    sb = bytearray(f.read(4096))
    for kv in sys.argv[2:]:
        k, v = kv.split("=")
        fmt, off = F[k]
        struct.pack_into("<" + fmt, sb, off, int(v, 0))
    max_dev = struct.unpack_from("<I", sb, 220)[0]
    struct.pack_into("<I", sb, 216, 0)
    n = 256 + 2 * max_dev
    s = sum(struct.unpack_from("<%dI" % (n // 4), sb, 0)) + (sb[n - 2] | sb[n - 1] << 8 if n % 4 else 0)
    s = (s & 0xffffffff) + (s >> 32)
    struct.pack_into("<I", sb, 216, s & 0xffffffff)
    f.seek(4096)
    f.write(sb)
PY
}
json_reshape() {   # member -> the reshape object as key=value words
    "$URAID" examine --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)[0]
r = d["reshape"]
print("none" if r is None else " ".join(f"{k}={r[k]}" for k in sorted(r)), "new_offset=%s" % d["new_offset_bytes"])'
}

# 1. uraid's own mid-reshape members
m=()
for i in 0 1 2 3; do truncate -s 64M "$work/m$i"; m+=("$work/m$i"); done
"$URAID" create --level=5 --raid-devices=3 --chunk=64 --bitmap=none --name=er "${m[@]:0:3}" >/dev/null
out=$("$TOOL" --raid-devices=4 --chunk-kib=32 --layout=right-symmetric --speed-kib=20000 \
      --stop-at=4096 --add="${m[3]}" "${m[@]:0:3}" 2>&1)
check "the reshape started and stopped after a checkpoint" grep -q "stopped at" <<<"$out"
grep -E "Reshape|Delta|New " <(mdadm --examine "${m[0]}") | sed 's/^/  /'
same_examine "RAID 5 3 -> 4, 64 -> 32 KiB, ls -> rs" "${m[@]}"
j=$(json_reshape "${m[3]}")
echo "  json: $j"
check "json: forwards, delta 1, raid5 right-symmetric, 32 KiB" \
    grep -q "delta_devices=1 direction=forwards new_chunk_bytes=32768 new_layout=right-symmetric new_layout_number=3 new_level=raid5 new_level_number=5" <<<"$j"
check "json: the new offset in bytes" grep -q "new_offset=[1-9][0-9]*\$" <<<"$j"

# 2. superblocks as md writes them for other reshapes
r=()
for i in 0 1 2 3; do truncate -s 40M "$work/r$i"; r+=("$work/r$i"); done
"$URAID" create --level=10 --layout=n2 --raid-devices=4 --chunk=64 --bitmap=none --name=er10 \
    "${r[@]}" >/dev/null
for d in "${r[@]}"; do   # md's 4 -> 6, o2, 32 KiB: new_offset -128 (measured in the guest)
    sbedit "$d" feature_map=0x44 raid_disks=6 delta_disks=2 reshape_position=15360 \
        new_level=10 new_layout=0x10201 new_chunk=64 new_offset=-128
done
same_examine "RAID 10 n2 4 -> 6, o2, 32 KiB (edited)" "${r[@]}"
check "json: RAID 10 new layout offset=2" grep -q "new_layout=offset=2" <<<"$(json_reshape "${r[0]}")"

f=()
for i in 0 1 2 3; do truncate -s 40M "$work/f$i"; f+=("$work/f$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --bitmap=none --name=er5 "${f[@]}" >/dev/null
for d in "${f[@]}"; do   # a shrink 4 -> 3, backwards, data offset up
    sbedit "$d" feature_map=0x64 raid_disks=3 delta_disks=-1 reshape_position=40960 \
        new_level=5 new_layout=2 new_chunk=128 new_offset=2048
done
same_examine "RAID 5 4 -> 3 backwards (edited)" "${f[@]}"
j=$(json_reshape "${f[0]}")
check "json: backwards, delta -1" grep -q "delta_devices=-1 direction=backwards" <<<"$j"
for d in "${f[@]}"; do   # a level change in the fields (New Level), 3 -> 4 members
    sbedit "$d" feature_map=0x44 raid_disks=4 delta_disks=1 reshape_position=0 new_level=6 \
        new_layout=18 new_chunk=64 new_offset=-1024
done
same_examine "RAID 5 -> 6 fields (edited)" "${f[0]}"
check "json: new level raid6" grep -q "new_level=raid6 new_level_number=6" <<<"$(json_reshape "${f[0]}")"

echo "$fails failed"
[ $fails -eq 0 ]
