#!/bin/bash
# uraid plan: data-sheet drives give a sane table and JSON (ranked, the
# need respected, the arithmetic visible), refusals are one line with exit
# status 2 and nothing run, --html writes a report with charts, and a short
# --verify builds RAID 0 and 5 on four image files in /tmp and measures them
# (2-second runs; only that measurements exist is checked, never a speed).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need python3
work=$(mktemp -d /tmp/uraid-plan.XXXXXX)
trap 'rm -rf "$work"' EXIT

SSD="read_iops=77000,write_iops=65500,read_mib_s=466,write_mib_s=420,capacity=480GB,afr=0.44%,ure=1e-16,read_lat_us=100,write_lat_us=60,price=300"

# the table: a header line per need and a ranked list
out=$("$URAID" plan --drive="$SSD" --drives=6 --capacity=1T --failures=1 --profile=database 2>&1)
rc=$?
check "table: exit 0" [ $rc -eq 0 ]
check "table: names the workload" grep -q '^workload: database' <<<"$out"
check "table: first row is the best fit" grep -qE '^1 .*best fit' <<<"$out"

# JSON: ranked, fits first, each fit meets the need, RAID 5 x6 arithmetic
"$URAID" plan --drive="$SSD" --drives=6 --capacity=1T --failures=1 --profile=4k-random-write \
    --json >"$work/p.json" 2>"$work/p.err"
check "json: exit 0" [ $? -eq 0 ]
check "json: sane" python3 - "$work/p.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1
c = d["candidates"]
assert len(c) > 10, len(c)
fits = [x["fits"] for x in c]
assert fits == sorted(fits, reverse=True), "fits are not first"
need = d["need"]
for x in c:
    if x["fits"]:
        assert x["usable_bytes"] >= need["capacity_bytes"] and x["failures_survived"] >= 1, x
    p = x["predicted"]
    assert p["iops"] > 0 and p["lat_mean_ns"] > 0 and p["lat_p99_ns"] >= p["lat_mean_ns"], x
    assert x["measured"] is None
    assert 0 < x["efficiency"] <= 1
r5 = [x for x in c if x["level"] == "raid5" and x["members"] == 6 and x["spares"] == 0]
assert r5 and abs(r5[0]["predicted"]["member_ios_per_io"] - 4) < 1e-9, r5[0]
assert abs(r5[0]["efficiency"] - 5 / 6) < 1e-5, r5[0]["efficiency"]  # less the chunk rounding
r6 = [x for x in c if x["level"] == "raid6" and x["members"] == 6]
assert abs(r6[0]["predicted"]["member_ios_per_io"] - 6) < 1e-9
r0 = [x for x in c if x["level"] == "raid0" and x["members"] == 6]
assert not r0[0]["fits"] and "survives 0" in r0[0]["reason"], r0[0]
assert r0[0]["loss_probability"] > r5[0]["loss_probability"] > r6[0]["loss_probability"]
PY

# a mixed pool and a drive model file
cat >"$work/model.json" <<'EOF2'
{ "uraid_drive_model": 1, "name": "nvme", "path": "/dev/nvme0n1", "capacity_bytes": 1000204886016,
  "host": "h", "timestamp": "2026-01-01T00:00:00Z", "runtime_s": 60,
  "random_read_4k": [{"qd":1,"iops":12000,"mean_us":80,"p99_us":120},{"qd":32,"iops":400000,"mean_us":80,"p99_us":200}],
  "random_write_4k": [{"qd":1,"iops":30000,"mean_us":33,"p99_us":60},{"qd":32,"iops":200000,"mean_us":160,"p99_us":400}],
  "mixed_70_30_4k": [{"qd":1,"iops":14000,"mean_us":70,"p99_us":150}],
  "seq_read": [{"bs":131072,"mib_s":2500},{"bs":1048576,"mib_s":3000}],
  "seq_write": [{"bs":131072,"mib_s":1800},{"bs":1048576,"mib_s":2000}], "afr": null, "ure": null }
EOF2
out=$("$URAID" plan --drive-model="$work/model.json" --drives=2 --drive="$SSD" --drives=2 --json 2>&1)
check "mixed pool: exit 0" [ $? -eq 0 ]
check "mixed pool: two models, loss unknown with a null AFR" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert [m["count"] for m in d["drives"]] == [2, 2], d["drives"]
assert all(x["loss_probability"] is None for x in d["candidates"])
' "$out"

# bench --characterise of two devices writes a list, one model per device
# (the shape of its docs/json.md: keys in that order, qd 1..32, afr/ure null)
python3 - "$work/two.json" <<'PY2'
import json, sys
def pts(base):
    return [{"qd": q, "iops": base * min(q, 8) + 0.5, "mean_us": 100.0 * q / min(q, 8),
             "p99_us": 300.0 * q / min(q, 8)} for q in (1, 2, 4, 8, 16, 32)]
def model(name, base):
    return {"uraid_drive_model": 1, "name": name, "path": "/dev/" + name,
            "capacity_bytes": 1 << 34, "host": "h", "timestamp": "2026-12-02T04:00:00Z",
            "runtime_s": 2.0, "random_read_4k": pts(base), "random_write_4k": pts(base / 2),
            "mixed_70_30_4k": [pts(base)[0], pts(base)[5]],
            "seq_read": [{"bs": 131072, "mib_s": 400.0}, {"bs": 1048576, "mib_s": 500.0}],
            "seq_write": [{"bs": 131072, "mib_s": 300.0}, {"bs": 1048576, "mib_s": 350.0}],
            "afr": None, "ure": None}
json.dump([model("sda", 10000.0), model("sdb", 20000.0)], open(sys.argv[1], "w"), indent=2)
PY2
out=$("$URAID" plan --drive-model="$work/two.json,afr=1%,ure=1e-15,price=200" --json 2>&1)
check "list of models: exit 0" [ $? -eq 0 ]
check "list of models: a mixed pool of one each, the data sheet's AFR, URE and price used" \
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert [(m["name"], m["count"]) for m in d["drives"]] == [("sda", 1), ("sdb", 1)], d["drives"]
c = d["candidates"]
assert any(x["loss_probability"] is not None and x["loss_probability"] > 0 for x in c), c[0]
assert all(x["cost_per_tb"] is not None for x in c), c[0]
' "$out"
out=$("$URAID" plan --drive-model="$work/two.json" --drives=3 --json 2>&1)
check "list of models: --drives counts each" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert [m["count"] for m in d["drives"]] == [3, 3], d["drives"]
assert all(x["loss_probability"] is None for x in d["candidates"])
' "$out"

# refusals: one line, exit 2
refuse() {
    local want=$1; shift
    local o rc
    o=$("$URAID" plan "$@" 2>&1)
    rc=$?
    if [ $rc -eq 2 ] && one_line "$o" >/dev/null && [[ $o == *"$want"* ]]; then
        echo "ok: refused $*: $o"
    else
        echo "FAIL: $* (exit $rc, want 2 and '$want'): $o"; fails=$((fails + 1))
    fi
}
refuse "not a level" --drive="$SSD" --drives=4 --level=7
refuse "not a level" --drive="$SSD" --drives=4 --level=5,raid9
refuse "cannot be had" --drive="$SSD" --drives=4 --capacity=100T
refuse "capacity=lots" --drive="read_iops=1,write_iops=1,read_mib_s=1,write_mib_s=1,capacity=lots"
refuse "missing" --drive="read_iops=1000"
refuse "unknown key 'speed'" --drive="$SSD,speed=9"
refuse "not KEY=VALUE" --drive="read_iops"
refuse "read_iops=-1" --drive="read_iops=-1,write_iops=1,read_mib_s=1,write_mib_s=1,capacity=1G"
refuse "no drives" --profile=database
refuse "RAID 6 needs 4" --drive="$SSD" --drives=3 --level=6
refuse "no such profile" --drive="$SSD" --drives=4 --profile=nope
refuse "--force-write" --drive="$SSD" --verify=1 "$work/m0"
refuse "only taken with --verify" --drive="$SSD" --drives=4 "$work/m0"
refuse "after the --drive" --drives=3
refuse "--help" --drive="$SSD" --bogus
refuse "not a uraid drive model" --drive-model=<(echo '{"x": 1}')
refuse "drive model [1]" --drive-model=<(echo '[{"uraid_drive_model": 1, "capacity_bytes": 1073741824, "random_read_4k": [{"qd":1,"iops":1,"mean_us":1}], "random_write_4k": [{"qd":1,"iops":1,"mean_us":1}], "seq_read": [{"bs":131072,"mib_s":1}], "seq_write": [{"bs":131072,"mib_s":1}]}, {"x": 1}]')
refuse "unknown key 'speed'" --drive-model="$work/two.json,afr=1%,speed=9"
refuse "afr=7" --drive-model="$work/two.json,afr=7"
refuse "do not divide" --drive="$SSD" --drives=4 --level=0 --members=4 --iodepth=3 \
    --numjobs=2 --qd-per-drive=3 --verify=1 --force-write "$work/d0" "$work/d1" "$work/d2" \
    "$work/d3"
check "refusals wrote nothing" [ ! -e "$work/m0" ]

# the report
"$URAID" plan --drive="$SSD" --drives=4 --profile=database --html="$work/r.html" >/dev/null 2>&1
check "html: written" grep -q '<svg' "$work/r.html"
check "html: the ranked table" grep -q 'Candidates, ranked' "$work/r.html"

# --verify: RAID 0 and 5 on four files, the model from a data sheet
for i in 0 1 2 3; do truncate -s 64M "$work/m$i"; done
"$URAID" plan --drive="read_iops=50000,write_iops=50000,read_mib_s=1000,write_mib_s=1000,capacity=64M" \
    --level=0,5 --members=4 --chunks=64K --spares=0 --failures=0 --profile=4k-random-read \
    --iodepth=8 --verify=2 --force-write --runtime=2 --ramp=0 --seed=7 --json \
    "$work/m0" "$work/m1" "$work/m2" "$work/m3" >"$work/v.json" 2>"$work/v.err"
check "verify: exit 0" [ $? -eq 0 ] || cat "$work/v.err"
check "verify: both measured, errors in %" python3 - "$work/v.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["candidates"]
m = [x for x in c if x["measured"]]
assert sorted(x["level"] for x in m) == ["raid0", "raid5"], [x["name"] for x in m]
for x in m:
    assert x["measured"]["iops"] > 0 and x["measured"]["lat_mean_ns"] > 0, x
    e = x["measured"]["iops_error_pct"]
    p, mi = x["predicted"]["iops"], x["measured"]["iops"]
    # a data sheet's host is not re-measured: predicted at its load = predicted
    assert x["measured"]["predicted_now_iops"] == p and x["measured"]["rounds"] == 1, x
    assert abs(e - 100 * (p - mi) / mi) < 1e-3, x
    assert abs(x["measured"]["ratio"] / (p / mi) - 1) < 1e-4, x
    assert x["measured"]["cpu_ns_per_io"] > 0, x
PY

# --verify without a drive: member 1 is measured first (short runs here)
"$URAID" plan --level=0,5 --members=4 --chunks=64K --profile=4k-random-write --iodepth=4 \
    --verify=1 --rounds=3 --force-write --runtime=0.3 --ramp=0 --json \
    "$work/m0" "$work/m1" "$work/m2" "$work/m3" >"$work/q.json" 2>"$work/q.err"
check "quick characterisation: exit 0" [ $? -eq 0 ] || cat "$work/q.err"
check "quick characterisation: said so, and used" python3 - "$work/q.json" "$work/q.err" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["drives"][0]["name"].startswith("quick: ") and d["drives"][0]["measured"], d["drives"]
h = d["host"]
assert h["cpu_measured"] and h["cpu_ns_per_member_write"] > 0 and h["cpu_share"] > 0, h
assert h["cpu_ns_per_io"] >= 0 and h["cpu_ns_per_parity_write"] >= 0, h
assert [r["data"] for r in h["parity_rates"]][:4] == [1, 2, 3, 4], h["parity_rates"]
c = [x for x in d["candidates"] if x["measured"]][0]
m = c["measured"]
assert m["iops"] > 0 and m["rounds"] == 3 and m["cpu_ns_per_io"] > 0, c
assert m["predicted_now_iops"] > 0 and abs(m["iops_error_pct"] - 100 * (
    m["predicted_now_iops"] - m["iops"]) / m["iops"]) < 1e-3, m
r5 = [x for x in d["candidates"] if x["level"] == "raid5"][0]
r0 = [x for x in d["candidates"] if x["level"] == "raid0"][0]
# member costs by the member's queue (linear x1..x4: 32, 16, 10.7, 8 on
# each member), reads always, writes for a writing workload; each family of
# the levels asked on its smallest array
for wr in (False, True):
    q = [m["qd"] for m in h["cpu_member_by_qd"] if m["write"] == wr]
    assert [round(x, 2) for x in q] == [8, 10.67, 16, 32], h["cpu_member_by_qd"]
assert all(m["ns"] > 0 for m in h["cpu_member_by_qd"]), h["cpu_member_by_qd"]
assert [m["members"] for m in h["cpu_share_by_members"]] == [1, 2, 3, 4], h
own = {(o["level"], o["members"]): o for o in h["cpu_own"]}
assert sorted(own) == [("raid0", 2), ("raid5", 3)], h["cpu_own"]
assert all(o["ns_per_read"] is None and o["ns_per_write"] is not None for o in own.values()), own
runs = h["cpu_runs_ns_per_io"]
for k in ("linear_x1_read", "linear_x4_write", "raid0_x2_4k_chunk_8k_io_write",
          "raid0_original_x2_write", "raid5_left-symmetric_x3_write"):
    assert runs.get(k, 0) > 0, (k, runs)
# a RAID 5 write charges 4 member I/Os, its XOR and its family's own work:
# more than RAID 0's one member write and its own
assert r5["predicted"]["cpu_ns_per_io"] > r0["predicted"]["cpu_ns_per_io"] - \
    own[("raid0", 2)]["ns_per_write"] + own[("raid5", 3)]["ns_per_write"], (r5, r0, h)
assert "measuring" in open(sys.argv[2]).read()
PY

echo "$fails failed"
[ $fails -eq 0 ]
