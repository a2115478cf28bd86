#!/bin/bash
# Growing pool volumes (docs/pools.md, "Growing a volume") on image files:
#  - volume grow --drives: a RAID 5 volume 3 -> 4 partitions in process (not
#    served), and another one 3 -> 4 through its server while it serves;
#  - volume grow --size=max: each partition extended into the space after
#    it, the array's size grown;
#  - data written before (a seeded pattern, printed) reads back the same
#    through NBD after each change, sgdisk -v finds every GPT sound;
#  - refusals (too few drives, not enough space with the largest size that
#    fits, a degraded volume, RAID 0 --size, a served volume's --size, both
#    options at once, a served range to zero-superblock, a pool name taken)
#    print one line, exit non-zero and leave every image byte-identical;
#  - examine and zero-superblock on a range PATH@START+LENGTH;
#  - an image file made larger: pool status reports it, pool repair moves
#    the backup GPT to the new end (sgdisk -v clean, more free space).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
need sgdisk nbdcopy nbdinfo python3 sha256sum
work_dir volume-grow
cd "$work" || exit 1
SEED=${SEED:-2026120213}
echo "seed $SEED"

for i in 0 1 2 3; do truncate -s 64M d$i.img; done
drives=(d0.img d1.img d2.img d3.img)
snapshot() { sha256sum ./*.img; }

refuse() {   # refuse "message part" uraid-args...
    local want=$1; shift
    local before after out rc
    before=$(snapshot)
    out=$("$URAID" "$@" 2>&1)
    rc=$?
    after=$(snapshot)
    if [ $rc -eq 0 ]; then echo "FAIL: accepted: uraid $*"; fails=$((fails + 1)); return; fi
    if [[ $out != *"$want"* ]]; then
        echo "FAIL: uraid $*: expected '$want', got: $out"; fails=$((fails + 1)); return
    fi
    if ! one_line "$out"; then echo "FAIL: uraid $*: not one line"; fails=$((fails + 1)); return; fi
    if [ "$before" != "$after" ]; then
        echo "FAIL: uraid $*: an image changed"; fails=$((fails + 1)); return
    fi
    echo "ok (exit $rc): $out"
}

gpt_sound() {
    local d
    for d in "${drives[@]}"; do
        sgdisk -v "$d" | grep -q "No problems found" || { sgdisk -v "$d"; return 1; }
    done
}

declare -A pid
serve_volume() {
    local v=$1
    rm -f "$work/$v.pid"
    "$URAID" serve --pool=tank --volume="$v" --socket="$work/$v.sock" --threads=2 \
        --pid-file="$work/$v.pid" "${drives[@]}" >>"$work/$v.out" 2>>"$work/$v.err" &
    pid[$v]=$!
    spid=${pid[$v]}
    for _ in $(seq 100); do [ -s "$work/$v.pid" ] && return 0; sleep 0.1; done
    cat "$work/$v.err"
    return 1
}
stop_volume() { "$URAID" stop "$1" >/dev/null || kill "${pid[$1]}"; wait "${pid[$1]}"; spid=; }
uri() { echo "nbd+unix:///$1?socket=$work/$1.sock"; }
write_volume() {   # a pattern from SEED+n over the whole volume, kept in $v.pat
    local v=$1 n=$2
    randfile $((SEED + n)) "$(nbdinfo --size "$(uri "$v")")" "$v.pat" &&
        nbdcopy "$v.pat" "$(uri "$v")"
}
same_prefix() {   # the volume begins with its pattern (it may have grown since)
    local v=$1 n
    n=$(stat -c %s "$v.pat")
    nbdcopy "$(uri "$v")" "$v.back" && cmp -n "$n" "$v.pat" "$v.back"
}
size_of() { "$URAID" pool status tank "${drives[@]}" --json | python3 -c '
import json, sys
v = {x["name"]: x for x in json.load(sys.stdin)["volumes"]}[sys.argv[1]]
print(v["size_bytes"], v["raid_disks"], v["health"])' "$1"; }
members_of() { "$URAID" pool status tank "${drives[@]}" --json | python3 -c '
import json, sys
print(" ".join({x["name"]: x for x in json.load(sys.stdin)["volumes"]}[sys.argv[1]]["members"]))' "$1"; }

check "pool create" "$URAID" pool create tank "${drives[@]}"
check "volume create p: parity on 3 drives, 24M" \
    "$URAID" volume create tank p --resiliency=parity --size=24M --drives=3 "${drives[@]}"
check "serve p" serve_volume p
check "p: write a pattern (seed $((SEED + 1)))" write_volume p 1
check "p: stopped" stop_volume p
read -r p_size0 _ _ <<<"$(size_of p)"

# examine and zero-superblock on ranges: a mirror whose member is zeroed
# is degraded, and a degraded volume is not grown
check "volume create m: RAID 1 on 2 drives, 8M" \
    "$URAID" volume create tank m --level=1 --size=8M --drives=2 "${drives[@]}"
read -r m0 m1 <<<"$(members_of m)"
echo "  m's members: $m0 $m1"
check "examine a range: m's superblock, RAID 1" \
    bash -c "'$URAID' examine '$m0' | grep -q 'Raid Level : raid1'"
check "examine --json a range" \
    bash -c "'$URAID' examine --json '$m0' | grep -q '\"superblock\": \"valid\"'"
refuse "the range ends past the end" examine "${m0%%+*}+999999999"
refuse "no md superblock" zero-superblock "${m0%%@*}@2048+2048"
check "zero-superblock a range" "$URAID" zero-superblock "$m0"
check "examine: no superblock in the range any more" \
    bash -c "! '$URAID' examine '$m0' 2>/dev/null"
check "the other member keeps its superblock" \
    bash -c "'$URAID' examine '$m1' | grep -q 'Raid Level : raid1'"
check "sgdisk -v: zeroing inside a range left the GPTs sound" gpt_sound
refuse "is degraded (1 of 2 members present" volume grow tank m --drives=3 "${drives[@]}"
check "volume delete m" "$URAID" volume delete tank m "${drives[@]}"

# refusals on p
check "volume create s: RAID 0 on 2 drives, 8M" \
    "$URAID" volume create tank s --level=0 --size=8M --drives=2 "${drives[@]}"
refuse "md does not change the size used on the members of raid0" \
    volume grow tank s --size=max "${drives[@]}"
check "volume delete s" "$URAID" volume delete tank s "${drives[@]}"
refuse "not enough drives: --drives=5, and pool 'tank' has 4" \
    volume grow tank p --drives=5 "${drives[@]}"
refuse "is on 3 drives already" volume grow tank p --drives=3 "${drives[@]}"
refuse "the largest size that fits is" volume grow tank p --size=10G "${drives[@]}"
refuse "one of them" volume grow tank p --drives=4 --size=max "${drives[@]}"
refuse "has no volume 'nope'" volume grow tank nope --drives=4 "${drives[@]}"
check "serve p" serve_volume p
refuse "volume 'p' is served: --size" volume grow tank p --size=max "${drives[@]}"
refuse "is a member of the served array 'p'" zero-superblock "$(members_of p | cut -d' ' -f1)"
check "p: stopped" stop_volume p

# --drives in process: RAID 5 3 -> 4
check "volume grow p --drives=4 (not served: in process)" \
    "$URAID" volume grow tank p --drives=4 "${drives[@]}"
check "sgdisk -v after --drives" gpt_sound
read -r p_size1 p_disks1 p_health1 <<<"$(size_of p)"
echo "  p: $p_size0 -> $p_size1 bytes, $p_disks1 drives, $p_health1"
check "p: 4 drives, clean, larger" \
    test "$p_disks1" = 4 -a "$p_health1" = clean -a "$p_size1" -gt "$p_size0"
check "sgdisk -p: p's partition on d3.img, named as the others" \
    bash -c "sgdisk -p d3.img | grep -q 'tank/p'"
check "serve p" serve_volume p
check "p: the pattern reads back after the reshape" same_prefix p
check "p: stopped" stop_volume p

# --size=SIZE in process: the smallest growth that holds it (room is left
# after p for q)
check "volume grow p --size=50M" "$URAID" volume grow tank p --size=50M "${drives[@]}"
check "sgdisk -v after --size" gpt_sound
read -r p_size2 p_disks2 p_health2 <<<"$(size_of p)"
echo "  p: $p_size1 -> $p_size2 bytes, $p_health2"
check "p: at least 50 MiB, less than 53 (whole MiBs per partition, 3 data drives), clean" \
    test "$p_health2" = clean -a "$p_size2" -ge $((50 << 20)) -a "$p_size2" -lt $((53 << 20))
check "serve p" serve_volume p
check "p: the NBD export has the new size" \
    test "$(nbdinfo --size "$(uri p)")" = "$p_size2"
check "p: the pattern reads back after --size" same_prefix p
check "p: stopped" stop_volume p

# --drives through the server while it serves: q, RAID 5 3 -> 4
check "volume create q: parity on 3 drives, 12M" \
    "$URAID" volume create tank q --resiliency=parity --size=12M --drives=3 "${drives[@]}"
check "serve q" serve_volume q
check "q: write a pattern (seed $((SEED + 2)))" write_volume q 2
check "volume grow q --drives=4 (served: through its server)" \
    "$URAID" volume grow tank q --drives=4 "${drives[@]}"
reshaped() {
    for _ in $(seq 600); do
        "$URAID" status q 2>/dev/null | grep -q "Background : none; last reshape completed" &&
            return 0
        sleep 0.1
    done
    "$URAID" status q
    return 1
}
check "q: the reshape ends in the server" reshaped
check "q: the pattern reads back" same_prefix q
check "q: stopped" stop_volume q
read -r q_size1 q_disks q_health <<<"$(size_of q)"
check "q: 4 drives, clean" test "$q_disks" = 4 -a "$q_health" = clean
check "sgdisk -v after q's grow" gpt_sound
refuse "no room right after the partition of volume 'p'" \
    volume grow tank p --size=max "${drives[@]}"

# --size=max in process: q takes the rest of the drives
check "volume grow q --size=max" "$URAID" volume grow tank q --size=max "${drives[@]}"
check "sgdisk -v after --size=max" gpt_sound
read -r q_size2 _ q_health2 <<<"$(size_of q)"
echo "  q: $q_size1 -> $q_size2 bytes, $q_health2"
check "q: larger, clean" test "$q_health2" = clean -a "$q_size2" -gt "$q_size1"
check "serve q" serve_volume q
check "q: the pattern reads back after --size=max" same_prefix q
check "q: stopped" stop_volume q

# a grown image file: reported, repaired as sgdisk -e
truncate -s 96M d3.img
check "sgdisk -v sees the grown drive's misplaced backup" \
    bash -c "! sgdisk -v d3.img | grep -q 'No problems found'"
check "pool status reports d3.img as grown" \
    bash -c "'$URAID' pool status tank ${drives[*]} 2>&1 | grep -q 'd3.img has grown (64 MiB -> 96 MiB)'"
free_d3() { "$URAID" pool status tank "${drives[@]}" --json 2>/dev/null | python3 -c '
import json, sys
print([d for d in json.load(sys.stdin)["drives"] if d["path"] == "d3.img"][0]["largest_free_bytes"])'; }
free_before=$(free_d3)
check "pool repair" "$URAID" pool repair tank "${drives[@]}"
check "sgdisk -v after the repair" gpt_sound
free_after=$(free_d3)
echo "  d3.img largest free: $free_before -> $free_after bytes"
check "d3.img's free space grew by the 32 MiB added" \
    test $((free_after - free_before)) -eq $((32 << 20))
check "pool repair again: nothing to repair" \
    bash -c "'$URAID' pool repair tank ${drives[*]} | grep -q 'nothing to repair'"
check "serve p" serve_volume p
check "p: the pattern reads back after the repair" same_prefix p
check "p: stopped" stop_volume p

# a pool name that another pool on the candidate drives has
truncate -s 64M x0.img
echo "DEVICE $work/d*.img" >u.conf
refuse "a pool named 'tank' exists already" pool create tank x0.img --config=u.conf
check "pool create --force makes a second 'tank'" \
    "$URAID" pool create tank x0.img --config=u.conf --force

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
