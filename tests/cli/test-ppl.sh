#!/bin/bash
# md's partial parity log (PPL) on RAID 5: `uraid create
# --consistency-policy=ppl` places it as mdadm does (examine shows it,
# status says ppl); the array is filled with a seeded pattern, then
# journal_acks.py writes (each write logged when sent and when acknowledged,
# data unique to each write and sector) and `uraid serve` is killed with
# SIGKILL (kill_whole: every thread stopped first, so no write is cut short)
# 1 s after 200 acknowledgements, restarted: the PPL is replayed, no resync
# starts, every 512-byte sector written holds its last acknowledged write
# (or a later one never acknowledged), the rest still holds the pattern
# exactly, and `uraid check` finds 0 mismatches. Also for metadata 1.0 (the
# area below the superblock). Refusals: PPL on RAID 6, PPL with a bitmap.
# PPL_SEEDS rounds each, seeds printed.
#
# What this test cannot prove: SIGKILL of a user-space server does not tear
# rows (its member writes already handed to the kernel complete in the page
# cache after its death), so "reads back" and "check 0" here would pass
# without a log too (a resync would also fix parity): they are smoke tests
# of the replay path (it ran, said no resync, broke nothing). The write hole
# itself is torn deterministically and asserted closed in
# tests/unit/test_ppl_runtime.c (parity put back as before an engine write,
# assembled dirty and degraded: the missing member's bytes read back only
# through the replayed entry).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need nbdinfo nbdcopy python3
work_dir ppl
[ -n "${PPL_KEEP:-}" ] && trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; wait 2>/dev/null' EXIT
SEEDS=${PPL_SEEDS:-2}
BASE=${SEED:-20261202}
echo "seeds $BASE..$((BASE + SEEDS - 1)), work in $work"
serve() { serve_bg "$work" s "$@"; }
# refusals: one line, nothing written
for i in 0 1 2 3; do truncate -s 40M "$work/r$i"; done
out=$("$URAID" create -l6 -n4 --consistency-policy=ppl "$work"/r[0-3] 2>&1); rc=$?
check "PPL on RAID 6 refused ($out)" bash -c "[ $rc -ne 0 ] && [ \$(printf '%s\n' \"\$1\" | wc -l) -eq 1 ]" _ "$out"
out=$("$URAID" create -l5 -n4 --consistency-policy=ppl --bitmap=internal "$work"/r[0-3] 2>&1); rc=$?
check "PPL with a bitmap refused ($out)" test $rc -ne 0
check "nothing written by the refusals" bash -c "! '$URAID' examine '$work/r0' >/dev/null 2>&1"

for meta in ${PPL_META-1.2 1.0}; do
    m=()
    # 54 MiB arrays: journal_acks.py writes the first 42
    for i in 0 1 2 3; do truncate -s 20M "$work/m$meta.$i"; m+=("$work/m$meta.$i"); done
    "$URAID" create --level=5 --raid-devices=4 --chunk=64 --metadata=$meta --name=p \
        --consistency-policy=ppl "${m[@]}" >/dev/null
    want="PPL : 2048 sectors at offset 8 sectors"
    [ $meta = 1.0 ] && want="PPL : 2048 sectors at offset -2056 sectors"
    check "$meta: examine shows the PPL as mdadm -E ($want)" \
        bash -c "'$URAID' examine '${m[0]}' | grep -q '$want'"
    check "$meta: feature map 0x400" bash -c "'$URAID' examine '${m[0]}' | grep -q 'Feature Map : 0x400'"
    for s in $(seq "$BASE" $((BASE + SEEDS - 1))); do
        serve "${m[@]}" || { echo "FAIL $meta seed $s: the first serve did not start (its log above)"; fails=$((fails + 1)); continue; }
        check "$meta seed $s: status says ppl" \
            bash -c "'$URAID' status p | grep -q 'Consistency Policy : ppl'"
        uri="nbd+unix:///?socket=$work/s.sock"
        fill=$(nbdinfo --size "$uri")
        randfile "$s" "$fill" "$work/pat"
        nbdcopy "$work/pat" "$uri"
        k=$((s * 10 + 1)); rm -rf "$work/acks"
        check "$meta seed $s: 200 writes acknowledged before the kill (pattern seed $s, journal_acks seed $k)" \
            acks_kill "$work/s.sock" "$work/acks" "$k"
        check "$meta seed $s: killed while active (being written)" \
            bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : active'"
        replays=$(grep -c "PPL replay" "$work/s.err")
        resyncs=$(grep -c "resync started" "$work/s.err")
        serve "${m[@]}"
        check "$meta seed $s: the PPL was replayed ($(grep "PPL replay" "$work/s.err" | tail -1))" \
            bash -c "[ \$(grep -c 'PPL replay' '$work/s.err') -gt $replays ] &&
                     grep 'PPL replay' '$work/s.err' | tail -1 | grep -q 'no resync needed'"
        sleep 0.5
        check "$meta seed $s: no resync started" \
            test "$(grep -c "resync started" "$work/s.err")" -eq "$resyncs"
        check "$meta seed $s: every acknowledged write reads back (journal_acks seed $k)" \
            acks_verify "$work/s.sock" "$work/acks" "$k"
        nbdcopy "$uri" "$work/back"
        check "$meta seed $s: the pattern past the written regions reads back exactly" \
            cmp -i $((42 << 20)) -n $((fill - (42 << 20))) "$work/pat" "$work/back"
        out=$("$URAID" check --wait p); rc=$?
        check "$meta seed $s: check finds 0 mismatches ($out)" test $rc -eq 0
        stop_served p
    done
    check "$meta: clean after the last stop" \
        bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : clean'"
done
# The write hole, a smoke test (see the top: a kill does not tear rows, so
# bad=0 holds with or without a log; the deterministic tear is in
# test_ppl_runtime): random writes into data chunk 1 of
# random rows only, the server killed mid-write, member 0 then missing, the
# array started degraded and dirty; every block outside chunk 1 (never
# written since the fill) must read back exactly. Without a log the hole is
# shown (printed, not asserted: it depends on where the kill lands); with
# PPL it is asserted closed.
hole=$(dirname "$0")/ppl_hole.py
for policy in resync ppl; do
    for s in $(seq "$BASE" $((BASE + SEEDS - 1))); do
        h=()
        for i in 0 1 2 3; do rm -f "$work/h$i"; truncate -s 24M "$work/h$i"; h+=("$work/h$i"); done
        "$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --name=p \
            --consistency-policy=$policy "${h[@]}" >/dev/null
        serve "${h[@]}" || { echo "FAIL write hole $policy seed $s: serve did not start (its log above)"; fails=$((fails + 1)); continue; }
        uri="nbd+unix:///?socket=$work/s.sock"
        randfile "$s" "$(nbdinfo --size "$uri")" "$work/h.data"
        nbdcopy "$work/h.data" "$uri"
        python3 "$hole" write "$work/s.sock" "$s" 65536 3 &
        wpid=$!
        for _ in $(seq 100); do
            "$URAID" examine "${h[0]}" | grep -q 'State : active' && break
            sleep 0.1
        done
        sleep 1
        kill_whole "$spid"; wait "$spid" 2>/dev/null; spid=
        wait $wpid
        # member 0 gone: its chunks are rebuilt from the others and parity
        serve --force --run "${h[@]:1}" || { echo "FAIL write hole $policy seed $s: the degraded restart did not start (its log above)"; fails=$((fails + 1)); continue; }
        out=$(python3 "$hole" verify "$work/s.sock" "$work/h.data" 65536 3)
        if [ $policy = ppl ]; then
            check "write hole smoke, PPL, seed $s: every untouched block reads back ($out; $(grep 'PPL replay' "$work/s.err" | tail -1))" \
                grep -q "^bad=0 " <<<"$out"
        else
            echo "write hole, no log, seed $s: $out blocks untouched by the writes read back wrong"
        fi
        stop_served p
    done
done
echo "$fails failed"
[ $fails -eq 0 ]
