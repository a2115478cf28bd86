#!/bin/bash
# RAID 50 volumes in a pool (docs/pools.md, "RAID 50 and 60 volumes"): a
# pool of six image files with a RAID 50 volume (--resiliency=parity
# --groups=2: two inner RAID 5 arrays of three partitions, a RAID 0 over
# them) and a RAID 1 volume on two of the drives. pool status shows it
# (raid50, 2 groups, its inner arrays in --json, the largest RAID 50/60 that
# would still fit); the refusals (drives that do not split into the groups,
# groups of a mirror, RAID 50 without --groups, RAID 60 on too few drives,
# volume grow of it); one serve --pool exports both, fio writes each with
# verify=crc32c (seeded, printed) and verifies after each step: a drive
# failed (the inner array its partition is in degrades, and the RAID 1 on
# it too), the drive gone, a spare drive added to the served pool (the
# degraded inner array rebuilds onto its partition, then the RAID 1), a
# restart on the drives left; volume delete refused while served, then done
# (sgdisk -v finds every GPT sound).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
need sgdisk nbdinfo fio python3 curl
work_dir pool-nested
cd "$work" || exit 1
SEED=5050
echo "seed $SEED"

for i in 0 1 2 3 4 5; do truncate -s 48M d$i.img; done
drives=(d0.img d1.img d2.img d3.img d4.img d5.img)
vols=(big m)
sock=$work/tank.sock
uri() { echo "nbd+unix:///$1?socket=$sock"; }

check "pool create (six drives)" "$URAID" pool create tank "${drives[@]}" >/dev/null
refused() {    # refused EXIT TEXT ARGS...: volume create ARGS fails with EXIT, says TEXT in one line
    local code=$1 text=$2 out rc; shift 2
    out=$("$URAID" volume create tank x "$@" "${drives[@]}" 2>&1); rc=$?
    [ $rc -eq "$code" ] && [[ $out == *"$text"* ]] || { echo "exit $rc: $out"; return 1; }
    one_line "$out"
}
check "RAID 50 on 5 drives in 2 groups: refused" \
    refused 2 "do not split into 2 groups" --resiliency=parity --groups=2 --drives=5 --size=8M
check "RAID 50 on 4 drives in 2 groups: refused (a group needs 3)" \
    refused 2 "a RAID 50 group needs at least 3 drives: 4 drives in 2 groups give 2 per group" \
    --resiliency=parity --groups=2 --drives=4 --size=8M
check "--groups with mirror: refused" \
    refused 2 "--groups is for parity or dual-parity" --resiliency=mirror --groups=2 --size=8M
check "--level=50 without --groups: refused" refused 2 "needs --groups=G" --level=50 --size=8M
check "RAID 60 in 2 groups on 6 drives: refused (needs 8)" \
    refused 2 "raid60 of that many groups needs 8 drives" --resiliency=dual-parity --groups=2 --size=8M
check "RAID 50 larger than the pool: refused with the largest that fits" \
    refused 1 "the largest raid50 volume that fits is" --resiliency=parity --groups=2 --size=1G
check "volume create big: parity, 2 groups (RAID 50)" \
    bash -c "'$URAID' volume create tank big --resiliency=parity --groups=2 --size=48M ${drives[*]} >'$work/create.out' &&
             grep -q 'RAID 50: a RAID 0 of 2 RAID 5 arrays' '$work/create.out' || { cat '$work/create.out'; exit 1; }"
check "volume create m: RAID 1 on 2 drives" \
    "$URAID" volume create tank m --level=1 --drives=2 --size=8M "${drives[@]}" >/dev/null

pool_json() { "$URAID" pool status --json tank "${drives[@]}"; }
# vol_is VOLUME PYTHON-EXPR: the expression on v (the volume's pool status --json) is true
vol_is() {
    pool_json | python3 -c 'import json,sys
d = json.load(sys.stdin); v = [x for x in d["volumes"] if x["name"] == sys.argv[1]][0]
ok = eval(sys.argv[2])
if not ok: print(json.dumps(v))
sys.exit(0 if ok else 1)' "$1" "$2"
}
check "pool status --json: big is raid50, 2 groups of 3, 6 drives, >= 48M" vol_is big \
    'v["level"] == "raid50" and v["resiliency"] == "parity" and v["groups"] == 2 and v["raid_disks"] == 6 and [g["raid_disks"] for g in v["inner"]] == [3, 3] and [g["present"] for g in v["inner"]] == [3, 3] and sorted(g["name"] for g in v["inner"]) == ["big-0", "big-1"] and v["size_bytes"] >= 48 << 20 and len(v["members"]) == 6'
check "pool status: 'raid50, 2 groups'" bash -c "'$URAID' pool status tank ${drives[*]} | grep -q '^  big  *raid50, 2 groups'"
check "pool status: the largest new RAID 50 and 60" bash -c "
    out=\$('$URAID' pool status tank ${drives[*]}); grep -q '^  raid50 .* on 6 drives, 2 groups' <<<\"\$out\" &&
    grep -q '^  raid60  *- (needs 8 drives' <<<\"\$out\" || { echo \"\$out\"; exit 1; }"
grow_refused() {
    local out
    out=$("$URAID" volume grow tank big --size=max "${drives[@]}" 2>&1) && { echo "accepted"; return 1; }
    [[ $out == *"stacked arrays are not grown"* ]] || { echo "$out"; return 1; }
    one_line "$out"
}
check "volume grow big: refused (stacked arrays)" grow_refused

serve_pool() {
    rm -f "$work/tank.pid"
    "$URAID" serve --pool=tank --socket="$sock" --threads=2 --pid-file="$work/tank.pid" \
        --metrics=127.0.0.1:0 "$@" \
        >>"$work/tank.out" 2>>"$work/tank.err" &
    spid=$!
    for _ in $(seq 100); do [ -s "$work/tank.pid" ] && return 0; sleep 0.1; done
    cat "$work/tank.err"
    return 1
}
stop_pool() { "$URAID" stop tank >/dev/null || kill "$spid"; wait "$spid"; local rc=$?; spid=; return $rc; }
fio_all() {    # fio_all write|verify: a job per export at once
    local args=() v
    [ "$1" = verify ] && args+=(--verify_only)
    for v in "${vols[@]}"; do args+=(--name="$v" --uri="$(uri "$v")" --size=100%); done
    fio --ioengine=nbd --rw=write --bs=64k --iodepth=8 --verify=crc32c --verify_fatal=1 \
        --verify_state_save=0 --randseed="$SEED" --output="$work/fio.out" "${args[@]}" >/dev/null 2>&1
    local rc=$?
    [ $rc -eq 0 ] || tail -20 "$work/fio.out"
    [ $rc -eq 0 ] && ! grep -q "err=[ ]*[1-9]" "$work/fio.out"
}

check "serve --pool=tank: both volumes" serve_pool "${drives[@]}"
# uraid monitor on the served pool: each event through a program that
# records it (EVENT ARRAY [MEMBER] a line); the inner arrays are arrays of
# their own there (big/big-0), as mdadm --monitor reports md's under a RAID 0
recorder() {   # recorder FILE: a program that appends its arguments to FILE
    printf '#!/bin/sh\necho "$*" >>"%s"\n' "$work/$1" >"$work/rec-$1" && chmod +x "$work/rec-$1"
}
recorder events
"$URAID" monitor --no-syslog --program="$work/rec-events" 2>"$work/monitor.err" &
mpid=$!
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; kill "$mpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -S "$URAID_RUN_DIR/monitors/$mpid.sock" ] && break; sleep 0.1; done
# wait_for FILE PATTERN: until a line of FILE matches (grep -E), at most 30 s
wait_for() {
    for _ in $(seq 300); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "  waited 30 s for '$2' in $1; it holds:"; sed 's/^/    /' "$1" 2>/dev/null
    return 1
}
size_is() {
    local want got
    want=$(pool_json | python3 -c 'import json,sys; print([v["size_bytes"] for v in json.load(sys.stdin)["volumes"] if v["name"] == "big"][0])')
    got=$(nbdinfo --size "$(uri big)") || return 1
    [ "$got" = "$want" ] || { echo "export $got, pool status $want"; return 1; }
}
check "export big: the RAID 0's size, as pool status says" size_is
check "uraid status tank/big: the inner arrays after the RAID 0" \
    bash -c "[ \$('$URAID' status tank/big | grep -c '^Inner array [12] of 2') -eq 2 ]"
check "fio: write both volumes at once, verify=crc32c" fio_all write

# a drive added while nothing is degraded (pool add needs every drive of
# the pool, so before one is gone): nothing to rebuild yet
truncate -s 48M d6.img
check "pool add tank d6.img (served, nothing degraded)" \
    bash -c "'$URAID' pool add tank d6.img ${drives[*]} >'$work/add.out' 2>&1 && grep -q \"no volume of pool 'tank' is degraded\" '$work/add.out' || { cat '$work/add.out'; exit 1; }"

# fail d1.img: its partition of big is in big-0 (the first three drives in
# placement order), and m is on it too
eventually() { for _ in $(seq 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done; "$@"; }
inner_present() { vol_is big "[g[\"present\"] for g in sorted(v[\"inner\"], key=lambda g: g[\"name\"])] == $1"; }
check "uraid fail tank d1.img" "$URAID" fail tank d1.img >/dev/null
check "monitor: Fail names the inner array (big/big-0) and d1.img's partition" \
    wait_for "$work/events" '^Fail big/big-0 .*d1\.img'
check "monitor: Fail of m too" wait_for "$work/events" '^Fail m .*d1\.img'
check "monitor: no Fail of the whole RAID 0 (big stays whole)" bash -c "! grep -q '^Fail big ' '$work/events'"
oneshot_degraded() {
    rm -f "$work/events1"
    recorder events1
    timeout 30 "$URAID" monitor --oneshot --no-syslog --program="$work/rec-events1" 2>/dev/null
    grep -qx 'DegradedArray big/big-0' "$work/events1" && grep -qx 'DegradedArray m' "$work/events1" &&
        ! grep -qE '^DegradedArray (big/big-1|big)$' "$work/events1" || { cat "$work/events1"; return 1; }
}
m_degraded() { [ "$("$URAID" status --json tank/m | python3 -c 'import json,sys; print(json.load(sys.stdin)["degraded"])')" = "$1" ]; }
check "m degraded" eventually m_degraded 1
check "big-0 degraded (2 of 3), big-1 whole (pool status)" eventually inner_present "[2, 3]"
check "monitor --oneshot: DegradedArray big/big-0 and m (not big-1, not big)" oneshot_degraded
check "pool status: big degraded, big-0 named" bash -c "'$URAID' pool status tank ${drives[*]} | grep -q 'degraded (big-0: 2 of 3)'"
check "uraid status tank/big: degraded (its inner array)" \
    bash -c "'$URAID' status tank/big | grep -qi 'degraded'"
inner_json() {   # status --json tank/big: each inner array's name and degraded count
    "$URAID" status --json tank/big | python3 -c 'import json,sys
print(" ".join("%s:%d" % (g["name"], g["degraded"]) for g in sorted(json.load(sys.stdin)["inner"], key=lambda g: g["name"])))'
}
inner_degraded() { [ "$(inner_json)" = "$1" ] || { inner_json; return 1; }; }
check "uraid status --json tank/big: inner big-0 degraded" eventually inner_degraded "big-0:1 big-1:0"
metrics_inner() {
    local url page
    url=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$work/tank.out" | tail -1)
    page=$(curl -sf "$url") || return 1
    grep -q '^uraid_array_degraded_slots{array="big/big-0".* 1$' <<<"$page" &&
        grep -q '^uraid_array_degraded_slots{array="big/big-1".* 0$' <<<"$page" &&
        grep -q '^uraid_array_degraded_slots{array="big",' <<<"$page" &&
        [ "$(grep -c '^# TYPE uraid_array_degraded_slots ' <<<"$page")" -eq 1 ] || { grep degraded_slots <<<"$page"; return 1; }
}
check "metrics: the inner arrays too (big/big-0 degraded), each family once" metrics_inner
rm -f d1.img
drives=(d0.img d2.img d3.img d4.img d5.img d6.img)
check "fio: verify both, degraded and d1.img gone" fio_all verify

# the spare given to the served pool: big-0's partition and m's rebuilt on it
check "uraid add tank d6.img: a spare for big and m" \
    bash -c "'$URAID' add tank '$work/d6.img' >'$work/add.out' 2>&1 && grep -q \"a spare for volume 'big'\" '$work/add.out' || { cat '$work/add.out'; exit 1; }"
rebuilt() {
    for _ in $(seq 300); do
        inner_present "[3, 3]" >/dev/null 2>&1 && m_degraded 0 && return 0
        sleep 0.2
    done
    inner_present "[3, 3]" && m_degraded 0
}
check "big-0 and m rebuilt onto d6.img" rebuilt
check "monitor: RebuildFinished big/big-0" wait_for "$work/events" '^RebuildFinished big/big-0$'
check "monitor: RebuildStarted before RebuildFinished, both naming big/big-0" python3 -c '
import sys
ev = open(sys.argv[1]).read().splitlines()
print("  events:", ev)
s, f = ev.index("RebuildStarted big/big-0"), ev.index("RebuildFinished big/big-0")
sys.exit(0 if s < f and "RebuildStarted big" not in ev else 1)' "$work/events"
check "the server added big's spare to its inner array" \
    grep -q "d6.img@[0-9+]* added to volume 'big' as a spare" "$work/tank.err"
check "sgdisk -v: d6.img's GPT sound" bash -c "sgdisk -v d6.img | grep -q 'No problems found'"
check "fio: verify both, rebuilt" fio_all verify
check "stop" stop_pool

check "serve --pool=tank again (d1.img gone, d6.img in)" serve_pool "${drives[@]}"
check "after the restart: every inner array whole" inner_present "[3, 3]"
check "fio: verify both after the restart" fio_all verify
delete_refused() {
    local out
    out=$("$URAID" volume delete tank big "${drives[@]}" 2>&1) && { echo "accepted"; return 1; }
    [[ $out == *"is in use"* ]] || { echo "$out"; return 1; }
}
check "volume delete big while served: refused" delete_refused
check "stop" stop_pool
# the RAID 0's superblock lies 4 KiB into each inner array's data: on the
# member of slot 0 (left-symmetric, row 0), 4 KiB past its data offset,
# and its copy in the row's parity (slot 2; slot 1's block there is the
# RAID 0's empty metadata area). outer_sbs N: those N members hold md's
# magic there (big's members, their data offsets and roles read by examine
# before the delete)
big_members=$(pool_json | python3 -c 'import json,sys; print(" ".join([v for v in json.load(sys.stdin)["volumes"] if v["name"] == "big"][0]["members"]))')
# shellcheck disable=SC2086
"$URAID" examine --json $big_members >"$work/big-examine.json"
outer_sbs() {
    python3 - "$1" "$work/big-examine.json" <<'PY'
import json, re, struct, sys
want, found = int(sys.argv[1]), []
roles = []
for m in json.load(open(sys.argv[2])):
    path, start = re.match(r"(.*)@(\d+)\+\d+$", m["device"]).groups()
    with open(path, "rb") as f:
        f.seek(int(start) * 512 + m["data_offset_bytes"] + 4096)
        if struct.unpack("<I", f.read(4))[0] == 0xa92b4efc:
            found.append("%s role %d" % (m["device"], m["role_number"]))
            roles.append(m["role_number"])
print("RAID 0 superblocks on the inner arrays' data:", found or "none")
sys.exit(0 if len(found) == want and (not want or sorted(roles) == [0, 0, 2, 2]) else 1)
PY
}
check "before the delete: the RAID 0's superblock on each inner array's data, and in its parity (4)" outer_sbs 4
check "volume delete big: the RAID 0's superblocks erased too" \
    bash -c "'$URAID' volume delete tank big ${drives[*]} --json | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(d[\"partitions_removed\"] != 6 or d[\"outer_superblocks_erased\"] != 4)'"
check "after the delete: no RAID 0 superblock left in big's space" outer_sbs 0
check "after the delete: examine finds no superblock on big's partitions" \
    bash -c "'$URAID' examine --json $big_members | python3 -c 'import json,sys; sys.exit(any(m[\"superblock\"] != \"none\" for m in json.load(sys.stdin)))'"
check "pool status: only m left" vol_is m 'len(d["volumes"]) == 1'
sound() { local f; for f in "${drives[@]}"; do sgdisk -v "$f" | grep -q 'No problems found' || { echo "$f"; return 1; }; done; }
check "sgdisk -v: every GPT sound" sound

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
