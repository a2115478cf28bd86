#!/bin/bash
# Crash safety: `uraid serve` is killed with SIGKILL in the middle of fio
# writes (verify state saved), restarted; the array comes back dirty and
# resyncs by itself; fio's verify-only pass over everything fio had written
# succeeds, and `uraid check` then finds 0 mismatches. RAID 5 and RAID 6,
# CRASH_SEEDS rounds each (make soak runs many).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need fio nbdinfo python3
work=$(mktemp -d /tmp/uraid-crash.XXXXXX)
export URAID_RUN_DIR=$work/run
SEEDS=${CRASH_SEEDS:-2}
BASE=${SEED:-20261129}
echo "seeds $BASE..$((BASE + SEEDS - 1)), work in $work"
spid=
cleanup() { [ -n "$spid" ] && kill -9 "$spid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
serve() { serve_bg "$work" s "$@"; }
fio_job() {   # fio_job SEED extra-args...: the same job each time (same offsets, same data)
    (cd "$work" && fio --ioengine=nbd --uri="nbd+unix:///?socket=$work/s.sock" --rw=randwrite \
        --bssplit=4k/50:16k/25:64k/25 --iodepth=16 --verify=crc32c --verify_fatal=1 \
        --randseed="$1" --size="$size" --name=crash "${@:2}" >"$work/fio.out" 2>&1)
}

for level in 5 6; do
    m=()
    for i in 0 1 2 3 4; do truncate -s 40M "$work/m$level.$i"; m+=("$work/m$level.$i"); done
    "$URAID" create --level=$level --raid-devices=5 --chunk=64 --name=c$level "${m[@]}" >/dev/null
    for s in $(seq "$BASE" $((BASE + SEEDS - 1))); do
        serve "${m[@]}" || { fails=$((fails + 1)); continue; }
        size=$(( $(nbdinfo --size "nbd+unix:///?socket=$work/s.sock") / 1048576 ))M
        rm -f "$work"/*.state
        fio_job "$s" --do_verify=0 --verify_state_save=1 --time_based --runtime=30 &
        fpid=$!
        sleep 2
        kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
        wait $fpid
        check "raid$level seed $s: fio saw the server die (its state saved)" \
            bash -c "ls '$work'/*verify.state >/dev/null 2>&1"
        before=$(grep -c "resync started" "$work/s.err")
        serve "${m[@]}"
        check "raid$level seed $s: restarted dirty, the resync started by itself" \
            test "$(grep -c "resync started" "$work/s.err")" -gt "$before"
        fio_job "$s" --verify_only --verify_state_load=1
        verified=$(sed -n 's/.*READ: .*io=\([0-9.]*[KMG]iB\).*/\1/p' "$work/fio.out")
        check "raid$level seed $s: every write fio completed reads back intact ($verified verified)" \
            bash -c "grep -q 'err= 0' '$work/fio.out' && [ -n '$verified' ] && [ '$verified' != 0B ]"
        for _ in $(seq 300); do
            [ "$(grep -c 'resync done' "$work/s.err")" -ge "$((s - BASE + 1 + (level - 5) * SEEDS))" ] && break
            sleep 0.1
        done
        out=$("$URAID" check --wait c$level); rc=$?
        check "raid$level seed $s: after the resync, check finds 0 mismatches ($out)" test $rc -eq 0
        "$URAID" stop c$level >/dev/null; wait "$spid"; spid=
    done
    check "raid$level: clean after the last stop" \
        bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : clean'"
done
echo "$fails failed"
[ $fails -eq 0 ]
