# shellcheck shell=bash
# make bench, block PLAN (sourced by scripts/bench.sh; BENCH_ONLY=plan runs
# it alone, BENCH_PLAN=0 leaves it out): uraid plan --verify on the tmpfs
# members $D4 for RAID 0, 5, 6 and 10 (4 members, chunk 512K, no spare)
# and three workloads. The planner measures member 1 itself (a one-member
# linear array, QD 1..32) and predicts from that; each candidate is then
# built and measured with the in-process benchmark. One line per level and
# workload: predicted IOPS, measured IOPS, their ratio (goal 0.75-1.33).
# Uses from bench.sh: URAID, D4, dir, log, RT, RAMP, want.
if want PLAN; then
echo "== uraid plan --verify: predicted / measured IOPS, RAID 0/5/6/10 x4 on tmpfs, QD 32 (plan issue; goal 0.75-1.33)"
for wl in 4k-random-read 4k-random-write database; do
    # shellcheck disable=SC2086
    if ! "$URAID" plan --verify=7 --force-write --level=0,5,6,10 --members=4 --chunks=512K \
            --spares=0 --failures=0 --profile="$wl" --iodepth=32 --runtime="$RT" \
            --ramp="$RAMP" --seed=1 --json $D4 >"$dir/plan.json" 2>"$dir/plan.err"; then
        cat "$dir/plan.err" >>"$log"     # its progress lines only when it failed
        echo "uraid plan --verify failed for $wl (see $log)" >&2
        continue
    fi
    python3 - "$dir/plan.json" "$wl" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["candidates"]:
    m = c["measured"]
    if not m:
        continue
    p = c["predicted"]["iops"]
    r = p / m["iops"] if m["iops"] else 0
    ok = "met" if 0.75 <= r <= 1.33 else "NOT MET"
    print("%-46s %9.0f IOPS | %-40s %9.0f IOPS | ratio %5.2f  (goal 0.75-1.33: %s)  (bound: %s)"
          % ("plan %s %s" % (c["name"], sys.argv[2]), p, "measured (uraid bench, in process)",
             m["iops"], r, ok, c["predicted"]["bound"]))
PY
done
fi
