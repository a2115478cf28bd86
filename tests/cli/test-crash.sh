#!/bin/bash
# Crash safety: the array is filled with a seeded pattern, then
# journal_acks.py writes (each write logged when sent and when acknowledged,
# data unique to each write and sector) and `uraid serve` is killed
# (kill_whole) 1 s after 200 acknowledgements; restarted, the array comes
# back dirty and resyncs by itself; every 512-byte sector of the written
# regions holds its last acknowledged write (or a later one never
# acknowledged, or the pattern where no write was acknowledged), the rest of
# the array still holds the pattern exactly, and `uraid check` then finds 0
# mismatches. RAID 5, RAID 6, RAID 10 (near 2, five members) and RAID 1
# (two), and RAID 5 with a write-intent bitmap where only the first 42 MiB
# are written (of 156): its resync visits only the chunks whose bits the
# writes set, and the check over the whole array still finds 0 mismatches.
# CRASH_SEEDS rounds each (make soak runs many); the seeds are printed.
# (Not fio's verify_state: after a kill it counts writes issued, not
# completed, and rewriting its own first pass, a lost write would read back
# as the first pass's data and pass.)
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need nbdinfo nbdcopy python3
work=$(mktemp -d /tmp/uraid-crash.XXXXXX)
export URAID_RUN_DIR=$work/run
SEEDS=${CRASH_SEEDS:-2}
BASE=${SEED:-20261129}
echo "seeds $BASE..$((BASE + SEEDS - 1)), work in $work"
spid=
cleanup() { [ -n "$spid" ] && kill -9 "$spid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
serve() { serve_bg "$work" s "$@"; }
for cfg in 5 6 10 1 5b; do
    level=${cfg%b}
    n=5
    [ "$level" = 1 ] && n=2
    m=()
    # journal_acks.py writes the first 42 MiB: arrays of 45-60 MiB (less
    # pattern to write); the bitmap's 156 MiB, mostly never written
    case $cfg in 5|6) msize=16M ;; 10) msize=20M ;; 1) msize=48M ;; 5b) msize=40M ;; esac
    for i in $(seq 0 $((n - 1))); do truncate -s $msize "$work/m$cfg.$i"; m+=("$work/m$cfg.$i"); done
    if [ "$cfg" = 5b ]; then
        # zeroed members are in sync: the bits start clear, only the writes set them
        opts=(--bitmap=internal --bitmap-chunk=256 --assume-clean)
    else
        opts=(--bitmap=none)
    fi
    [ "$level" != 1 ] && opts+=(--chunk=64)
    "$URAID" create --level=$level --raid-devices=$n --name=c$cfg "${opts[@]}" \
        "${m[@]}" >/dev/null
    for s in $(seq "$BASE" $((BASE + SEEDS - 1))); do
        serve "${m[@]}" || { fails=$((fails + 1)); continue; }
        uri="nbd+unix:///?socket=$work/s.sock"
        # the pattern over the whole array; with the bitmap over the written
        # regions only (the bits of the rest stay clear)
        fill=$(nbdinfo --size "$uri")
        [ "$cfg" = 5b ] && fill=$((42 << 20))
        randfile "$s" "$fill" "$work/pat"
        nbdcopy "$work/pat" "$uri"
        k=$((s * 10 + 1)); rm -rf "$work/acks"
        check "$cfg seed $s: 200 writes acknowledged before the kill (pattern seed $s, journal_acks seed $k)" \
            acks_kill "$work/s.sock" "$work/acks" "$k"
        before=$(grep -c "resync started" "$work/s.err")
        done_before=$(grep -c "resync done" "$work/s.err")
        serve "${m[@]}"
        # the engine starts it on its first tick after assembly
        for _ in $(seq 600); do
            [ "$(grep -c "resync started" "$work/s.err")" -gt "$before" ] && break
            sleep 0.05
        done
        check "$cfg seed $s: restarted dirty, the resync started by itself" \
            test "$(grep -c "resync started" "$work/s.err")" -gt "$before"
        check "$cfg seed $s: every acknowledged write reads back (journal_acks seed $k)" \
            acks_verify "$work/s.sock" "$work/acks" "$k"
        nbdcopy "$uri" "$work/back"
        check "$cfg seed $s: the pattern past the written regions reads back exactly" \
            cmp -i $((42 << 20)) -n $((fill - (42 << 20))) "$work/pat" "$work/back"
        for _ in $(seq 300); do
            [ "$(grep -c 'resync done' "$work/s.err")" -gt "$done_before" ] && break
            sleep 0.1
        done
        if [ "$cfg" = 5b ]; then
            check "$cfg seed $s: the resync skipped the chunks no write touched" python3 -c '
import json, subprocess, sys
d = json.loads(subprocess.check_output([sys.argv[1], "status", "--json", sys.argv[2]]))
lb = d["last_background"]
print("  resync: %d of %d bytes per member skipped, bitmap %s" % (lb["skipped_bytes"], lb["done_bytes"], d["bitmap"]))
assert lb["kind"] == "resync" and lb["result"] == "completed", lb
assert lb["done_bytes"] // 2 <= lb["skipped_bytes"] < lb["done_bytes"], lb' "$URAID" c$cfg
        fi
        out=$("$URAID" check --wait c$cfg); rc=$?
        check "$cfg seed $s: after the resync, check finds 0 mismatches ($out)" test $rc -eq 0
        "$URAID" stop c$cfg >/dev/null; wait "$spid"; spid=
    done
    check "$cfg: clean after the last stop" \
        bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : clean'"
done
echo "$fails failed"
[ $fails -eq 0 ]
