# shellcheck shell=bash
# Shared by the command tests that run `uraid serve` (source it from bash).
#   need TOOL...            exit 77 (skip) when one is missing
#   check WHAT COMMAND...   run COMMAND, print ok/FAIL, count failures in $fails
#                           (returns 1 on a failure, for diagnostics after it)
#   serve_bg DIR NAME ARGS  start uraid serve on DIR/NAME.sock (pid file, logs
#                           DIR/NAME.out/.err appended), wait until it serves;
#                           its pid in $spid
fails=0
PATH=$PATH:/usr/sbin:/sbin     # mdadm

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
    for _ in $(seq 100); do [ -s "$dir/$name.pid" ] && return 0; sleep 0.1; done
    cat "$dir/$name.err"
    return 1
}
