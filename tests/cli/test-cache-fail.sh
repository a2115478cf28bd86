#!/bin/bash
# A member fails under load with the write-back cache on: fio (nbd engine,
# two connections, random reads and writes of 4 KiB .. 1 MiB, crc32c verify
# of every block it reads back, verify_fatal) runs against `uraid serve
# --write-cache=back` on RAID 5 (four members; RAID 6, five members, loses
# two), and `uraid fail` fails a member in the middle of the run: what was
# dirty in the cache is destaged to the degraded array, and fio's verify
# passes. Then a verify-only pass over everything written, a clean stop
# (which drains the cache), a restart degraded, and the same verify-only
# pass again: what was acknowledged reached the members.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need fio nbdinfo python3
work_dir cache-fail
SEED=${SEED:-20261202}
CACHE_SIZE=${CACHE_SIZE:-16M}
echo "seed $SEED, --write-cache=back --cache-size=$CACHE_SIZE, work in $work"
sock=$work/s.sock
uri="nbd+unix:///?socket=$sock"

# fio_verify JOBNAME SIZE-BYTES [extra fio args]: two connections, one per
# half of the export
fio_verify() {
    local half=$(( $2 / 2 / 1048576 ))M
    (cd "$work" && fio --ioengine=nbd --uri="$uri" --rw=randrw --rwmixread=50 \
        --bssplit=4k/40:8k/20:64k/20:512k/10:1m/10 --iodepth=32 \
        --verify=crc32c --verify_fatal=1 --verify_state_save=0 --randseed="$SEED" \
        --group_reporting --output="$work/fio.out" "${@:3}" \
        --name="$1-a" --offset=0 --size="$half" --name="$1-b" --offset="$half" --size="$half" \
        >/dev/null 2>&1)
    local rc=$?
    [ $rc -eq 0 ] || tail -20 "$work/fio.out"
    grep -q "err= 0" "$work/fio.out" && [ $rc -eq 0 ]
}
# wc_json NAME: the write_cache object of status --json
wc_json() {
    "$URAID" status --json "$1" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin).get("write_cache")))'
}
# wc_writes NAME: the writes the cache has taken so far (writes_cached)
wc_writes() { "$URAID" status --json "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["write_cache"]["writes_cached"])'; }
# loaded NAME WRITES: the cache has taken 64 writes more than WRITES (fio's,
# under way: not the fill's), and holds dirty bytes to destage (up to 30 s)
loaded() {
    status_until "$1" 30 "d['write_cache']['writes_cached'] >= $2 + 64
and d['write_cache']['dirty_bytes'] > 0"
}
# fail_loaded MEMBER: uraid fail MEMBER, with fio ($fpid) still running after it
fail_loaded() {
    "$URAID" fail "$1" >/dev/null || return 1
    kill -0 "$fpid" 2>/dev/null || { echo "  fio had ended before the failure"; return 1; }
}

for level in 5 6; do
    name=wf$level
    n=$(( level == 5 ? 4 : 5 ))
    m=()
    for i in $(seq 0 $((n - 1))); do truncate -s 48M "$work/$name.$i"; m+=("$work/$name.$i"); done
    "$URAID" create --level=$level --raid-devices=$n --name=$name --chunk=64 --run \
        "${m[@]}" >/dev/null || { fails=$((fails + 1)); continue; }
    serve_bg "$work" s --write-cache=back --cache-size="$CACHE_SIZE" "${m[@]}" ||
        { fails=$((fails + 1)); continue; }
    size=$(nbdinfo --size "$uri")
    check "raid$level: filled through the write-back cache, verified" \
        fio_verify "$name-fill" "$size" --rw=write --bs=1m
    taken=$(wc_writes $name)
    # 8 s of load (12 for RAID 6: two failures to fit in, each after fio's
    # writes are seen, a poll of status a second or more at a load of 9)
    fio_verify "$name" "$size" --time_based --runtime=$((level == 6 ? 12 : 8)) --verify_backlog=64 &
    fpid=$!
    check "raid$level: fio's writes reach the cache (64 more than the fill's $taken), dirty" \
        loaded $name "$taken"
    echo "  before the failure: write_cache $(wc_json $name)"
    taken=$(wc_writes $name)
    check "raid$level: uraid fail ${m[1]##*/} under load" fail_loaded "${m[1]}"
    if [ "$level" = 6 ]; then
        check "raid6: fio's writes go on into the cache, degraded" loaded $name "$taken"
        check "raid6: a second uraid fail under load" fail_loaded "${m[3]}"
    fi
    wait $fpid
    check "raid$level: fio verify passed while members failed ($(grep -o 'WRITE: bw=[^,]*' "$work/fio.out"))" \
        test $? -eq 0
    echo "  after the run: write_cache $(wc_json $name)"
    check "raid$level: a verify-only pass over the whole array" \
        fio_verify "$name-check" "$size" --rw=read --verify_only=1
    check "raid$level: the cache reported no destage errors" python3 -c '
import json, sys
w = json.loads(sys.argv[1])
assert isinstance(w, dict) and w.get("destage_errors", 0) == 0, w' "$(wc_json $name)"
    check "raid$level: stopped cleanly (the cache drained)" stop_served $name
    if [ "$level" = 5 ]; then
        alive=("${m[0]}" "${m[2]}" "${m[3]}")
    else
        alive=("${m[0]}" "${m[2]}" "${m[4]}")
    fi
    serve_bg "$work" s --run "${alive[@]}" || { fails=$((fails + 1)); continue; }
    check "raid$level: restarted degraded, write-through: the same verify-only pass" \
        fio_verify "$name-check" "$size" --rw=read --verify_only=1
    check "raid$level: stopped" stop_served $name
    rm -f "${m[@]}"
done
echo "$fails failed"
[ $fails -eq 0 ]
