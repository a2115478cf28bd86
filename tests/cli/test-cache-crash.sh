#!/bin/bash
# Flush semantics of the write-back cache under a crash: through `uraid serve
# --write-cache=back`, a client (cache_crash.py) writes random patterns,
# FLUSHes, writes more without flushing (some FUA), and the server is killed
# with SIGKILL in the middle of those writes. After a restart (the array
# comes back dirty and resyncs by itself) every 4 KiB block reads back as
# cache_crash.py says: what it held at the completed FLUSH if no later write
# touched it; else that or the data of one of the later writes, whole; and
# the data of an acknowledged FUA write that was the last one sent there.
# The check is run twice, during the resync and after it; `uraid check` then
# finds 0 mismatches, and the array stops clean. RAID 1 (two), 5 (four),
# 6 (five), 10 (near 2, four), CACHE_SEEDS seeds each (printed);
# WRITE_CACHE=through runs the same against the write-through path;
# CACHE_LEVELS="5 6" runs some levels only; CACHE_KEEP=1 keeps the work
# directory.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need python3
here=$(realpath "$(dirname "$0")")
work_dir cache-crash
# CACHE_KEEP=1: the work directory is left for a look at a failure (the
# client's logs, the flushed image, what was read)
[ -n "${CACHE_KEEP:-}" ] && trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; wait 2>/dev/null; echo "kept $work"' EXIT
SEEDS=${CACHE_SEEDS:-2}
BASE=${SEED:-20261202}
POLICY=${WRITE_CACHE:-back}
CACHE_SIZE=${CACHE_SIZE:-8M}
echo "seeds $BASE..$((BASE + SEEDS - 1)), --write-cache=$POLICY --cache-size=$CACHE_SIZE, work in $work"
cache_opts=(--write-cache="$POLICY" --cache-size="$CACHE_SIZE")
serve() { serve_bg "$work" s "${cache_opts[@]}" "$@"; }

# status_py NAME EXPR: print EXPR evaluated on status --json (d)
status_py() {
    "$URAID" status --json "$1" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(eval(sys.argv[1]))' "$2" 2>&1
}

for cfg in ${CACHE_LEVELS:-1 5 6 10}; do
    case $cfg in
        1) n=2 ;; 5) n=4 ;; 6) n=5 ;; 10) n=4 ;;
    esac
    m=()
    for i in $(seq 0 $((n - 1))); do truncate -s 16M "$work/m$cfg.$i"; m+=("$work/m$cfg.$i"); done
    opts=(--bitmap=none --assume-clean)
    [ "$cfg" != 1 ] && opts+=(--chunk=64)
    "$URAID" create --level=$cfg --raid-devices=$n --name=c$cfg "${opts[@]}" \
        "${m[@]}" >/dev/null || { echo "create raid$cfg failed"; fails=$((fails + 1)); continue; }
    for s in $(seq "$BASE" $((BASE + SEEDS - 1))); do
        t="raid$cfg seed $s"
        d=$work/c$cfg.$s
        mkdir -p "$d"
        serve "${m[@]}" || { fails=$((fails + 1)); continue; }
        check "$t: served with write_cache $POLICY ($(status_py c$cfg 'd.get("write_cache")'))" \
            bash -c "'$URAID' status --json c$cfg | python3 -c '
import json, sys
w = json.load(sys.stdin).get(\"write_cache\")
p = w.get(\"policy\", w.get(\"mode\")) if isinstance(w, dict) else w
assert p == sys.argv[1], w' '$POLICY'"
        python3 "$here/cache_crash.py" write "$work/s.sock" "$s" "$d" >"$d/write.out" 2>&1 &
        cpid=$!
        for _ in $(seq 600); do [ -e "$d/phase-b" ] || ! kill -0 $cpid 2>/dev/null && break; sleep 0.1; done
        check "$t: phase A written and flushed, 200 writes after the flush acknowledged" test -e "$d/phase-b"
        sleep 0.3
        echo "  at the kill: write_cache $(status_py c$cfg 'd.get("write_cache")')"
        kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
        wait $cpid
        sed 's/^/  /' "$d/write.out"
        before=$(grep -c "resync started" "$work/s.err")
        done_before=$(grep -c "resync done" "$work/s.err")
        serve "${m[@]}" || { fails=$((fails + 1)); continue; }
        for _ in $(seq 100); do
            [ "$(grep -c "resync started" "$work/s.err")" -gt "$before" ] && break
            sleep 0.05
        done
        check "$t: restarted dirty, the resync started by itself" \
            test "$(grep -c "resync started" "$work/s.err")" -gt "$before"
        python3 "$here/cache_crash.py" verify "$work/s.sock" "$s" "$d" >"$d/verify.out" 2>&1
        rc=$?
        sed 's/^/  /' "$d/verify.out"
        check "$t: every block holds what it may (read during the resync)" test $rc -eq 0
        for _ in $(seq 600); do
            [ "$(grep -c 'resync done' "$work/s.err")" -gt "$done_before" ] && break
            sleep 0.1
        done
        check "$t: the resync completed" test "$(grep -c 'resync done' "$work/s.err")" -gt "$done_before"
        python3 "$here/cache_crash.py" verify "$work/s.sock" "$s" "$d" >"$d/verify2.out" 2>&1
        rc=$?
        sed 's/^/  /' "$d/verify2.out"
        check "$t: and after it" test $rc -eq 0
        out=$("$URAID" check --wait c$cfg 2>&1); rc=$?
        check "$t: after the resync, check finds 0 mismatches ($out)" test $rc -eq 0
        check "$t: stopped cleanly" stop_served c$cfg
        check "$t: clean after the stop" \
            bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : clean'"
    done
    rm -f "${m[@]}"
done
echo "$fails failed"
[ $fails -eq 0 ]
