#!/bin/bash
# Pools (docs/pools.md) on four image files: uraid pool create writes GPTs that
# sgdisk and sfdisk read and find sound; three volumes of different
# resiliency (mirror, simple on two drives, parity on the rest of the space)
# are md arrays on partitions, served side by side (serve --pool --volume),
# written and read back through NBD (seeded patterns, printed), the same
# after a restart and after another volume is deleted. Refusals (a drive with
# a partition table, an md member, a drive of a pool, a volume too large, too
# few drives, a served volume) print one line, exit non-zero and leave every
# image byte-identical (sha256).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
need sgdisk sfdisk nbdcopy python3 sha256sum qemu-io
work_dir pool
cd "$work" || exit 1
SEED=2212
echo "seed $SEED"

for i in 0 1 2 3; do truncate -s 128M d$i.img; done
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

gpt_sound() {   # sgdisk -v finds no problem on every drive
    local d
    for d in "${drives[@]}"; do
        sgdisk -v "$d" | grep -q "No problems found" || { sgdisk -v "$d"; return 1; }
    done
}

check "pool create" "$URAID" pool create tank "${drives[@]}"
check "sgdisk -v: the new GPTs are sound" gpt_sound
check "sfdisk --dump: the label partition, uraid's label type" \
    bash -c "sfdisk --dump d0.img | grep -qi 'type=7E1F6D2A-3C9B-4F51-A0D8-5B2E6C4A9F13.*name=\"uraid-pool:tank\"'"

check "volume create: mirror, 48M" \
    "$URAID" volume create tank m1 --resiliency=mirror --size=48M "${drives[@]}"
check "volume create: simple on 2 drives, 32M" \
    "$URAID" volume create tank s1 --level=0 --size=32M --drives=2 "${drives[@]}"
check "volume create: parity, the rest" \
    "$URAID" volume create tank p1 --resiliency=parity --size=max "${drives[@]}"
check "sgdisk -v after the volumes" gpt_sound
check "sgdisk -p lists each volume's partition" \
    bash -c "sgdisk -p d0.img | grep -q 'tank/m1' && sgdisk -p d0.img | grep -q 'tank/p1' &&
             sgdisk -p d1.img | grep -q 'tank/s1'"

status_is() {   # the JSON status: three volumes, each clean, levels as made
    "$URAID" pool status tank "${drives[@]}" --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
v = {x["name"]: x for x in s["volumes"]}
want = dict(a.split("=") for a in sys.argv[1:])
ok = {n: v[n]["level"] for n in v} == want and all(x["health"] == "clean" for x in v.values())
ok = ok and len(s["drives"]) == 4 and len(s["largest_new_volume"]) == 5
sys.exit(0 if ok else print(json.dumps(s, indent=1)) or 1)' "$@"
}
check "pool status --json: three clean volumes" status_is m1=raid10 s1=raid0 p1=raid5
check "pool list finds it" bash -c "'$URAID' pool list ${drives[*]} | grep -q '^tank '"

# serve the three at once from the same image files
declare -A pid rpid
serve_volume() {
    local v=$1
    rm -f "$work/$v.pid"
    "$URAID" serve --pool=tank --volume="$v" --socket="$work/$v.sock" --threads=2 \
        --pid-file="$work/$v.pid" "${drives[@]}" >>"$work/$v.out" 2>>"$work/$v.err" &
    pid[$v]=$!
    for _ in $(seq 100); do [ -s "$work/$v.pid" ] && return 0; sleep 0.1; done
    cat "$work/$v.err"
    return 1
}
stop_volume() { "$URAID" stop "$1" >/dev/null || kill "${pid[$1]}"; wait "${pid[$1]}"; }
size_of() { nbdinfo --size "nbd+unix:///$1?socket=$work/$1.sock" 2>/dev/null ||
            python3 -c 'import nbd,sys; h=nbd.NBD(); h.connect_uri(sys.argv[1]); print(h.get_size())' \
                "nbd+unix:///$1?socket=$work/$1.sock"; }
write_volume() {   # a pattern from SEED+n over the whole volume
    local v=$1 n=$2 size
    size=$(size_of "$v") || return 1
    python3 -c 'import random, sys
r = random.Random(int(sys.argv[1])); left = int(sys.argv[2])
while left:
    n = min(left, 1 << 20); sys.stdout.buffer.write(r.randbytes(n)); left -= n' \
        $((SEED + n)) "$size" >"$work/$v.pat"
    nbdcopy "$work/$v.pat" "nbd+unix:///$v?socket=$work/$v.sock"
}
same_volume() {
    nbdcopy "nbd+unix:///$1?socket=$work/$1.sock" "$work/$1.back" && cmp "$work/$1.pat" "$work/$1.back"
}

n=0
for v in m1 s1 p1; do
    check "serve --pool=tank --volume=$v" serve_volume $v
done
for v in m1 s1 p1; do
    n=$((n + 1))
    check "$v: write a pattern (seed $((SEED + n)))" write_volume $v $n
done
for v in m1 s1 p1; do check "$v: the same bytes back" same_volume $v; done
# a trim and a zero of the whole of s1 (ranges of the files): the other
# volumes, the GPTs and the labels are not touched
tables() { for d in "${drives[@]}"; do
    dd if="$d" bs=1M count=2 status=none | sha256sum
    dd if="$d" bs=1M skip=127 status=none | sha256sum
done; }
tables_before=$(tables)
trim_zero() {   # discard, then write zeroes over all of s1; it reads back zeroes
    local size out
    size=$(size_of s1) || return 1
    out=$(qemu-io -f raw "nbd+unix:///s1?socket=$work/s1.sock" -c "discard 0 $size" \
        -c "write -z 0 $size" -c "read -P 0 0 $size" 2>&1) || { echo "$out"; return 1; }
    [[ $out != *"Pattern verification failed"* && $out != *rror* ]] || { echo "$out"; return 1; }
}
check "s1: trim and zero the whole volume (reads back zeroes)" trim_zero
for v in m1 p1; do check "$v: the same bytes after s1's trim and zero" same_volume $v; done
check "the GPTs and labels are unchanged by s1's trim and zero" \
    bash -c '[ "$1" = "$2" ]' _ "$tables_before" "$(tables)"
refuse "volume 's1' is in use" volume delete tank s1 "${drives[@]}"
for v in m1 s1 p1; do check "$v: stopped" stop_volume $v; done
check "sgdisk -v after serving" gpt_sound

check "volume delete s1 (not served), --json" bash -c "'$URAID' volume delete tank s1 ${drives[*]} --json | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(d[\"volume\"] != \"s1\" or d[\"partitions_removed\"] != 2)'"
check "its partitions are gone" bash -c "! sgdisk -p d0.img d1.img | grep -q 'tank/s1'"
check "pool status: two volumes left" status_is m1=raid10 p1=raid5
for v in m1 p1; do
    check "$v: served again" serve_volume $v
    check "$v: the same bytes after a restart and a delete" same_volume $v
    check "$v: stopped" stop_volume $v
done

# a partition of m1 fails: the volume degrades (pool status says so), and the
# partition, removed and added again, is rebuilt; the bytes stay the same
member_of() {   # member_of VOLUME SLOT: the member spec in that slot
    "$URAID" status "$1" --json | python3 -c 'import json, sys
print([m["device"] for m in json.load(sys.stdin)["members"] if m["slot"] == int(sys.argv[1])][0])' "$2"
}
in_sync() {   # in_sync VOLUME N: N members in sync within 60 s
    for _ in $(seq 120); do
        [ "$("$URAID" status "$1" --json | python3 -c 'import json, sys
print(sum(m["state"] == "in-sync" for m in json.load(sys.stdin)["members"]))')" = "$2" ] && return 0
        sleep 0.5
    done
    "$URAID" status "$1"
    return 1
}
check "m1: served for a failure" serve_volume m1
spec=$(member_of m1 1)
echo "m1's slot 1: $spec"
check "m1: fail a partition given as a range" "$URAID" fail m1 "$spec"
check "pool status: m1 degraded" bash -c "'$URAID' pool status tank ${drives[*]} | grep -q 'm1 .*degraded (3 of 4)'"
check "m1: remove it" "$URAID" remove m1 "$spec"
check "m1: add it again (rebuilt in full)" "$URAID" add --force m1 "$spec"
check "m1: rebuilt, 4 in sync" in_sync m1 4
check "m1: the same bytes after the rebuild" same_volume m1
check "m1: stopped" stop_volume m1
check "pool status: both clean again" status_is m1=raid10 p1=raid5

# refusals: one line, nothing written
truncate -s 64M x0.img x1.img x2.img
sgdisk -o x0.img >/dev/null
refuse "holds a partition table" pool create other x0.img x2.img
"$URAID" create --level=1 -n 2 x1.img x2.img >/dev/null 2>&1
refuse "holds an md superblock" pool create other x1.img
refuse "is a drive of pool 'tank'" pool create other d0.img
refuse "the largest mirror volume that fits is" \
    volume create tank big --resiliency=mirror --size=10G "${drives[@]}"
refuse "dual-parity needs at least 4 drives, not 3" \
    volume create tank dp --resiliency=dual-parity --size=1M --drives=3 "${drives[@]}"
refuse "has a volume 'm1' already" volume create tank m1 --level=1 --size=1M "${drives[@]}"
refuse "give --drives=N" volume grow tank m1 "${drives[@]}"
refuse "no drive of pool 'nope'" pool status nope "${drives[@]}"
refuse "not a pool name" pool create 'bad/name' x2.img

# a damaged primary GPT: reported, the backup used
printf 'XXXX' | dd of=d3.img bs=1 seek=$((512 + 16)) conv=notrunc status=none
check "a damaged primary GPT is reported and the backup used" \
    bash -c "'$URAID' pool status tank ${drives[*]} 2>&1 | grep -q 'd3.img: the primary GPT is damaged'"

# pool add finds every drive of the pool or refuses (a new drive must not take
# a missing drive's number); two different drives with one number are refused
truncate -s 8M e0.img e1.img e2.img e3.img e4.img
check "pool create four" "$URAID" pool create four e0.img e1.img e2.img e3.img
refuse "has 4 drives, 1 of them found" pool add four e4.img e0.img
cp e1.img e1copy.img
refuse "are both drive 1 of pool 'four'" pool status four e0.img e1.img e2.img e3.img e1copy.img
rm -f e1copy.img
check "pool add with every drive" "$URAID" pool add four e4.img e0.img e1.img e2.img e3.img
check "the new drive is number 4, five drives" bash -c "'$URAID' pool status four e?.img --json |
    python3 -c 'import json,sys; d=json.load(sys.stdin)[\"drives\"]; sys.exit(sorted(x[\"index\"] for x in d) != [0,1,2,3,4])'"
truncate -s 8M e5.img
refuse "has 5 drives, 4 of them found" pool add four e5.img e0.img e1.img e2.img e3.img

# three volume creates at once on one pool: each reads the tables under the
# lock, so each gets its own space and GPT entry (none overwrites another's)
truncate -s 64M r0.img r1.img
check "pool create race" "$URAID" pool create race r0.img r1.img
for v in a b c; do
    "$URAID" volume create race $v --level=1 --size=8M r0.img r1.img >"$work/race-$v.out" 2>&1 &
    rpid[$v]=$!
done
race_ok=0
for v in a b c; do wait "${rpid[$v]}" || { cat "$work/race-$v.out"; race_ok=1; }; done
check "three concurrent volume creates all succeed" test $race_ok -eq 0
check "all three volumes are in the pool" bash -c "
    s=\$('$URAID' pool status race r0.img r1.img --json) &&
    echo \"\$s\" | python3 -c 'import json,sys; v=sorted(x[\"name\"] for x in json.load(sys.stdin)[\"volumes\"]); sys.exit(v != [\"a\",\"b\",\"c\"])'"
check "sgdisk -v: the race's tables are sound" bash -c "sgdisk -v r0.img | grep -q 'No problems found' && sgdisk -v r1.img | grep -q 'No problems found'"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
