#!/bin/bash
# Pool changes cut short or on odd sizes (docs/pools.md, "Growing a volume"):
#  - pool repair of a drive grown by fewer sectors than the backup GPT's 33:
#    sgdisk -v clean afterwards (the old backup's zeroing spares the new one);
#  - volume grow --size killed between two drives' table writes (strace
#    kills it at an fdatasync): the partitions differ, the rerun finishes,
#    sgdisk -v is clean, the data reads back;
#  - volume grow --drives killed after the new partition is written, before
#    md takes it: pool status does not count it, the rerun uses it and ends;
#  - volume grow --drives whose add fails (the first or the second of two)
#    takes the spares out again and removes the new partitions;
#  - volume grow --size on a volume with an internal bitmap says it is taken
#    off for the change, and puts it back.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
need sgdisk nbdcopy nbdinfo python3 strace bc
work_dir volume-grow-kill
cd "$work" || exit 1
SEED=${SEED:-2026120214}
echo "seed $SEED"

gpt_sound() {
    local d
    for d in "$@"; do
        sgdisk -v "$d" | grep -q "No problems found" || { sgdisk -v "$d"; return 1; }
    done
}

# ---- a drive grown by 8 sectors
truncate -s 16M e0.img e1.img
check "pool create small" "$URAID" pool create small e0.img e1.img
truncate -s +4K e1.img
check "pool repair of a drive grown by 8 sectors" "$URAID" pool repair small e0.img e1.img
check "sgdisk -v clean after it" gpt_sound e0.img e1.img
check "pool status: no GPT copy damaged" \
    bash -c "! '$URAID' pool status small e0.img e1.img 2>&1 | grep -q damaged"

# ---- volume grow --size killed between two drives' tables
truncate -s 64M d0.img d1.img d2.img d3.img
drives=(d0.img d1.img d2.img d3.img)
uri() { echo "nbd+unix:///$1?socket=$work/$1.sock"; }
serve_v() { serve_bg "$work" "$1" --pool=tank --volume="$1" "${drives[@]}"; }
size_of() { "$URAID" pool status tank "${drives[@]}" --json | python3 -c '
import json, sys
v = {x["name"]: x for x in json.load(sys.stdin)["volumes"]}[sys.argv[1]]
print(v["size_bytes"], v["raid_disks"], v["health"])' "$1"; }
same_data() {   # the volume begins with its pattern
    local v=$1 n
    n=$(stat -c %s "$v.pat")
    nbdcopy "$(uri "$v")" "$v.back" && cmp -n "$n" "$v.pat" "$v.back"
}
check "pool create tank" "$URAID" pool create tank "${drives[@]}"
check "volume create v: parity on 3 drives, 12M" \
    "$URAID" volume create tank v --resiliency=parity --size=12M --drives=3 "${drives[@]}"
check "serve v" serve_v v
write_v() { randfile "$2" "$(nbdinfo --size "$(uri "$1")")" "$1.pat" && nbdcopy "$1.pat" "$(uri "$1")"; }
check "v: a pattern (seed $((SEED + 1)))" write_v v $((SEED + 1))
check "v: stopped" stop_served v
# one fdatasync per drive's table: the 2nd is the second drive's
strace -f -o /dev/null -e inject=fdatasync:signal=KILL:when=2 \
    "$URAID" volume grow tank v --size=20M "${drives[@]}" >kill.out 2>&1
echo "  killed volume grow --size: exit $?"
check "the partitions differ after the kill" bash -c \
    "sgdisk -p d0.img | grep tank/v | awk '{print \$3-\$2}' >a; sgdisk -p d2.img | grep tank/v | awk '{print \$3-\$2}' >b; ! cmp -s a b"
check "volume grow --size=20M again" "$URAID" volume grow tank v --size=20M "${drives[@]}"
check "sgdisk -v clean" gpt_sound "${drives[@]}"
read -r v_size _ v_health <<<"$(size_of v)"
echo "  v: $v_size bytes, $v_health"
check "v: 20 MiB or a little more, clean" \
    test "$v_health" = clean -a "$v_size" -ge $((20 << 20)) -a "$v_size" -lt $((22 << 20))
check "serve v" serve_v v
check "v: the pattern reads back" same_data v
check "v: stopped" stop_served v

# ---- volume grow --drives killed after the new partition's table write
# (the 1st fdatasync), before md takes it
strace -f -o /dev/null -e inject=fdatasync:signal=KILL:when=1 \
    "$URAID" volume grow tank v --drives=4 "${drives[@]}" >kill2.out 2>&1
echo "  killed volume grow --drives: exit $?"
check "the new partition is there (d3.img)" bash -c "sgdisk -p d3.img | grep -q tank/v"
read -r _ v_disks v_health <<<"$(size_of v)"
echo "  v: $v_disks members, $v_health"
check "pool status --json: 3 members, clean" test "$v_disks" = 3 -a "$v_health" = clean
check "pool status: v on 3 drives" bash -c \
    "'$URAID' pool status tank ${drives[*]} | grep -E '^  v +' | awk '{print \$(NF-1)}' | grep -qx 3"
refuse_size() { ! "$URAID" volume grow tank v --size=max "${drives[@]}" 2>&1 | tee size.err |
    grep -q "run 'uraid volume grow tank v --drives=4'" && { cat size.err; return 1; }; return 0; }
check "volume grow --size refuses with the --drives rerun to do" refuse_size
check "volume grow --drives=4 again uses the partition" \
    "$URAID" volume grow tank v --drives=4 "${drives[@]}"
check "sgdisk -v clean" gpt_sound "${drives[@]}"
check "one partition of v per drive" bash -c \
    "for d in ${drives[*]}; do sgdisk -p \$d | grep -c tank/v; done | sort -u | grep -qx 1"
read -r _ v_disks v_health <<<"$(size_of v)"
check "v: 4 members, clean" test "$v_disks" = 4 -a "$v_health" = clean
check "serve v" serve_v v
check "v: the pattern reads back" same_data v
check "v: stopped" stop_served v

# ---- volume grow --size on a volume with an internal bitmap
members_of() { "$URAID" pool status tank "${drives[@]}" --json | python3 -c '
import json, sys
print(" ".join({x["name"]: x for x in json.load(sys.stdin)["volumes"]}[sys.argv[1]]["members"]))' "$1"; }
check "volume create b: parity on 3 drives, 8M" \
    "$URAID" volume create tank b --resiliency=parity --size=8M --drives=3 "${drives[@]}"
check "serve b" serve_v b
check "b: an internal bitmap" "$URAID" grow b --bitmap=internal
check "b: a pattern (seed $((SEED + 2)))" write_v b $((SEED + 2))
check "b: stopped" stop_served b
has_bitmap() { "$URAID" examine "$(members_of b | cut -d' ' -f1)" | grep -qi "internal bitmap"; }
check "b's member has a bitmap before" has_bitmap
check "volume grow b --size=16M" bash -c "'$URAID' volume grow tank b --size=16M ${drives[*]} >bgrow.out 2>&1" ||
    cat bgrow.out
check "it says the bitmap is taken off and how to put it back" grep -q "bitmap=internal" bgrow.out
check "b's member has a bitmap after" has_bitmap
check "sgdisk -v clean" gpt_sound "${drives[@]}"
check "serve b" serve_v b
check "b: the pattern reads back" same_data b
check "b: stopped" stop_served b

# ---- volume grow --drives whose add fails (EIO injected at the new
# member's fdatasync, the 2nd): the new partition goes again
count_b() { for d in "${drives[@]}"; do sgdisk -p "$d" | grep -c tank/b; done | paste -sd+ | bc; }
strace -f -o /dev/null -e inject=fdatasync:error=EIO:when=2 \
    "$URAID" volume grow tank b --drives=4 "${drives[@]}" >fail.out 2>&1
rc=$?
echo "  volume grow --drives with a failed add: exit $rc: $(tail -1 fail.out)"
check "it failed" test "$rc" -ne 0
check "b has its 3 partitions, no more" test "$(count_b)" = 3
read -r _ b_disks b_health <<<"$(size_of b)"
check "b: 3 members, clean" test "$b_disks" = 3 -a "$b_health" = clean
check "sgdisk -v clean" gpt_sound "${drives[@]}"
check "serve b" serve_v b
check "b: the pattern reads back" same_data b
check "b: stopped" stop_served b

# ---- the same when the second of two adds fails (EIO at the 7th fdatasync:
# 2 tables, 3 for the first add, then the second's): the first spare is
# taken out of the array again and both new partitions go
check "volume create c: mirror on 2 drives, 4M" \
    "$URAID" volume create tank c --level=1 --size=4M --drives=2 "${drives[@]}"
count_c() { for d in "${drives[@]}"; do sgdisk -p "$d" | grep -c tank/c; done | paste -sd+ | bc; }
strace -f -o /dev/null -e inject=fdatasync:error=EIO:when=7 \
    "$URAID" volume grow tank c --drives=4 "${drives[@]}" >fail2.out 2>&1
rc=$?
echo "  volume grow --drives with the second add failed: exit $rc"
cat fail2.out
check "it failed" test "$rc" -ne 0
check "c has its 2 partitions, no more" test "$(count_c)" = 2
read -r _ c_disks c_health <<<"$(size_of c)"
check "c: 2 members, clean" test "$c_disks" = 2 -a "$c_health" = clean
check "sgdisk -v clean" gpt_sound "${drives[@]}"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
