#!/bin/bash
# uraid bench --sweep and --steady-state on tmpfs, cells of 0.05..0.1 s:
# every cell of a queue-depth, threads x queue-depth, block size x mix (56
# cells) and drive-count sweep is in the JSON with positive figures and the
# settings it names; the X-bit rating is the sum of IOPS(QD)/QD of the
# cells; the drives sweep has a JBOD cell before every array cell; the
# progress line names the cells on stderr; the workload's numjobs and
# iodepth are what the cells ran with (the matrix: 2 x QD 32 unless given). Steady state: whatever the
# machine's noise, "reached" and the number of rounds agree with the SNIA
# rule recomputed from the rounds' IOPS. Nothing asserts on speed.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "skip: needs a writable /dev/shm"; exit 77; }
work=$(mktemp -d /dev/shm/uraid-bench-sweep.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0

# sweep NAME CHECK-KIND uraid-bench-args...
sweep() {
    local name=$1 kind=$2
    shift 2
    if ! "$URAID" bench --json "$@" >"$work/out.json" 2>"$work/err"; then
        echo "FAIL $name: $(tail -1 "$work/err")"; fails=$((fails + 1)); return
    fi
    python3 - "$name" "$kind" "$work/out.json" "$work/err" <<'PY' || fails=$((fails + 1))
import json, sys
name, kind, path, errpath = sys.argv[1:5]
kind, _, want_jobs_qd = kind.partition(":")     # matrix:NUMJOBS:IODEPTH
d = json.load(open(path))
cells = d["cells"]
bad = []
def need(c, what):
    if not c: bad.append(what)
ran = [c for c in cells if "skipped" not in c]
# a cell of 0.05 s on a loaded machine may complete nothing: noted, not failed
idle = [c["label"] for c in ran if c["total"]["ios"] == 0]
need(len(idle) < len(ran), "no cell did any I/O")
for c in ran:
    need(c["runtime_ns"] > 0 and len(c["series"]) >= 1, c["label"] + ": no window")
    if c["total"]["ios"] == 0:
        continue
    if "cell_iodepth" in c:
        need(c["iodepth"] == c["cell_iodepth"], c["label"] + ": iodepth")
    if "cell_numjobs" in c:
        need(c["numjobs"] == c["cell_numjobs"], c["label"] + ": numjobs")
    if "cell_read_pct" in c:
        # shares are exact per 100 I/Os drawn; the window cuts a deck and the I/Os in flight
        n = c["total"]["ios"]
        got = 100.0 * c["read"]["ios"] / n
        tol = 1 + 100.0 * (100 + c["iodepth"] * c["numjobs"]) / n
        need(abs(got - c["cell_read_pct"]) <= tol, "%s: %.1f %% reads of %d" % (c["label"], got, n))
        need(c["total"]["bytes"] == c["total"]["ios"] * c["cell_bs_bytes"], c["label"] + ": bs")
# the workload's numjobs and iodepth are those its cells ran with, where no axis varies them
for key, axis in (("numjobs", "cell_numjobs"), ("iodepth", "cell_iodepth")):
    if kind in ("qd", "matrix") and not any(axis in c for c in ran):
        need(all(c[key] == d["workload"][key] for c in ran),
             "workload.%s %d, cells ran with %s" % (key, d["workload"][key],
                                                    sorted({c[key] for c in ran})))
progress = open(errpath).read()
need("cell %d/%d" % (len(ran), len(cells)) in progress or kind == "drives",
     "no progress line for the last cell")
if kind == "qd":
    need([c["cell_iodepth"] for c in cells] == [1, 2, 4, 8, 16, 32], "qd cells")
    want = sum(c["total"]["ios"] * 1e9 / c["runtime_ns"] / c["cell_iodepth"] for c in cells)
    r = d["xbit_rating"]
    need(r["complete"] and abs(r["iops"] - want) <= 0.01 * want + len(cells),
         "rating %d, cells give %.0f" % (r["iops"], want))
elif kind == "threads":
    need([(c["cell_numjobs"], c["cell_iodepth"]) for c in cells] ==
         [(1, 1), (1, 4), (2, 1), (2, 4)], "threads x qd cells")
elif kind == "matrix":
    need(len(cells) == 56 and len(ran) == 56, "%d matrix cells" % len(cells))
    jobs, qd = (int(x) for x in want_jobs_qd.split(":"))
    need((d["workload"]["numjobs"], d["workload"]["iodepth"]) == (jobs, qd),
         "matrix ran %d x QD %d, not %d x QD %d" % (d["workload"]["numjobs"],
                                                  d["workload"]["iodepth"], jobs, qd))
    need(len({(c["cell_bs_bytes"], c["cell_read_pct"]) for c in cells}) == 56, "cells repeat")
elif kind == "drives":
    lv, ndrives = want_jobs_qd.split(":")           # drives:LEVEL:DRIVES
    want = []
    for n in range(1, int(ndrives) + 1):
        want += ["jbod x%d" % n, "%s x%d" % (lv, n)]
    need([c["label"] for c in cells] == want, "drive cells")
    # below the level's minimum (2 for RAID 0 and 5, as uraid create) the cell is skipped
    need("needs at least 2" in cells[1].get("skipped", ""), lv + " x1 not skipped")
    for c in ran:
        want = "JBOD" if c["cell_config"] == "jbod" else "%s, %d members" % (lv, c["cell_drives"])
        need(want in c["target"]["description"], c["label"] + ": " + c["target"]["description"])
if bad:
    print("FAIL %s: %s" % (name, "; ".join(bad))); sys.exit(1)
print("ok %s: %d cells (%d run)%s" % (name, len(cells), len(ran),
      ", no I/O completed in " + ", ".join(idle) if idle else ""))
PY
}

f=$work/s.img
sweep "qd sweep" qd --rw=randread --sweep=qd=1..32 --runtime=0.1 --size=16M "$f"
sweep "threads x qd" threads --rw=randread --sweep=threads=1,2 --sweep=qd=1,4 --runtime=0.1 "$f"
# the matrix runs 2 workers at QD 32 (workloads.md) unless told otherwise
sweep "matrix" matrix:2:4 --sweep=matrix --iodepth=4 --runtime=0.05 --force-write "$f"
sweep "matrix, 1 worker" matrix:1:32 --sweep=matrix --numjobs=1 --runtime=0.05 --force-write "$f"
sweep "drives" drives:raid5:3 --array --level=5 --chunk=64K --member-size=16M --sweep=drives=1..3 \
    --rw=randwrite --iodepth=4 --runtime=0.1 "$work/d0" "$work/d1" "$work/d2"
# RAID 0 from 1 drive: the 1-drive cell is skipped (as documented), not a failed create
sweep "drives, raid0" drives:raid0:2 --array --level=0 --chunk=64K --member-size=16M \
    --sweep=drives=1..2 --rw=randwrite --iodepth=4 --runtime=0.1 "$work/z0" "$work/z1"

# the human table: one row per cell and the rating
if "$URAID" bench --rw=randread --sweep=qd=1,2 --runtime=0.05 "$f" 2>/dev/null |
        grep -q "^X-bit rating"; then echo "ok: human sweep table"; else
    echo "FAIL: human sweep table"; fails=$((fails + 1)); fi
for bad in "--sweep=qd=0" "--sweep=depth=4" "--sweep=matrix --sweep=qd=1,2" \
        "--sweep=drives=1..2" "--sweep=qd=1 --steady-state"; do
    # shellcheck disable=SC2086
    out=$("$URAID" bench $bad --runtime=0.05 "$f" 2>&1)
    if [ $? -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then echo "ok: refused $bad: $out"
    else echo "FAIL: $bad: $out"; fails=$((fails + 1)); fi
done

# steady state: at most 8 rounds of 0.1 s
if "$URAID" bench --json --rw=randread --steady-state=8 --runtime=0.1 "$f" >"$work/ss.json" 2>/dev/null; then
    python3 - "$work/ss.json" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
ss, cells = d["steady_state"], d["cells"]
y = [c["total"]["ios"] * 1e9 / c["runtime_ns"] for c in cells]
def rule(v):
    avg = sum(v) / 5
    slope = sum((i - 2) * x for i, x in enumerate(v)) / 10
    return max(v) - min(v) <= 0.2 * avg and abs(slope) * 4 <= 0.1 * avg
first = next((n for n in range(5, len(y) + 1) if rule(y[n - 5:n])), None)
bad = []
if ss["rounds"] != len(cells): bad.append("rounds %d, cells %d" % (ss["rounds"], len(cells)))
if ss["reached"]:
    # the rule holds at the last round and at no earlier one (1 % slack for rounding)
    if first is None or first < len(y) - 0: bad.append("reached, but the rule first holds at %s" % first)
else:
    if len(cells) != 8: bad.append("stopped after %d rounds without reaching it" % len(cells))
if bad:
    print("FAIL steady state: " + "; ".join(bad), y); sys.exit(1)
print("ok steady state: reached=%s after %d rounds, window mean %d IOPS" %
      (ss["reached"], ss["rounds"], ss["window_mean_iops"]))
PY
else
    echo "FAIL: steady state run"; fails=$((fails + 1))
fi
[ $fails -eq 0 ] && echo "all sweep checks passed"
[ $fails -eq 0 ]
