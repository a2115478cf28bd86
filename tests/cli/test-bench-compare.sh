#!/bin/bash
# uraid bench --compare, --precondition and the read-share and block-size
# sweeps, on image files in /tmp with runs of 0.1 s: every configuration of
# the cross product is in the JSON, run (with its figures and its config
# keys) or skipped with a reason (RAID 6 on 3 members; RAID 1's second
# chunk, the same array); the JSON has its version, host and UTC
# timestamp; preconditioning writes each configuration's range twice and
# shows as a phase with its duration; the sweeps' cells carry the read share
# and block size they ran with; the HTML report has a chart per measure with
# a bar per configuration; bad --compare values are one line and exit 2
# before anything is written. Nothing asserts on speed.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
work=$(mktemp -d /tmp/uraid-bench-compare.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
m="$work/m0 $work/m1 $work/m2"

# 1. level x chunk on 3 members: 6 configurations, RAID 6 skipped twice
if ! "$URAID" bench --json --compare=level=0,5,6 --compare=chunk=64K,128K --member-size=8M \
        --rw=randrw --runtime=0.1 --csv="$work/c.csv" $m >"$work/c.json" 2>"$work/err"; then
    fail "compare: $(tail -1 "$work/err")"
else
    # the CSV keeps each configuration: key=value pairs in cell_config
    grep -q "^raid5 chunk=128 KiB,,,,,,level=raid5;chunk=128 KiB,total," "$work/c.csv" ||
        fail "CSV cell_config: $(grep -m1 'raid5 chunk=128' "$work/c.csv")"
    python3 - "$work/c.json" <<'PY' || fails=$((fails + 1))
import json, re, sys
d = json.load(open(sys.argv[1]))
bad = []
def need(c, what):
    if not c: bad.append(what)
need(d["version"] == 1 and d["kind"] == "compare", "version/kind")
need(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", d["timestamp"]), "timestamp " + d["timestamp"])
h = d["host"]
need(h["hostname"] and h["kernel"].startswith("Linux") and h["cpu_model"] and h["cores"] >= 1, "host %r" % h)
cells = d["cells"]
labels = [c["label"] for c in cells]
need(labels == ["raid0 chunk=64 KiB", "raid0 chunk=128 KiB", "raid5 chunk=64 KiB",
                "raid5 chunk=128 KiB", "raid6 chunk=64 KiB", "raid6 chunk=128 KiB"],
     "labels %r" % labels)
for c in cells:
    lv, ch = c["config"]["level"], c["config"]["chunk"]
    need(c["label"] == "%s chunk=%s" % (lv, ch), c["label"] + ": config %r" % c["config"])
    if lv == "raid6":
        need("needs at least 4 members" in c.get("skipped", ""), c["label"] + ": skipped?")
        need("total" not in c, c["label"] + ": figures of a skipped configuration")
        continue
    need("skipped" not in c and c["runtime_ns"] > 0, c["label"] + ": not run")
    desc = c["target"]["description"]
    need(desc.startswith(lv + ", 3 members") and ("chunk %s" % ch) in desc,
         c["label"] + ": ran on " + desc)
    t = c["total"]
    need(t["ios"] == c["read"]["ios"] + c["write"]["ios"], c["label"] + ": read + write")
if bad:
    print("FAIL compare:", "; ".join(bad)); sys.exit(1)
PY
fi

# 2. RAID 1 and 5 preconditioned; RAID 1's second chunk is the same array
rm -f $m
if ! "$URAID" bench --compare=level=1,5 --compare=chunk=64K,128K --precondition=5 \
        --member-size=4M --rw=randwrite --runtime=0.1 --html="$work/p.html" $m >"$work/p.txt" \
        2>"$work/err"; then
    fail "precondition: $(tail -1 "$work/err")"
else
    grep -q "^precondition raid1: sequential fill 2.00 x .* in 128 KiB writes, [0-9.]* s; workload [1-5] rounds\?, [0-9.]* s" "$work/p.txt" ||
        fail "precondition phase line: $(cat "$work/p.txt")"
    grep -q "^raid1 chunk=128 KiB *skipped: the same array as 'raid1' (raid1 has no chunk)" "$work/p.txt" ||
        fail "raid1's second chunk: $(grep 'raid1 chunk=128 KiB' "$work/p.txt")"
    grep -q "precondition: sequential fill" "$work/err" || fail "no fill phase on stderr"
    # the report says what each preconditioning did
    for cfg in "raid1" "raid5 chunk=64 KiB" "raid5 chunk=128 KiB"; do
        grep -q "preconditioned $cfg<.*fill 2.00 × [0-9.]* MiB in [0-9.]* s; [1-5] rounds\? of the workload in [0-9.]* s, steady state" "$work/p.html" ||
            fail "report: no precondition line for $cfg: $(grep -o 'preconditioned[^/]*' "$work/p.html" | head -3)"
    done
    # the fill's length is not known ahead: the ETA says it leaves it out
    grep -q "ETA [0-9]* s + preconditioning" "$work/err" || fail "ETA without a word on the fill: $(head -2 "$work/err")"
    [ "$(grep -Ec '^raid(1|5 chunk=[0-9]+ KiB)  +[0-9]' "$work/p.txt")" = 3 ] || fail "3 rows run: $(cat "$work/p.txt")"
fi
if ! "$URAID" bench --json --compare=level=5 --precondition=5 --force-write \
        --rw=randrw --runtime=0.1 $m >"$work/p.json" 2>"$work/err"; then
    fail "precondition json: $(tail -1 "$work/err")"
else
    python3 - "$work/p.json" <<'PY' || fails=$((fails + 1))
import json, sys
c = json.load(open(sys.argv[1]))["cells"][0]
p = c.get("precondition", {})
ok = (p.get("done") and p["fill_bs_bytes"] == 131072 and p["fill_range_bytes"] > 0 and
      p["fill_bytes"] == 2 * p["fill_range_bytes"] and 1 <= p["rounds"] <= 5 and
      p["fill_ns"] > 0 and p["steady_ns"] > 0 and "total" in c)
if not ok:
    print("FAIL precondition json: %r" % p); sys.exit(1)
PY
fi
# the write policy as a key: both configurations run, the same workload,
# and write-back absorbs writes (its cache counted them in the cell's config)
if ! "$URAID" bench --json --compare=write-cache=through,back --level=5 --force-write \
        --rw=randwrite --size=4M --runtime=0.1 $m >"$work/w.json" 2>"$work/err"; then
    fail "write-cache compare: $(tail -1 "$work/err")"
else
    python3 - "$work/w.json" <<'PY' || fails=$((fails + 1))
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
pol = [c.get("config", {}).get("write-cache") for c in cells]
ios = [c.get("total", {}).get("write", {}).get("ios", c.get("total", {}).get("ios", 0)) for c in cells]
if pol != ["through", "back"] or not all(ios):
    print("FAIL write-cache compare: policies %r, I/Os %r" % (pol, ios)); sys.exit(1)
PY
fi
# a single run: the phase before it, once
if ! "$URAID" bench --json --precondition=5 --rw=randread --size=4M --runtime=0.1 \
        "$work/r0" >"$work/s.json" 2>"$work/err"; then
    fail "precondition single: $(tail -1 "$work/err")"
else
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["precondition"]
sys.exit(0 if p["done"] and p["fill_bytes"] == 2 * 4194304 and p["fill_range_bytes"] == 4194304 else 1)' \
        "$work/s.json" || fail "precondition of a single run: $(head -c 600 "$work/s.json")"
fi

# 3. the read share and block size sweeps
if ! "$URAID" bench --json --sweep=rwmixread=100..0:50 --sweep=bs=4k..16k --rw=randrw \
        --size=4M --runtime=0.1 --force-write "$work/r0" >"$work/w.json" 2>"$work/err"; then
    fail "sweeps: $(tail -1 "$work/err")"
else
    python3 - "$work/w.json" <<'PY' || fails=$((fails + 1))
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
bad = []
want = [(bs, r) for bs in (4096, 8192, 16384) for r in (100, 50, 0)]
got = [(c["cell_bs_bytes"], c["cell_read_pct"]) for c in cells]
if got != want: bad.append("cells %r" % got)
for c in cells:
    t = c["total"]
    if t["ios"] and t["bytes"] != t["ios"] * c["cell_bs_bytes"]: bad.append(c["label"] + ": bs")
    if c["cell_read_pct"] == 100 and c["write"]["ios"]: bad.append(c["label"] + ": wrote")
    if c["cell_read_pct"] == 0 and c["read"]["ios"]: bad.append(c["label"] + ": read")
if bad:
    print("FAIL sweeps:", "; ".join(bad)); sys.exit(1)
PY
fi

# 4. the report: a chart per measure, a bar per configuration run
rm -f $m
if ! "$URAID" bench --compare=level=0,5 --member-size=4M --rw=randrw --runtime=0.1 \
        --html="$work/r.html" $m >/dev/null 2>"$work/err"; then
    fail "report: $(tail -1 "$work/err")"
else
    for t in "IOPS per configuration" "MiB/s per configuration" "Mean latency per configuration" \
             "p99 latency per configuration" "CPU per configuration"; do
        grep -q "$t" "$work/r.html" || fail "report: no '$t'"
    done
    grep -q 'data-series="read IOPS"' "$work/r.html" || fail "report: no read IOPS bars"
    # the results table: CPU, and reads and writes apart for a mixed workload
    grep -q "<th>CPU %</th>" "$work/r.html" || fail "report: no CPU column"
    grep -q "Reads and writes apart" "$work/r.html" || fail "report: no read/write table"
    grep -q "the configurations end to end in the order run, each marked" "$work/r.html" ||
        fail "report: time series of a comparison not said to be marked per configuration"
fi

# 5. refusals: one line, exit 2, nothing created
for args in "--compare=level=7" "--compare=level=5,5" "--compare=colour=red" \
            "--compare=members=9" "--compare=chunk=64k" "--compare=level=5 --sweep=qd=1,2" \
            "--compare=level=5 --steady-state" "--precondition --steady-state" \
            "--sweep=rwmixread=101" "--sweep=bs=1000" "--sweep=bs=4k --sweep=qd=1,2" \
            "--level=5 --layout=left-symmetric --compare=level=5,10" \
            "--level=5 --chunk=12k --compare=level=5,10" "--compare=level=5,10 --compare=chunk=12k"; do
    rm -f $m
    # shellcheck disable=SC2086
    "$URAID" bench $args --rw=randread --member-size=4M --runtime=0.1 $m >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <"$work/err")" = 1 ] && [ ! -s "$work/out" ] &&
        [ ! -e "$work/m0" ] || fail "$args: exit $rc, stderr $(cat "$work/err")"
done
# --chunk that one level cannot take skips that configuration only, with the reason
rm -f $m
if ! "$URAID" bench --level=5 --chunk=12k --compare=level=0,5 --member-size=4M --rw=randread \
        --runtime=0.1 $m >"$work/out" 2>"$work/err"; then
    fail "--chunk=12k on raid0 and raid5: $(tail -1 "$work/err")"
else
    grep -q "^raid0  *[0-9]" "$work/out" || fail "raid0 with a 12 KiB chunk did not run: $(cat "$work/out")"
    grep -q "^raid5 .*skipped: raid5 takes a power-of-two chunk, not 12 KiB" "$work/out" ||
        fail "raid5 with a 12 KiB chunk: $(grep raid5 "$work/out")"
fi
# members that exist are not written without --force-write
"$URAID" bench --compare=level=0 --member-size=4M --runtime=0.1 $m >/dev/null 2>&1
"$URAID" bench --compare=level=0 --runtime=0.1 $m >"$work/out" 2>"$work/err"
[ $? = 2 ] && grep -q "force-write" "$work/err" || fail "existing members written: $(cat "$work/err")"

[ "$fails" = 0 ] && echo "ok: compare, precondition, read-share and block-size sweeps"
exit $((fails > 0))
