# shellcheck shell=bash
# Shared by the command tests that run `uraid serve` (source it from bash).
#   need TOOL...            exit 77 (skip) when one is missing
#   check WHAT COMMAND...   run COMMAND, print ok/FAIL, count failures in $fails
#                           (returns 1 on a failure, for diagnostics after it)
#   serve_bg DIR NAME ARGS  start uraid serve on DIR/NAME.sock (pid file, logs
#                           DIR/NAME.out/.err appended), wait until it serves;
#                           its pid in $spid
#   stop_served NAME        uraid stop NAME (kill if that fails), wait for
#                           $spid; the server's exit status
#   work_dir NAME           a fresh /tmp/uraid-NAME.* in $work (also the run
#                           directory's home), removed at exit after the
#                           server in $spid is stopped
#   one_line TEXT           TEXT is exactly one line (else prints it, returns 1;
#                           use it as check's COMMAND so that it counts)
#   randfile SEED BYTES F   BYTES pseudo-random bytes from SEED into F
#   kill_whole PID          SIGKILL PID with none of its writes cut short: SIGSTOP
#                           first, SIGKILL once every thread (io_uring workers
#                           too) is stopped (see the function)
#   acks_kill SOCK DIR SEED [aligned]
#                           journal_acks.py writes through SOCK into DIR; the
#                           server in $spid killed (kill_whole) 1 s after 200
#                           acknowledgements; 1 if they never came
#   acks_verify SOCK DIR SEED
#                           journal_acks.py verify: every acknowledged write
#                           reads back (or a later unacknowledged one)
#   status_until NAME SECS EXPR
#                           until the python expression EXPR holds over
#                           `uraid status --json NAME` (as d), at most SECS
#                           seconds by the clock (a python3 start can take
#                           seconds on a loaded machine); else prints the
#                           status, returns 1
#   writes_of NAME          the array's writes to its members so far (status
#                           --json; superblock writes not counted): a client
#                           is writing once it grows
#   log_more NAME PATTERN COUNT
#                           $work/NAME.err (serve_bg's log) has more than COUNT
#                           lines matching PATTERN, within 30 s: the server
#                           logged it once more (a restart's line, not the
#                           last run's)
#   writes_bg DIR NAME ARGS fio random writes (ARGS: --bs=..., --iodepth=...)
#                           through DIR/NAME.sock for up to 10 s, in the
#                           background; its pid in $fpid
fails=0
PATH=$PATH:/usr/sbin:/sbin     # mdadm
# python3 looked up once: a version manager's shim (pyenv) took 2.8 s a call
# at load 12, the interpreter 0.3 s, and the tests poll with it
py3=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py3" ] &&
    python3() { "$py3" "$@"; }

need() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null || { echo "$t not installed (make deps)"; exit 77; }
    done
}

check() {
    local what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); return 1; fi
}

serve_bg() {
    local dir=$1 name=$2; shift 2
    rm -f "$dir/$name.pid"
    "$URAID" serve --socket="$dir/$name.sock" --threads=2 --pid-file="$dir/$name.pid" "$@" \
        >>"$dir/$name.out" 2>>"$dir/$name.err" &
    spid=$!
    # 30 s: a loaded machine can take seconds; a server that exits ends it
    for _ in $(seq 300); do
        [ -s "$dir/$name.pid" ] && return 0
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.1
    done
    cat "$dir/$name.err"
    return 1
}

stop_served() {
    "$URAID" stop "$1" >/dev/null || kill "$spid"
    wait "$spid"
    local rc=$?
    spid=
    return $rc
}

work_dir() {
    work=$(mktemp -d "/tmp/uraid-$1.XXXXXX") || exit 1
    export URAID_RUN_DIR=$work/run
    spid=
    trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
}

one_line() { [ "$(printf '%s\n' "$1" | wc -l)" -eq 1 ] || { echo "$1"; return 1; }; }

randfile() {
    python3 -c 'import random, sys
sys.stdout.buffer.write(random.Random(int(sys.argv[1])).randbytes(int(sys.argv[2])))' "$1" "$2" >"$3"
}

# A SIGKILL that lands while a thread copies a buffered write into the page
# cache stops that copy at a page boundary (the kernel checks for a fatal
# signal between pages): a log write of several pages is then torn, which
# md rightly answers with a resync instead of a replay. A stop signal is not
# fatal: a write under way completes, and each thread (the reactors, the
# io_uring workers) stops only between system calls or work items. Once all
# are stopped, SIGKILL ends the process with every write whole or not begun,
# as a crash between two writes would: what a test of the replay asserts on.
kill_whole() {
    local pid=$1 t st all
    kill -STOP "$pid" || return 1
    for _ in $(seq 200); do
        all=1
        for t in /proc/"$pid"/task/*/stat; do
            st=$(sed 's/^.*) \(.\).*/\1/' "$t" 2>/dev/null) || continue
            case $st in T|t|Z|X|"") ;; *) all=0 ;; esac
        done
        [ $all = 1 ] && break
        sleep 0.05
    done
    [ $all = 1 ] || echo "kill_whole: not every thread of $pid stopped within 10 s" >&2
    kill -KILL "$pid"
}

acks_kill() {
    local sock=$1 d=$2 seed=$3 cpid ok=0; shift 3
    mkdir -p "$d"
    python3 "$(dirname "${BASH_SOURCE[0]}")/../journal_acks.py" write "$sock" "$seed" "$d" "$@" \
        >"$d/write.out" 2>&1 &
    cpid=$!
    for _ in $(seq 600); do [ -e "$d/started" ] || ! kill -0 $cpid 2>/dev/null && break; sleep 0.1; done
    [ -e "$d/started" ] || ok=1
    sleep 1
    kill_whole "$spid"; wait "$spid" 2>/dev/null; spid=
    wait $cpid
    sed 's/^/  /' "$d/write.out"
    return $ok
}

acks_verify() {
    python3 "$(dirname "${BASH_SOURCE[0]}")/../journal_acks.py" verify "$1" "$3" "$2" \
        >"$2/verify.out" 2>&1
    local rc=$?
    sed 's/^/  /' "$2/verify.out"
    return $rc
}

writes_bg() {
    local dir=$1 name=$2; shift 2
    (cd "$dir" && exec fio --name=w --ioengine=nbd --uri="nbd+unix:///?socket=$dir/$name.sock" \
        --rw=randwrite --size=60M --time_based --runtime=10 --output=/dev/null "$@" \
        >/dev/null 2>&1) &
    fpid=$!
}

status_holds() {   # status_holds JSON EXPR
    python3 -c 'import json, sys
d = json.loads(sys.argv[1])
sys.exit(not eval("(" + sys.argv[2] + ")"))' "$1" "$2"
}

status_until() {
    local name=$1 end=$((SECONDS + $2)) expr=$3 out
    while [ $SECONDS -lt "$end" ]; do
        out=$("$URAID" status --json "$name" 2>&1)
        status_holds "$out" "$expr" 2>/dev/null && return 0
        sleep 0.2
    done
    # the last try says why (python's error, if any)
    out=$("$URAID" status --json "$name" 2>&1)
    status_holds "$out" "$expr" && return 0
    echo "  $name: not within $2 s: $expr"
    "$URAID" status "$name" | sed 's/^/  /'
    return 1
}

writes_of() {
    "$URAID" status --json "$1" | python3 -c 'import json, sys
print(sum(m["writes"] for m in json.load(sys.stdin)["members"]))'
}

log_more() {
    for _ in $(seq 300); do
        [ "$(grep -c "$2" "$work/$1.err")" -gt "$3" ] && return 0
        sleep 0.1
    done
    echo "  $1: no more than $3 lines '$2' in 30 s"
    return 1
}
