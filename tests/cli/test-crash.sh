#!/bin/bash
# Crash safety: `uraid serve` is killed with SIGKILL in the middle of fio
# writes (verify state saved), after one complete pass of the same job
# (acknowledged and flushed), restarted; the array comes back dirty and
# resyncs by itself; fio's verify-only pass over everything fio had written
# succeeds, and `uraid check` then finds 0 mismatches. RAID 5, RAID 6, RAID
# 10 (near 2, five members) and RAID 1 (two), and RAID 5 with a write-intent bitmap where fio writes a quarter of the
# array: its resync visits only the chunks whose bits the writes set, and the
# check over the whole array still finds 0 mismatches. CRASH_SEEDS rounds
# each (make soak runs many).
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

# member_writes ARRAY: writes its members have done since it was served
member_writes() {
    "$URAID" status --json "$1" 2>/dev/null | python3 -c '
import json, sys
print(sum(m.get("writes", 0) for m in json.load(sys.stdin)["members"]))' 2>/dev/null || echo 0
}

for cfg in 5 6 10 1 5b; do
    level=${cfg%b}
    n=5
    [ "$level" = 1 ] && n=2
    m=()
    for i in $(seq 0 $((n - 1))); do truncate -s 40M "$work/m$cfg.$i"; m+=("$work/m$cfg.$i"); done
    if [ "$cfg" = 5b ]; then
        # zeroed members are in sync: the bits start clear, only fio's writes set them
        opts=(--bitmap=internal --bitmap-chunk=256 --assume-clean)
    else
        opts=(--bitmap=none)
    fi
    [ "$level" != 1 ] && opts+=(--chunk=64)
    "$URAID" create --level=$level --raid-devices=$n --name=c$cfg "${opts[@]}" \
        "${m[@]}" >/dev/null
    for s in $(seq "$BASE" $((BASE + SEEDS - 1))); do
        serve "${m[@]}" || { fails=$((fails + 1)); continue; }
        size=$(( $(nbdinfo --size "nbd+unix:///?socket=$work/s.sock") / 1048576 ))
        [ "$cfg" = 5b ] && size=$((size / 4))
        size=${size}M
        # One complete pass of the same job first (same offsets, same data),
        # flushed. fio's verify state after a kill may count as done writes
        # the dead server never got (fio reports "bad magic header 0" for
        # them, against any NBD server): each such block holds what the job
        # writes there now. A block that loses its flushed content still
        # fails the verify below.
        fio_job "$s" --do_verify=0 --end_fsync=1
        check "$cfg seed $s: a first pass written and flushed" grep -q "err= 0" "$work/fio.out"
        rm -f "$work"/*.state
        w0=$(member_writes c$cfg)
        fio_job "$s" --do_verify=0 --verify_state_save=1 --time_based --runtime=30 &
        fpid=$!
        # the kill comes 1 s after fio's writes reach the members (a fixed
        # 2 s from fio's start found none yet on a loaded machine: no state
        # saved, nothing dirty)
        for _ in $(seq 200); do
            [ "$(member_writes c$cfg)" -gt $((w0 + 64)) ] && break
            sleep 0.1
        done
        sleep 1
        kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
        wait $fpid
        check "$cfg seed $s: fio saw the server die (its state saved)" \
            bash -c "ls '$work'/*verify.state >/dev/null 2>&1"
        before=$(grep -c "resync started" "$work/s.err")
        done_before=$(grep -c "resync done" "$work/s.err")
        serve "${m[@]}"
        # the engine starts it on its first tick after assembly
        for _ in $(seq 100); do
            [ "$(grep -c "resync started" "$work/s.err")" -gt "$before" ] && break
            sleep 0.05
        done
        check "$cfg seed $s: restarted dirty, the resync started by itself" \
            test "$(grep -c "resync started" "$work/s.err")" -gt "$before"
        fio_job "$s" --verify_only --verify_state_load=1
        verified=$(sed -n 's/.*READ: .*io=\([0-9.]*[KMG]iB\).*/\1/p' "$work/fio.out")
        check "$cfg seed $s: every write fio completed reads back intact ($verified verified)" \
            bash -c "grep -q 'err= 0' '$work/fio.out' && [ -n '$verified' ] && [ '$verified' != 0B ]"
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
