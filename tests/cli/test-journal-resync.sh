#!/bin/bash
# After a crash, md does not resync an array with a write journal: at a
# clean start raid5_run sets MD_JOURNAL_CLEAN, and while it is set
# super_1_sync writes resync_offset MaxSector even when the array is active,
# so the superblocks still say clean after a kill and the journal's replay
# alone makes parity right. uraid does the same:
#   clean start: killed mid-write (kill_whole, journal_acks.py, whole
#     4 KiB pages), the superblocks say clean, the restart replays the
#     journal, starts no resync, status --json says resync_needed false,
#     every acknowledged write reads back and check finds 0 mismatches;
#   clean start, writes of 3.5 KiB at 512-byte offsets among them: uraid logs
#     those as FLUSH only (md would log whole pages), which the replay cannot
#     make whole, so the first one marks the array active on disk (said in
#     the log) and the restart after the kill resyncs;
#   dirty start (a resync pending, held slow): md's flag is not set, so the
#     kill leaves the superblocks active and the restart resyncs;
#   the journal missing (--force): read-only, nothing resynced, the resync
#     still reported as needed.
# (PPL: test-ppl.sh and test-grow-ppl.sh assert "no resync needed" after a
# kill, md's ppl_init_log rule.)
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need python3
work_dir journal-resync
SEED=${SEED:-20261203}
echo "seed $SEED, work in $work"
serve() { serve_bg "$work" s "$@"; }
resyncs() { grep -c "resync started" "$work/s.err"; }
# none_ran ARRAY: status says what the restart decided: no job running, none
# run since the start (a resync that came and went would show in
# last_background), and resync_needed as the superblocks and the replay left
# it; a resync starts only from the engine's tick while resync_needed holds
none_ran() {
    status_until "$1" 30 "not d['background'] and d['last_background']['kind'] == 'none'
and d['resync_needed'] == $2"
}
# ticked: the server's metadata worker (thread uraid-meta), which runs the
# engine's tick and so every automatic job start, has gone round its loop
# (a 5 ms wait, then the tick) at least twice since the call: what a start
# would have been decided in (up to 30 s)
ticked() {
    local t f n0 n
    for t in /proc/"$spid"/task/*; do
        [ "$(cat "$t/comm" 2>/dev/null)" = uraid-meta ] && f=$t/status
    done
    [ -n "${f:-}" ] || { echo "  no uraid-meta thread in $spid"; return 1; }
    n0=$(sed -n 's/^voluntary_ctxt_switches:\s*//p' "$f")
    for _ in $(seq 300); do
        n=$(sed -n 's/^voluntary_ctxt_switches:\s*//p' "$f")
        [ "$n" -ge $((n0 + 4)) ] && return 0
        sleep 0.1
    done
    echo "  uraid-meta: $n0 -> $n switches in 30 s"
    return 1
}

# clean start
m=()
for i in 0 1 2 3; do truncate -s 16M "$work/c$i"; m+=("$work/c$i"); done
j=$work/cj; truncate -s 8M "$j"
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=c --assume-clean \
    --write-journal="$j" "${m[@]}" >/dev/null
serve "${m[@]}" "$j"
k=$((SEED * 10 + 1))
check "clean start: 200 writes acknowledged before the kill (journal_acks seed $k, aligned)" \
    acks_kill "$work/s.sock" "$work/acks1" "$k" aligned
check "clean start, whole pages: the journal never gave up its clean state" \
    bash -c "! grep -q 'cannot log whole' '$work/s.err'"
check "clean start: after the kill the superblocks say clean (md's MD_JOURNAL_CLEAN)" \
    bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : clean'"
before=$(resyncs)
serve "${m[@]}" "$j"
check "clean start: the journal replayed at the restart" \
    bash -c "grep 'journal:' '$work/s.err' | tail -1 | grep -q ' rows written'"
check "clean start: status --json says resync_needed false, no job has run" none_ran c False
check "clean start: no resync started" test "$(resyncs)" -eq "$before"
check "clean start: every acknowledged write reads back (journal_acks seed $k)" \
    acks_verify "$work/s.sock" "$work/acks1" "$k"
out=$("$URAID" check --wait c); rc=$?
check "clean start: check finds 0 mismatches ($out)" test $rc -eq 0
# the same with sub-page writes among them
k=$((SEED * 10 + 3))
check "clean start, sub-page writes: 200 writes acknowledged before the kill (journal_acks seed $k)" \
    acks_kill "$work/s.sock" "$work/acks3" "$k"
check "clean start, sub-page writes: said when the first came" \
    grep -q "a write the journal cannot log whole" "$work/s.err"
check "clean start, sub-page writes: after the kill the superblocks say active" \
    bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : active'"
before=$(resyncs)
serve "${m[@]}" "$j"
check "clean start, sub-page writes: the restart resyncs" log_more s "resync started" "$before"
check "clean start, sub-page writes: every acknowledged write reads back (journal_acks seed $k)" \
    acks_verify "$work/s.sock" "$work/acks3" "$k"
stop_served c

# dirty start: 1 MiB of random bytes in one member's data area, so create
# marks a resync; held at 1 MiB/s per member (16 MiB each), it is still
# running at the kill
m=()
for i in 0 1 2 3; do truncate -s 16M "$work/d$i"; m+=("$work/d$i"); done
randfile "$SEED" $((1 << 20)) "$work/rnd"
dd if="$work/rnd" of="${m[1]}" bs=1M seek=4 conv=notrunc status=none
j=$work/dj; truncate -s 8M "$j"
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=d --write-journal="$j" "${m[@]}" >/dev/null
check "dirty start: created needing a resync" \
    bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : active'"
slow=(--speed-min=1000 --speed-max=1000)
before=$(resyncs)     # the log holds the sub-page case's resync already
serve "${slow[@]}" "${m[@]}" "$j"
check "dirty start: the resync runs" log_more s "resync started" "$before"
k=$((SEED * 10 + 2))
check "dirty start: 200 writes acknowledged before the kill (journal_acks seed $k)" \
    acks_kill "$work/s.sock" "$work/acks2" "$k"
check "dirty start: after the kill the superblocks say active (md's flag not set)" \
    bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : active'"
before=$(resyncs)
serve --force "${slow[@]}" "${m[@]}"
check "dirty start, journal missing, --force: read-only" \
    grep -q "write journal missing: served read-only" "$work/s.err"
check "dirty start, journal missing: the engine's tick ran since (where a start is decided)" ticked
check "dirty start, journal missing: resync_needed true, yet no job has run (read-only)" \
    none_ran d True
check "dirty start, journal missing: no resync started" test "$(resyncs)" -eq "$before"
stop_served d
serve "${slow[@]}" "${m[@]}" "$j"
check "dirty start: the restart with the journal resyncs" log_more s "resync started" "$before"
check "dirty start: every acknowledged write reads back (journal_acks seed $k)" \
    acks_verify "$work/s.sock" "$work/acks2" "$k"
stop_served d

echo "$fails failed"
[ $fails -eq 0 ]
