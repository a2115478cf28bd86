#!/bin/bash
# One `uraid serve --pool` serving every volume of a pool (docs/pools.md): a
# pool of four image files with a two-way mirror (RAID 1 on two drives), a
# parity (RAID 5) and a dual-parity (RAID 6) volume; nbdinfo --list shows
# the three exports; fio writes each through its export at once with
# verify=crc32c (seeded, printed) and verifies again after each step: a
# spare drive given with `uraid pool add` while nothing is degraded (nothing
# done), the first drive (every volume's first member) failed with `uraid
# fail POOL DRIVE` (every volume on it degraded) and deleted, another pool's
# drive refused by `uraid add POOL DRIVE` (its GPT unchanged), the spare
# given with `uraid add POOL DRIVE` (each degraded volume gets a partition
# on it, of the size read at start, and is rebuilt, the next one only once
# the one before is in sync), a restart, and a member failed in one volume only (`uraid fail POOL/VOLUME MEMBER`: the
# same drive is failed in the other volume on it). Also: an unknown export
# name is refused with the exports named, the default name is refused, a
# verb about one volume given the pool is refused with how to name one,
# status/status --json of the pool and of POOL/VOLUME, the metrics label
# each volume, and sgdisk finds the spare's GPT sound.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
need sgdisk nbdinfo fio python3 curl
work_dir pool-serve
cd "$work" || exit 1
SEED=2213
echo "seed $SEED"

for i in 0 1 2 3; do truncate -s 64M d$i.img; done
drives=(d0.img d1.img d2.img d3.img)
vols=(m2 p1 q1)
sock=$work/tank.sock
uri() { echo "nbd+unix:///$1?socket=$sock"; }

check "pool create" "$URAID" pool create tank "${drives[@]}" >/dev/null
check "volume create: mirror on 2 drives" \
    "$URAID" volume create tank m2 --resiliency=mirror --size=8M --drives=2 "${drives[@]}" >/dev/null
check "volume create: parity" \
    "$URAID" volume create tank p1 --resiliency=parity --size=12M "${drives[@]}" >/dev/null
check "volume create: dual-parity" \
    "$URAID" volume create tank q1 --resiliency=dual-parity --size=8M "${drives[@]}" >/dev/null

serve_pool() {
    rm -f "$work/tank.pid"
    "$URAID" serve --pool=tank --socket="$sock" --threads=2 --pid-file="$work/tank.pid" \
        --metrics=127.0.0.1:0 "$@" >>"$work/tank.out" 2>>"$work/tank.err" &
    spid=$!
    for _ in $(seq 100); do [ -s "$work/tank.pid" ] && return 0; sleep 0.1; done
    cat "$work/tank.err"
    return 1
}
stop_pool() { "$URAID" stop tank >/dev/null || kill "$spid"; wait "$spid"; local rc=$?; spid=; return $rc; }

# fio_all MODE: one fio, a job per export at once; MODE write (sequential
# writes, each block verified with crc32c) or verify (--verify_only: the
# blocks written read back and checked)
fio_all() {
    local args=() v
    [ "$1" = verify ] && args+=(--verify_only)
    for v in "${vols[@]}"; do
        args+=(--name="$v" --uri="$(uri "$v")" --size=100%)
    done
    fio --ioengine=nbd --rw=write --bs=64k --iodepth=8 --verify=crc32c --verify_fatal=1 \
        --verify_state_save=0 --randseed="$SEED" --output="$work/fio.out" "${args[@]}" \
        >/dev/null 2>&1
    local rc=$?
    [ $rc -eq 0 ] || tail -20 "$work/fio.out"
    [ $rc -eq 0 ] && ! grep -q "err=[ ]*[1-9]" "$work/fio.out"
}

# json_of TARGET KEY: a field of status --json TARGET
json_of() { "$URAID" status --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"; }
degraded_all() {   # every volume has N slots degraded
    local v d
    for v in "${vols[@]}"; do
        d=$(json_of "tank/$v" degraded) || return 1
        [ "$d" = "$1" ] || { echo "$v: $d degraded, expected $1"; return 1; }
    done
}

check "serve --pool=tank (every volume)" serve_pool "${drives[@]}"
check "one process serves the three volumes" bash -c "[ \$(grep -c \"^uraid serve: export '\" '$work/tank.out') -eq 3 ]"
listed() {
    local out
    out=$(nbdinfo --list "nbd+unix:///?socket=$sock" 2>&1) || { echo "$out"; return 1; }
    for v in "${vols[@]}"; do [[ $out == *"export=\"$v\""* ]] || { echo "$out"; return 1; }; done
}
check "nbdinfo --list: the three exports" listed
refused_name() {   # nbdinfo on NAME fails; the server's message names the exports
    local out
    out=$(LIBNBD_DEBUG=1 nbdinfo "$(uri "$1")" 2>&1) && { echo "accepted: $1"; return 1; }
    [[ $out == *"$2"* ]] || { echo "$out" | grep -i "server error" | head -3; return 1; }
}
check "unknown export: refused, the exports named" \
    refused_name nope "no export 'nope'; the exports: m2, p1, q1"
check "default export with three: refused" refused_name "" "no default export here (there are 3)"

check "fio: write every volume at once, verify=crc32c" fio_all write
check "uraid status: a line per volume" bash -c "[ \$('$URAID' status | grep -c '$sock') -eq 3 ]"
check "uraid status tank: every volume" bash -c "[ \$('$URAID' status tank | grep -c \"^Volume '\") -eq 3 ]"
check "uraid status --json tank: the pool's volumes" bash -c "'$URAID' status --json tank |
    python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(d[\"pool\"] != \"tank\" or [v[\"name\"] for v in d[\"volumes\"]] != [\"m2\",\"p1\",\"q1\"])'"
level_is() { [ "$(json_of "$1" level)" = "$2" ]; }
check "uraid status tank/p1: raid5" level_is tank/p1 raid5
refused_verb() {
    local out
    out=$("$URAID" check tank 2>&1) && { echo "accepted"; return 1; }
    [[ $out == *"pool 'tank' has 3 (m2, p1, q1): name one as tank/VOLUME"* ]] || { echo "$out"; return 1; }
    one_line "$out"
}
check "uraid check tank: refused, says how to name a volume" refused_verb
metrics_labels() {
    local url page v
    url=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$work/tank.out" | tail -1)
    page=$(curl -sf "$url") || return 1
    for v in "${vols[@]}"; do
        grep -q "^uraid_array_degraded_slots{array=\"$v\"" <<<"$page" || { echo "no $v"; return 1; }
    done
    [ "$(grep -c '^# TYPE uraid_array_degraded_slots ' <<<"$page")" -eq 1 ]
}
check "metrics: each volume labelled, each family once" metrics_labels

# a spare drive given to the pool while nothing is degraded: nothing to do
truncate -s 64M d4.img
check "pool add tank d4.img (served, nothing degraded: nothing rebuilt)" \
    bash -c "'$URAID' pool add tank d4.img ${drives[*]} >'$work/add.out' 2>&1 && grep -q \"no volume of pool 'tank' is degraded\" '$work/add.out' || { cat '$work/add.out'; exit 1; }"

# the first drive (every volume's first member) fails and is gone: every
# volume degrades and still verifies
check "uraid fail tank d0.img: every volume" "$URAID" fail tank d0.img
check "every volume degraded by one" degraded_all 1
rm -f d0.img
check "fio: verify every volume, degraded" fio_all verify

# another pool's drive is refused, even with the first drive unreadable
truncate -s 64M d5.img
check "pool create other d5.img" "$URAID" pool create other d5.img >/dev/null
sgdisk -p d5.img >"$work/d5.before" 2>&1
other_refused() {
    local out
    out=$("$URAID" add tank "$work/d5.img" 2>&1) && { echo "accepted: $out"; return 1; }
    [[ $out == *"belongs to pool 'other', not to 'tank'"* ]] || { echo "$out"; return 1; }
}
check "uraid add tank d5.img (pool other's): refused" other_refused
check "d5.img's GPT unchanged" bash -c "sgdisk -p d5.img | cmp -s - '$work/d5.before'"

# the spare drive given to the served pool: every volume rebuilt, though
# the failed drive (where each volume's partition size was read) is gone
check "uraid add tank d4.img: a spare for every volume" \
    bash -c "'$URAID' add tank '$work/d4.img' >'$work/add.out' 2>&1 && grep -q \"a spare for volume 'q1'\" '$work/add.out' || { cat '$work/add.out'; exit 1; }"
rebuilt() {
    for _ in $(seq 300); do degraded_all 0 >/dev/null 2>&1 && return 0; sleep 0.2; done
    degraded_all 0
}
check "every volume rebuilt onto d4.img" rebuilt
# one rebuild at a time: each volume's spare added only once the one before
# is in sync (the server's log, in volume order)
one_at_a_time() {
    local seq want="A:m2 S:m2 A:p1 S:p1 A:q1 S:q1 "
    for _ in $(seq 300); do
        seq=$(sed -n "s/.*d4.img@[0-9+]* added to volume '\([a-z0-9]*\)'.*/A:\1/p
s/.*volume '\([a-z0-9]*\)': .*d4.img@[0-9+]* is in sync: rebuilt.*/S:\1/p" "$work/tank.err" | tr '\n' ' ')
        [ "$seq" = "$want" ] && break
        sleep 0.1
    done
    [ "$seq" = "$want" ] || { echo "server log: '$seq', expected '$want'"; return 1; }
    ! grep "not needed" "$work/tank.err"
}
check "one rebuild at a time (the server's log, in volume order)" one_at_a_time
check "sgdisk -v: the spare's GPT is sound" bash -c "sgdisk -v d4.img | grep -q 'No problems found'"
check "fio: verify every volume, rebuilt" fio_all verify
stop_volume_refused() {
    local out
    out=$("$URAID" stop tank/p1 2>&1) && { echo "accepted"; return 1; }
    [[ $out == *"stop them all with 'uraid stop tank'"* ]] || { echo "$out"; return 1; }
    "$URAID" status --json tank/p1 >/dev/null
}
check "uraid stop tank/p1: refused (the pool stops whole), still served" stop_volume_refused
check "stop" stop_pool

drives=(d1.img d2.img d3.img d4.img)
check "serve --pool=tank again (five drives)" serve_pool "${drives[@]}"
check "every volume clean after the restart" degraded_all 0
check "fio: verify every volume after the restart" fio_all verify

# a member failed in one volume: the pool fails that drive in the others
member_on() {   # member_on VOLUME DRIVE: its member's path on the drive
    "$URAID" status --json "tank/$1" | python3 -c 'import json,sys
for m in json.load(sys.stdin)["members"]:
    if m["device"].split("@")[0].endswith(sys.argv[1]): print(m["device"])' "$2"
}
p1_d2=$(member_on p1 d2.img)
echo "p1's member on d2.img: $p1_d2"
check "uraid fail tank/p1 (its member on d2.img)" "$URAID" fail tank/p1 "$p1_d2"
follows() {
    for _ in $(seq 300); do
        [ "$(json_of tank/q1 degraded)" = 1 ] && return 0
        sleep 0.1
    done
    echo "q1 degraded: $(json_of tank/q1 degraded)"; return 1
}
check "q1 (on d2.img too) failed there as well" follows
m2_clean() { [ "$(json_of tank/m2 degraded)" = 0 ]; }
check "m2 (not on d2.img) untouched" m2_clean
check "the server says why" grep -q "drive .*d2.img failed in volume 'p1': set faulty in volume 'q1' too" "$work/tank.err"
check "fio: verify every volume" fio_all verify
check "stop" stop_pool
check "serve --pool --name: refused (the volumes name the exports)" bash -c "
    out=\$('$URAID' serve --pool=tank --name=x ${drives[*]} 2>&1); [ \$? -eq 2 ] && [[ \$out == *'each export is named after its volume'* ]]"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
