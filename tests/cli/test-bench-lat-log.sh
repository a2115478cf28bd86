#!/bin/bash
# uraid bench --write_lat_log=PREFIX (fio's option and format): one file per
# worker, a line per measured I/O (the ramp left out): the lines add up to
# the JSON's read and write I/O counts, every size is the block size, every
# completion time lies in the window; pooled by tests/tools/lat_pool (the
# p99 rule of make bench's latency-bound fidelity lines) the logs give
# exactly the JSON's read and write mean, p50, p99, p99.9 and max (the same
# samples, the same histogram). A folder that does not exist, or a run of
# several cells, is refused before anything runs, with no file written.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
POOL=$BUILD/tests/tools/lat_pool
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
[ -x "$POOL" ] || { echo "skip: needs $POOL (make $POOL)"; exit 77; }
POOL=$(realpath "$POOL")
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "skip: needs a writable /dev/shm"; exit 77; }
work=$(mktemp -d /dev/shm/uraid-latlog-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! "$URAID" bench --json --rw=randrw --rwmixread=70 --bs=8k --numjobs=2 --iodepth=4 \
        --size=8M --runtime=1 --ramp_time=0.3 --write_lat_log="$work/l" \
        "$work/f0" "$work/f1" >"$work/out.json" 2>"$work/err"; then
    fail "run: $(cat "$work/err")"
else
    [ -f "$work/l_lat.1.log" ] && [ -f "$work/l_lat.2.log" ] && [ ! -e "$work/l_lat.3.log" ] ||
        fail "not one log per worker: $(ls "$work")"
    "$POOL" "$work"/l_lat.*.log >"$work/pool" || fail "lat_pool: $(cat "$work/pool")"
    python3 - "$work/out.json" "$work/pool" "$work"/l_lat.*.log <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
pool = {l.split()[0]: [int(x) for x in l.split()[1:]] for l in open(sys.argv[2])}
n, bad = [0, 0], []
win_ms = j["runtime_ns"] / 1e6
for path in sys.argv[3:]:
    for line in open(path):
        f = [int(x) for x in line.split(",")]
        if len(f) != 5 or f[2] not in (0, 1) or f[3] != 8192 or f[4] != 0:
            bad.append("line %r" % line)
        elif not 0 <= f[0] <= win_ms + 1:
            bad.append("completion at %d ms outside the %.0f ms window" % (f[0], win_ms))
        else:
            n[f[2]] += 1
for d, name in ((0, "read"), (1, "write")):
    ios = j[name]["ios"]
    if n[d] != ios:
        bad.append("%s: %d lines, JSON %d I/Os" % (name, n[d], ios))
    l = j[name]["lat_ns"]
    want = [ios, l["mean"], l["p50"], l["p99"], l["p99_9"], l["max"]]
    if pool.get(name) != want:
        bad.append("%s pooled %s, JSON %s" % (name, pool.get(name), want))
if bad:
    print("FAIL: " + "; ".join(bad[:5]))
    sys.exit(1)
print("ok: %d read and %d write I/Os logged; pooled p99 read %d ns, write %d ns, as the JSON"
      % (n[0], n[1], pool["read"][3], pool["write"][3]))
PY
fi

# refused before the run, nothing written
for args in "--write_lat_log=$work/none/l" "--write_lat_log=$work/r --sweep=qd=1,2" \
            "--write_lat_log=$work/r --steady-state=6" "--write_lat_log=$work/"; do
    # shellcheck disable=SC2086
    "$URAID" bench --runtime=0.2 $args "$work/f0" >/dev/null 2>"$work/err"
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$work/err")" = 1 ] || fail "$args: exit $rc, $(cat "$work/err")"
    ls "$work" | grep -q '^r_lat' && fail "$args: a log was written"
done
echo x >"$work/bad.log"
"$POOL" "$work/bad.log" >/dev/null 2>"$work/err" && fail "lat_pool took a bad line"
grep -q "bad.log:1:" "$work/err" || fail "lat_pool's error: $(cat "$work/err")"
"$URAID" bench --help | grep -q -- "--write_lat_log=PREFIX" || fail "--help"
[ $fails -eq 0 ] && echo "all bench latency log checks passed"
[ $fails -eq 0 ]
