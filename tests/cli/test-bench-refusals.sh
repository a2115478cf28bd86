#!/bin/bash
# uraid bench refuses what it cannot do as asked, before running anything:
# exit status 2 and one line on stderr that names the problem, rather than
# a run that silently ignores an option or converts an absurd number.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "skip: needs a writable /dev/shm"; exit 77; }
work=$(mktemp -d /dev/shm/uraid-bench-refusals.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
truncate -s 16M "$work/a.img"

# refuse "WHAT THE ERROR SAYS" ARGS...: exit 2, one line, containing the words
refuse() {
    local want=$1; shift
    local out rc
    # a refusal is immediate; an accepted option would run (for ever, with inf)
    out=$(timeout 20 "$URAID" bench "$@" 2>&1)
    rc=$?
    if [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [[ $out == *"$want"* ]]; then
        echo "ok: refused $*: $out"
    else
        echo "FAIL: $* (exit $rc, want 2 and '$want'): $out"; fails=$((fails + 1))
    fi
}

# times: not a number of seconds the run can keep (and convert to ns)
for t in inf INF infinity 1e300 1000001 nan -1 2e9ms 20000m; do
    refuse "at most 1000000" --runtime="$t" "$work/a.img"
    refuse "at most 1000000" --ramp_time="$t" "$work/a.img"
done

[ $fails -eq 0 ] && echo "all refusal checks passed"
[ $fails -eq 0 ]
