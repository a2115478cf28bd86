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

# options that would be ignored
: >"$work/empty.acc"
printf '# only a comment\n\n' >"$work/comment.acc"
refuse "no access line" --access-file="$work/empty.acc" "$work/a.img"
refuse "no access line" --access-file="$work/comment.acc" "$work/a.img"
refuse "--member-size needs --array" --member-size=16M --size=16M "$work/new.img"
refuse "--member-size needs --array" --member-size=16M "$work/a.img"
refuse "own % random" --access=4k,50,100 --percentage_random=0 "$work/a.img"
[ ! -e "$work/new.img" ] || { echo "FAIL: a refused run created new.img"; fails=$((fails + 1)); }

# write data: one option, a pattern fio would take
refuse "--zero_buffers or --buffer_pattern, once" --zero_buffers --buffer_pattern=0x00 "$work/a.img"
refuse "--zero_buffers or --buffer_pattern, once" --buffer_pattern=0x00 --buffer_pattern=0x01 "$work/a.img"
for p in abc 0x 0xabc 0xgg '"'; do
    refuse "--buffer_pattern=$p" --buffer_pattern="$p" "$work/a.img"
done

# an empty target, and --size=0 (0 would mean "to the end": nothing for a new file)
: >"$work/empty.img"
refuse "is empty" "$work/empty.img"
refuse "--size=0: more than 0" --size=0 "$work/new.img"
refuse "--size=0: more than 0" --size=0 "$work/a.img"

# --percentage_random applies to a profile's lines (they are random by default)
if out=$("$URAID" bench --json --profile=database --percentage_random=0 --runtime=0.2 \
        --force-write "$work/a.img" 2>&1) &&
   printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
acc = d["workload"]["access"]
assert all(a["random_pct"] == 0 for a in acc), acc
assert acc[0]["read_pct"] == 67 and acc[0]["bs_bytes"] == 8192, acc
assert "0 % random" in d["workload"]["description"], d["workload"]["description"]'; then
    echo "ok: --profile=database --percentage_random=0 is sequential"
else
    echo "FAIL: --profile=database --percentage_random=0: $out"; fails=$((fails + 1))
fi

[ $fails -eq 0 ] && echo "all refusal checks passed"
[ $fails -eq 0 ]
