#!/bin/bash
# uraid grow --consistency-policy=ppl|resync|bitmap on a served RAID 5, as
# mdadm --grow does it:
#  - refusals, each exit 1 in one line with every member image unchanged
#    (sha256): PPL on RAID 6, with a bitmap, already there, no room (an
#    array as mdadm and uraid create it below 8 GiB has its bad-block log 16
#    sectors after the superblock: 4 KiB of room, 8 KiB needed, as mdadm
#    says "Not enough space to add ppl"), resync when already resync;
#  - on arrays without a bad-block log (mdadm --update=no-bbl, crafted
#    here), metadata 1.2 and 1.0: fio writes with verify while the PPL is
#    added; status and examine show it at once (1.2: 264 sectors at offset
#    8, mdadm's 4 KiB + 128 KiB for a 64 KiB chunk; 1.0: right after the
#    data); the server is killed (SIGKILL, every write whole: kill_whole)
#    mid-write, restarted: the PPL
#    was replayed (log), no resync, every write fio completed reads back,
#    check 0; then back to resync (status, examine: no PPL bit), killed
#    mid-write again: no replay, the resync runs, check 0; then
#    --consistency-policy=bitmap adds the bitmap;
#  - 1.0 members whose data ends at different distances from their
#    superblocks: each keeps its own ppl.offset (as md's grow gives it),
#    kept through updates; killed mid-write, replayed, check 0.
# PPL_SEEDS rounds (fio seeds), from SEED.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/grow.sh"
need fio nbdinfo python3 sha256sum
work_dir grow-ppl
CRAFT=$(dirname "$0")/md_craft.py
SEEDS=${PPL_SEEDS:-1}
BASE=${SEED:-20261202}
echo "seeds $BASE..$((BASE + SEEDS - 1)), work in $work"
serve() { serve_bg "$work" s "$@"; }
status_has() { "$URAID" status p | grep -q "$1"; }
idle() {   # no background job (the resync after a dirty start ended)
    for _ in $(seq 300); do status_has "Background : none" && return 0; sleep 0.2; done
    "$URAID" status p; return 1
}
exam_has() { "$URAID" examine "$1" | grep -q "$2"; }
# writes to the members so far (status --json)
member_writes() {
    "$URAID" status --json p 2>/dev/null | python3 -c '
import json, sys
print(sum(m.get("writes", 0) for m in json.load(sys.stdin)["members"]))' 2>/dev/null || echo 0
}
# fio is started next: until 64 more member writes (at most 20 s), then 1 s
# more: a fixed sleep from fio's start found it not yet writing on a loaded
# machine (killed then, fio saved no verify state: 'open state file', a FAIL)
writing() {
    for _ in $(seq 200); do [ "$(member_writes)" -gt $(($1 + 64)) ] && break; sleep 0.1; done
    sleep 1
}
fio_job() {   # fio_job SEED extra-args...: the same job each time (same offsets, same data)
    (cd "$work" && fio --ioengine=nbd --uri="nbd+unix:///?socket=$work/s.sock" --rw=randwrite \
        --bssplit=4k/50:16k/25:64k/25 --iodepth=16 --verify=crc32c --verify_fatal=1 \
        --randseed="$1" --size=48M --name=ppl "${@:2}" >"$work/fio.out" 2>&1)
}
make_array() {   # make_array PREFIX ARGS...: 4 members of 64 MiB in mem[]
    local pfx=$1 i; shift
    mem=()
    for i in 0 1 2 3; do rm -f "$work/$pfx$i"; truncate -s 64M "$work/$pfx$i"; mem+=("$work/$pfx$i"); done
    "$URAID" create --name=p --chunk=64 --assume-clean "$@" "${mem[@]}" >/dev/null
}

# ---- refusals ----
make_array r6 --level=6 --raid-devices=4
serve "${mem[@]}"
refused p "PPL on RAID 6" --consistency-policy=ppl
stop_served p
make_array rb --level=5 --raid-devices=4 --bitmap=internal
serve "${mem[@]}"
refused p "PPL with a bitmap" --consistency-policy=ppl
refused p "bitmap when already bitmap" --consistency-policy=bitmap
refused p "a policy and another change together" --consistency-policy=resync --raid-devices=5
stop_served p
make_array rr --level=5 --raid-devices=4 --bitmap=none
serve "${mem[@]}"
refused p "resync when already resync" --consistency-policy=resync
refused -u p "not a policy" --consistency-policy=journal
refused p "no room before the bad-block log" --consistency-policy=ppl
check "  the no-room refusal says what is needed" \
    bash -c "'$URAID' grow p --consistency-policy=ppl 2>&1 | grep -q 'at least 8 KiB'"
stop_served p

for meta in ${PPL_META-1.2 1.0}; do
    for s in $(seq "$BASE" $((BASE + SEEDS - 1))); do
        make_array "m$meta." --level=5 --raid-devices=4 --bitmap=none --metadata=$meta
        for f in "${mem[@]}"; do python3 "$CRAFT" "$f" sb.bblog_offset=0 sb.bblog_size=0; done
        serve "${mem[@]}" || { echo "FAIL $meta seed $s: serve did not start"; fails=$((fails + 1)); continue; }
        check "$meta seed $s: status says resync before" status_has "Consistency Policy : resync"
        fio_job "$s" --do_verify=0 --end_fsync=1
        check "$meta seed $s: a first pass written" grep -q "err= 0" "$work/fio.out"
        rm -f "$work"/*.state
        w0=$(member_writes)
        fio_job "$s" --do_verify=0 --verify_state_save=1 --time_based --runtime=30 &
        fpid=$!
        writing "$w0"
        out=$("$URAID" grow p --consistency-policy=ppl 2>&1); rc=$?
        check "$meta seed $s: grow to ppl under writes (rc $rc): $out" test $rc -eq 0
        check "$meta seed $s: status says ppl at once" status_has "Consistency Policy : ppl"
        want="PPL : 264 sectors at offset 8 sectors"
        [ $meta = 1.0 ] && want="PPL : 16 sectors at offset -16 sectors"
        for f in "${mem[@]}"; do
            check "$meta seed $s: examine $(basename "$f"): $want" exam_has "$f" "$want" ||
                "$URAID" examine "$f" | grep -E "PPL|Feature|Events"
        done
        check "$meta seed $s: feature 0x400 (an area too small for two logs)" \
            exam_has "${mem[0]}" "Feature Map : 0x400"
        ev=$(for f in "${mem[@]}"; do "$URAID" examine "$f" | sed -n 's/^ *Events : //p'; done | sort -u | wc -l)
        check "$meta seed $s: every member at the same events" test "$ev" -eq 1
        sleep 2
        check "$meta seed $s: the array is active at the kill" exam_has "${mem[0]}" "State : active"
        kill_whole "$spid"; wait "$spid" 2>/dev/null; spid=
        wait $fpid
        replays=$(grep -c "PPL replay" "$work/s.err")
        resyncs=$(grep -c "resync started" "$work/s.err")
        serve "${mem[@]}"
        check "$meta seed $s: the PPL was replayed, no resync needed ($(grep 'PPL replay' "$work/s.err" | tail -1))" \
            bash -c "[ \$(grep -c 'PPL replay' '$work/s.err') -gt $replays ] &&
                     grep 'PPL replay' '$work/s.err' | tail -1 | grep -q 'no resync needed'"
        sleep 0.5
        check "$meta seed $s: no resync started" test "$(grep -c "resync started" "$work/s.err")" -eq "$resyncs"
        fio_job "$s" --verify_only --verify_state_load=1
        check "$meta seed $s: every write fio completed reads back" grep -q "err= 0" "$work/fio.out" ||
            grep -m5 -E "verify|bad|err=" "$work/fio.out"
        out=$("$URAID" check --wait p); rc=$?
        check "$meta seed $s: check finds 0 mismatches ($out)" test $rc -eq 0

        # back to resync, under writes; a kill then needs the resync, not the log
        rm -f "$work"/*.state
        w0=$(member_writes)
        fio_job "$s" --do_verify=0 --verify_state_save=1 --time_based --runtime=30 &
        fpid=$!
        writing "$w0"
        out=$("$URAID" grow p --consistency-policy=resync 2>&1); rc=$?
        check "$meta seed $s: grow to resync under writes (rc $rc): $out" test $rc -eq 0
        check "$meta seed $s: status says resync at once" status_has "Consistency Policy : resync"
        check "$meta seed $s: examine shows no PPL" bash -c "! '$URAID' examine '${mem[1]}' | grep -q 'PPL :'"
        sleep 2
        kill_whole "$spid"; wait "$spid" 2>/dev/null; spid=
        wait $fpid
        replays=$(grep -c "PPL replay" "$work/s.err")
        resyncs=$(grep -c "resync started" "$work/s.err")
        serve "${mem[@]}"
        sleep 0.5
        check "$meta seed $s: no PPL replay after the removal" \
            test "$(grep -c "PPL replay" "$work/s.err")" -eq "$replays"
        fio_job "$s" --verify_only --verify_state_load=1
        check "$meta seed $s: every write fio completed reads back (resync policy)" grep -q "err= 0" "$work/fio.out"
        check "$meta seed $s: the resync ran and ended" \
            bash -c "[ \$(grep -c 'resync started' '$work/s.err') -gt $resyncs ]" && idle
        out=$("$URAID" check --wait p); rc=$?
        check "$meta seed $s: check finds 0 mismatches after the resync ($out)" test $rc -eq 0
        if [ $meta = 1.2 ]; then
            out=$("$URAID" grow p --consistency-policy=bitmap 2>&1); rc=$?
            check "$meta seed $s: --consistency-policy=bitmap (rc $rc): $out" test $rc -eq 0
            check "$meta seed $s: status says bitmap" status_has "Consistency Policy : bitmap"
        fi
        stop_served p
    done
done
# 1.0 members whose data ends at different distances from their superblocks
# (member 3's data_size 64 sectors less, crafted as a member of another size
# would have it): mdadm's update_super("ppl") gives each its own ppl.offset,
# the kernel reads each from the member's own superblock; uraid takes the
# grow, keeps each member's offset through later updates and a restart, and
# replays each member's own area after a kill mid-write.
s=$BASE
make_array d1.0. --level=5 --raid-devices=4 --bitmap=none --metadata=1.0
for f in "${mem[@]}"; do python3 "$CRAFT" "$f" sb.bblog_offset=0 sb.bblog_size=0; done
ds=$(python3 -c 'import os, struct, sys
f = sys.argv[1]; so = (os.path.getsize(f) // 512 - 16) & ~7
with open(f, "rb") as h:
    h.seek(so * 512 + 136); print(struct.unpack("<Q", h.read(8))[0])' "${mem[3]}")
python3 "$CRAFT" "${mem[3]}" sb.data_size=$((ds - 64))
if serve "${mem[@]}"; then
    fio_job "$s" --do_verify=0 --end_fsync=1
    check "1.0 sizes differ: a first pass written" grep -q "err= 0" "$work/fio.out"
    out=$("$URAID" grow p --consistency-policy=ppl 2>&1); rc=$?
    check "1.0 sizes differ: grow to ppl (rc $rc): $out" test $rc -eq 0
    for i in 0 1 2; do
        check "1.0 sizes differ: examine $i: PPL at -16" exam_has "${mem[$i]}" "PPL : 16 sectors at offset -16 sectors"
    done
    check "1.0 sizes differ: examine 3: PPL at its own -80" exam_has "${mem[3]}" "PPL : 16 sectors at offset -80 sectors"
    rm -f "$work"/*.state
    w0=$(member_writes)
    fio_job "$s" --do_verify=0 --verify_state_save=1 --time_based --runtime=30 &
    fpid=$!
    writing "$w0"
    check "1.0 sizes differ: the array is active at the kill" exam_has "${mem[0]}" "State : active"
    kill_whole "$spid"; wait "$spid" 2>/dev/null; spid=
    wait $fpid
    replays=$(grep -c "PPL replay" "$work/s.err")
    resyncs=$(grep -c "resync started" "$work/s.err")
    serve "${mem[@]}"
    check "1.0 sizes differ: the PPL was replayed, no resync needed ($(grep 'PPL replay' "$work/s.err" | tail -1))" \
        bash -c "[ \$(grep -c 'PPL replay' '$work/s.err') -gt $replays ] &&
                 grep 'PPL replay' '$work/s.err' | tail -1 | grep -q 'no resync needed'"
    sleep 0.5
    check "1.0 sizes differ: no resync started" test "$(grep -c "resync started" "$work/s.err")" -eq "$resyncs"
    fio_job "$s" --verify_only --verify_state_load=1
    check "1.0 sizes differ: every write fio completed reads back" grep -q "err= 0" "$work/fio.out" ||
        grep -m5 -E "verify|bad|err=" "$work/fio.out"
    out=$("$URAID" check --wait p); rc=$?
    check "1.0 sizes differ: check finds 0 mismatches ($out)" test $rc -eq 0
    stop_served p
    check "1.0 sizes differ: member 3 keeps its own offset after the updates" \
        exam_has "${mem[3]}" "PPL : 16 sectors at offset -80 sectors"
    check "1.0 sizes differ: member 0 keeps -16" exam_has "${mem[0]}" "PPL : 16 sectors at offset -16 sectors"
else
    echo "FAIL 1.0 sizes differ: serve did not start"; fails=$((fails + 1))
fi
echo "$fails failed"
[ $fails -eq 0 ]
