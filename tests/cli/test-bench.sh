#!/bin/bash
# uraid bench on tmpfs: raw files (JBOD) and an array it creates, runs of
# 1 s or less. The JSON parses, its figures are positive, the one-second
# series adds up to the totals, and the read share and block sizes measured
# from the generated stream match the options (fio's, Iometer access lines
# or a built-in profile) within 1 %. Writing to files the run did not create
# is refused without --force-write; a rate is kept; a file the run creates
# holds --offset + --size. CSV has the same figures as the JSON.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "skip: needs a writable /dev/shm"; exit 77; }
work=$(mktemp -d /dev/shm/uraid-bench-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0

# check NAME READ_PCT "BS:PCT ..." JSON-FILE [RATE]
check() {
    python3 - "$@" <<'PY'
import json, sys
name, read_pct, split, path = sys.argv[1:5]
rate = float(sys.argv[5]) if len(sys.argv) > 5 else 0
d = json.load(open(path))
bad = []
def need(cond, what):
    if not cond: bad.append(what)
tot, rd, wr = d["total"], d["read"], d["write"]
need(d["runtime_ns"] > 0, "runtime_ns")
need(tot["ios"] > 1000, "fewer than 1000 I/Os")
need(tot["iops"] > 0 and tot["bw_bytes_per_s"] > 0, "iops/bw not positive")
need(rd["ios"] + wr["ios"] == tot["ios"], "read + write != total")
for k in ("min", "mean", "p50", "p90", "p99", "p99_9", "p99_99", "p99_999", "max"):
    need(tot["lat_ns"][k] > 0, "lat_ns." + k + " not positive")
l = tot["lat_ns"]
need(l["min"] <= l["p50"] <= l["p90"] <= l["p99"] <= l["p99_9"] <= l["p99_99"]
     <= l["p99_999"] <= l["max"], "percentiles not ordered")
need(d["cpu"]["user_ns"] + d["cpu"]["sys_ns"] > 0, "no CPU time")
got = 100.0 * rd["ios"] / tot["ios"]
need(abs(got - float(read_pct)) <= 1.0, "read share %.2f %% instead of %s %%" % (got, read_pct))
want = {int(b): float(p) for b, p in (x.split(":") for x in split.split())}
n = sum(e["ios"] for e in d["workload"]["access"])
need(n == tot["ios"], "access line counts do not add up")
for e in d["workload"]["access"]:
    share = 100.0 * e["ios"] / n
    need(abs(share - want.get(e["bs_bytes"], -100)) <= 1.0,
         "bs %d: %.2f %% of I/Os instead of %s" % (e["bs_bytes"], share, want.get(e["bs_bytes"])))
avg = sum(b * p for b, p in want.items()) / 100
need(abs(tot["bytes"] / tot["ios"] - avg) <= 0.01 * avg, "mean block size %.0f instead of %.0f"
     % (tot["bytes"] / tot["ios"], avg))
series = d["series"]
need(len(series) == -(-d["runtime_ns"] // 10**9), "%d seconds of series for %d ns" % (len(series), d["runtime_ns"]))
need(sum(x["read_ios"] + x["write_ios"] for x in series) == tot["ios"], "series I/Os do not add up")
need(sum(x["duration_ns"] for x in series) == d["runtime_ns"], "series durations do not add up")
if rate:
    need(abs(tot["iops"] - rate) <= 0.05 * rate, "iops %d instead of the rate %d" % (tot["iops"], rate))
if bad:
    print("FAIL %s: %s" % (name, "; ".join(bad)))
    sys.exit(1)
print("ok %s: %d IOPS, %.1f MiB/s, p99 %.1f us, read %.2f %%" %
      (name, tot["iops"], tot["bw_bytes_per_s"] / 2**20, l["p99"] / 1e3, got))
PY
}

run() {   # run NAME READ_PCT SPLIT [RATE] -- uraid bench args
    local name=$1 pct=$2 split=$3 rate=""
    shift 3
    if [ "$1" != "--" ]; then rate=$1; shift; fi
    shift
    if ! "$URAID" bench --json "$@" >"$work/out.json" 2>"$work/err"; then
        echo "FAIL $name: uraid bench $*: $(cat "$work/err")"; fails=$((fails + 1)); return
    fi
    check "$name" "$pct" "$split" "$work/out.json" $rate || fails=$((fails + 1))
}

# raw files created by the run (no --force-write needed), 70/30 8 KiB random, 2 workers
run "raw randrw 70/30 8k" 70 "8192:100" -- --rw=randrw --rwmixread=70 --bs=8k --iodepth=16 \
    --runtime=1 --size=64M "$work/a.img" "$work/b.img"
# the same files again: reads need no flag, writes do
run "raw seq read 128k" 100 "131072:100" -- --rw=read --bs=128k --iodepth=4 --runtime=1 \
    "$work/a.img" "$work/b.img"
out=$("$URAID" bench --rw=randwrite --runtime=1 "$work/a.img" 2>&1)
if [ $? -ne 0 ] && [[ $out == *"add --force-write"* ]] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
    echo "ok: writing to an existing file is refused: $out"
else
    echo "FAIL: write without --force-write: $out"; fails=$((fails + 1))
fi
run "raw bssplit 35/65" 35 "4096:60 16384:30 65536:10" -- --rw=randrw --rwmixread=35 \
    --bssplit=4k/60:16k/30:64k/10 --iodepth=8 --numjobs=1 --runtime=1 --force-write \
    "$work/a.img" "$work/b.img"
run "raw rate 2000/s" 100 "4096:100" 2000 -- --rw=randread --rate_iops=2000 --iodepth=8 \
    --runtime=1 --ramp_time=0.2 "$work/a.img"
# Iometer access lines, a file of them, a built-in profile
run "access lines 60/40" 40.2 "4096:60 65536:40" -- --access=4k,67,100,4k/60 --access=64k,0,0/40 \
    --iodepth=8 --runtime=1 --force-write "$work/a.img"
printf '# size, %% read, %% random, align / weight\n4k, 100, 100 /25\n8k,50,100,4k/75\n' >"$work/acc"
run "access file 25/75" 62.5 "4096:25 8192:75" -- --access-file="$work/acc" --iodepth=8 \
    --runtime=1 --force-write "$work/a.img"
run "profile web-server" 100 "512:22 1024:15 2048:8 4096:23 8192:15 16384:2 32768:6 65536:7 131072:1 524288:1" \
    -- --profile=web-server --iodepth=8 --runtime=1 "$work/a.img"
run "profile database" 67 "8192:100" -- --profile=database --iodepth=8 --runtime=1 \
    --force-write "$work/a.img"
"$URAID" bench --list-profiles | grep -q "^file-server" || { echo "FAIL: --list-profiles"; fails=$((fails + 1)); }
for bad in "--profile=nonesuch" "--access=4k,67" "--profile=database --rw=randread" \
        "--access=4k,50,50/60 --access=8k,50,50/60" "--output-format=xml"; do
    # shellcheck disable=SC2086
    out=$("$URAID" bench $bad --runtime=0.1 "$work/a.img" 2>&1)
    if [ $? -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
        echo "ok: refused $bad: $out"
    else
        echo "FAIL: $bad: $out"; fails=$((fails + 1))
    fi
done
# a file the run creates holds the whole range: --offset=1M --size=4M uses 4 MiB of a 5 MiB file
if out=$("$URAID" bench --json --rw=randread --offset=1M --size=4M --runtime=0.2 "$work/off.img" 2>&1) &&
   [ "$(stat -c %s "$work/off.img")" -eq $((5 << 20)) ] &&
   printf '%s' "$out" | python3 -c 'import json, sys; r = json.load(sys.stdin)["target"]["range_bytes"]; assert r == 4 << 20, r'; then
    echo "ok: --offset=1M --size=4M creates a 5 MiB file and uses 4 MiB of it"
else
    echo "FAIL: --offset=1M --size=4M on a new file ($(stat -c %s "$work/off.img" 2>&1) bytes): $out"
    fails=$((fails + 1))
fi
# CSV: to stdout and to a file; the total row agrees with the JSON of the same run
if "$URAID" bench --rw=randrw --runtime=1 --iodepth=4 --force-write --json --csv="$work/out.csv" \
        "$work/a.img" >"$work/out.json" && python3 - "$work/out.csv" "$work/out.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
tot = [r for r in rows if r["row"] == "total"]
sec = [r for r in rows if r["row"] == "second"]
assert len(tot) == 1 and int(tot[0]["ios"]) == d["total"]["ios"], "total row"
assert int(tot[0]["lat_p99_ns"]) == d["total"]["lat_ns"]["p99"], "p99"
assert len(sec) == len(d["series"]) and sum(int(r["ios"]) for r in sec) == d["total"]["ios"], "seconds"
assert int(tot[0]["cpu_user_ns"]) == d["cpu"]["user_ns"], "cpu_user_ns"
assert int(tot[0]["cpu_sys_ns"]) == d["cpu"]["sys_ns"], "cpu_sys_ns"
print("ok csv: %d rows, %s IOPS" % (len(rows), tot[0]["iops"]))
PY
then :; else echo "FAIL: csv"; fails=$((fails + 1)); fi
"$URAID" bench --rw=randread --runtime=0.2 --output-format=csv "$work/a.img" | head -1 | grep -q '^cell,.*,lat_max_ns,cpu_user_ns,cpu_sys_ns$' \
    || { echo "FAIL: --output-format=csv header"; fails=$((fails + 1)); }
# an array the run creates on members it creates: RAID 5 on 4 files
m="$work/m0.img $work/m1.img $work/m2.img $work/m3.img"
# shellcheck disable=SC2086
run "raid5 randrw 30/70 16k" 30 "16384:100" -- --array --level=5 --chunk=64K \
    --member-size=32M --rw=randrw --rwmixread=30 --bs=16k --iodepth=16 --numjobs=2 \
    --runtime=1 $m
# shellcheck disable=SC2086
run "raid5 assembled, randread" 100 "4096:100" -- --array --rw=randread --iodepth=16 \
    --runtime=1 $m
# human output has the table
# shellcheck disable=SC2086
if "$URAID" bench --array --rw=randread --runtime=0.5 $m | grep -q "p99.999"; then
    echo "ok: human table"
else
    echo "FAIL: human table"; fails=$((fails + 1))
fi
"$URAID" bench --help | grep -q -- "--force-write" || { echo "FAIL: --help"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "all bench checks passed"
[ $fails -eq 0 ]
