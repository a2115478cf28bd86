# shellcheck shell=bash
# make bench, block PLAN (sourced by scripts/bench.sh; BENCH_ONLY=plan runs
# it alone, BENCH_PLAN=0 leaves it out): uraid plan --verify on the tmpfs
# members $D4 for RAID 0, 5, 6 and 10 (4 members, chunk 512K, no spare)
# and three workloads. The planner measures member 1 itself (a one-member
# linear array, QD 1..32) and the host's CPU costs (linear x1..x4, RAID 0 x2
# split, each level family on its smallest array, in CPU time; planner.md),
# and predicts from that; each candidate is then
# measured in 3 rounds, each round measuring the CPU share again, predicting
# at it, then measuring the candidate (interleaved, so that load moves both
# alike). Two lines per level and workload: the median of the rounds'
# predicted/measured IOPS ratios (goal 0.75-1.33), and the CPU µs per client
# I/O predicted and measured (hardly moved by load: the model's own error).
# Runs of BENCH_PLAN_RUNTIME (1.5 s) + BENCH_PLAN_RAMP (0.5 s): 3 workloads x
# 7 candidates x 3 rounds x 2 runs, and per workload the calibration's 16 to
# 32 runs (linear x1 and the split three times each): about 9 minutes on a
# quiet machine.
# Uses from bench.sh: URAID, D4, dir, log, want.
if want PLAN; then
PLAN_RT=${BENCH_PLAN_RUNTIME:-1.5}
PLAN_RAMP=${BENCH_PLAN_RAMP:-0.5}
echo "== uraid plan --verify: predicted / measured, RAID 0/5/6/10 x4 on tmpfs, QD 32, median of 3 rounds (plan issue; goal 0.75-1.33)"
for wl in 4k-random-read 4k-random-write database; do
    # shellcheck disable=SC2086
    if ! "$URAID" plan --verify=7 --rounds=3 --force-write --level=0,5,6,10 --members=4 \
            --chunks=512K --spares=0 --failures=0 --profile="$wl" --iodepth=32 \
            --runtime="$PLAN_RT" --ramp="$PLAN_RAMP" --seed=1 --json $D4 \
            >"$dir/plan.json" 2>"$dir/plan.err"; then
        cat "$dir/plan.err" >>"$log"     # its progress lines only when it failed
        echo "uraid plan --verify failed for $wl (see $log)" >&2
        continue
    fi
    python3 - "$dir/plan.json" "$wl" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = d["host"]
print("host %-15s CPU us per client I/O: %.2f read, %.2f write (split made: %s); CPU share %.2f"
      % (sys.argv[2], h["cpu_ns_per_io"] / 1e3, h.get("cpu_ns_per_write_io", 0) / 1e3,
         h.get("cpu_split"), h["cpu_share"]))
f = lambda v: "-" if v is None else "%.2f" % (v / 1e3)
print("host %-15s CPU us per 4 KiB member I/O by its member's queue: %s; per KiB more %s/%s" % (sys.argv[2],
      ", ".join("%s %s at QD %.3g" % ("write" if m["write"] else "read", f(m["ns"]), m["qd"])
                for m in h.get("cpu_member_by_qd", [])),
      f(h["cpu_ns_per_member_kib"][0]), f(h["cpu_ns_per_member_kib"][1])))
print("host %-15s CPU us of each level's own work (on its smallest array): %s" % (sys.argv[2], ", ".join(
      "%s%s x%d read %s write %s" % (o["level"], " " + o["layout"] if o["layout"] else "", o["members"],
      f(o["ns_per_read"]), f(o["ns_per_write"])) for o in h.get("cpu_own", []))))
runs = h.get("cpu_runs_ns_per_io") or {}
print("host %-15s CPU us per client I/O of the runs: %s" % (sys.argv[2], ", ".join(
      "%s %.2f" % (k, v / 1e3) for k, v in runs.items() if v is not None)))
for c in d["candidates"]:
    m = c["measured"]
    if not m:
        continue
    r = m["ratio"] or 0
    ok = "met" if 0.75 <= r <= 1.33 else "NOT MET"
    name = "plan %s %s" % (c["name"], sys.argv[2])
    print("%-46s %9.0f IOPS | %-40s %9.0f IOPS | ratio %5.2f  (goal 0.75-1.33: %s)  "
          "(median of %d; planner's own %.0f; bound: %s)"
          % (name, m["predicted_now_iops"], "measured (uraid bench, in process)", m["iops"], r,
             ok, m["rounds"], c["predicted"]["iops"], c["predicted"]["bound"]))
    pc, mc = c["predicted"]["cpu_ns_per_io"] / 1e3, m["cpu_ns_per_io"] / 1e3
    print("%-46s %9.2f CPU us/IO | %-37s %9.2f CPU us/IO | ratio %5.2f"
          % (name, pc, "measured (process CPU / client I/Os)", mc, pc / mc if mc else 0))
PY
done
fi
