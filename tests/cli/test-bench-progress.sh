#!/bin/bash
# uraid bench's progress line on a terminal (a pty made by script(1)): a
# single run and a replay that last a few seconds show one (elapsed, and the
# time left when it is known); a short run and any run whose stderr is not
# a terminal show none; the ETA of a sweep's first cell counts that cell.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
command -v script >/dev/null || { echo "skip: needs script (util-linux)"; exit 77; }
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "skip: needs a writable /dev/shm"; exit 77; }
work=$(mktemp -d /dev/shm/uraid-bench-progress.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
truncate -s 16M "$work/a.img"

# on_tty ARGS...: run uraid bench with stdin, stdout and stderr on a pty; its output in $out
on_tty() {
    local cmd
    cmd=$(printf '%q ' "$URAID" bench "$@")
    out=$(script -qefc "$cmd" /dev/null </dev/null | tr '\r' '\n')
}

expect() {   # expect WHAT PATTERN (grep -E on $out) [!]
    local what=$1 pat=$2 neg=${3:-}
    if printf '%s\n' "$out" | grep -qE "$pat"; then found=1; else found=0; fi
    if { [ -z "$neg" ] && [ $found -eq 1 ]; } || { [ -n "$neg" ] && [ $found -eq 0 ]; }; then
        echo "ok: $what"
    else
        echo "FAIL: $what; output:"; printf '%s\n' "$out" | sed 's/^/    /'; fails=$((fails + 1))
    fi
}

on_tty --rw=randread --runtime=4 "$work/a.img"
expect "a 4 s run shows its progress with the time left" \
    "uraid bench: .*elapsed [0-9]+ s, ETA [0-9]+ s"
on_tty --rw=randread --runtime=1 "$work/a.img"
expect "a 1 s run shows no progress line" "elapsed" !
out=$("$URAID" bench --rw=randread --runtime=4 "$work/a.img" 2>&1 >/dev/null)
expect "stderr not a terminal: no progress line" "elapsed" !

# a timed replay of 3.5 s: elapsed, no ETA (a replay runs to the end of its trace)
{
    echo "fio version 3 iolog"
    echo "0 /x/a add"
    echo "0 /x/a open"
    for i in $(seq 0 70); do echo "$((i * 50000)) /x/a read $((i * 4096)) 4096"; done
    echo "3500000 /x/a close"
} >"$work/v3.log"
on_tty --replay="$work/v3.log" --replay-timed "$work/a.img"
expect "a 3.5 s replay shows its progress" "uraid bench: replay.*elapsed [0-9]+ s"

# a sweep of 3 cells of 1 s: at the start of the first, about 3 x 1.2 s are left
out=$("$URAID" bench --rw=randread --sweep=qd=1,2,4 --runtime=1 "$work/a.img" 2>&1 >/dev/null)
expect "the first cell's ETA counts the first cell" "cell 1/3 .*ETA [34] s"
expect "the last cell's ETA is not 0" "cell 3/3 .*ETA 1 s"

[ $fails -eq 0 ] && echo "all progress checks passed"
[ $fails -eq 0 ]
