#!/bin/bash
# uraid bench --characterise: a short run (0.1 s per point) on two /tmp image
# files it creates (--size=32M), JSON to --output: an array of two drive
# models, each valid against the schema of docs/json.md (every key, every
# point present in order, every figure positive, capacity the file's size);
# one file gives one object on stdout. Writing to a file that exists needs
# --force-write (refused with one line, nothing written); bad options too.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
need python3
work_dir bench-char
short=(--runtime=0.25 --ramp_time=0)   # a point with no I/O done is refused (a loaded machine)

validate() {   # validate FILE COUNT: COUNT models (0: one object, not an array)
    python3 - "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
count = int(sys.argv[2])
if count == 0:
    assert isinstance(doc, dict), "one DEVICE: one object"
    models = [doc]
else:
    assert isinstance(doc, list) and len(doc) == count, "an array of %d" % count
    models = doc
keys = ["uraid_drive_model", "name", "path", "capacity_bytes", "host", "timestamp",
        "runtime_s", "random_read_4k", "random_write_4k", "mixed_70_30_4k", "seq_read",
        "seq_write", "afr", "ure"]
for m in models:
    assert list(m.keys()) == keys, "keys %s" % list(m.keys())
    assert m["uraid_drive_model"] == 1
    assert m["capacity_bytes"] == 32 << 20, m["capacity_bytes"]
    assert isinstance(m["name"], str) and m["name"] and isinstance(m["host"], str)
    assert len(m["timestamp"]) == 20 and m["timestamp"].endswith("Z")
    assert m["runtime_s"] > 0 and m["afr"] is None and m["ure"] is None
    for k in ("random_read_4k", "random_write_4k"):
        assert [p["qd"] for p in m[k]] == [1, 2, 4, 8, 16, 32], k
    assert [p["qd"] for p in m["mixed_70_30_4k"]] == [1, 32]
    for k in ("random_read_4k", "random_write_4k", "mixed_70_30_4k"):
        for p in m[k]:
            assert sorted(p) == ["iops", "mean_us", "p99_us", "qd"], p
            assert p["iops"] > 0 and p["mean_us"] > 0 and p["p99_us"] > 0, (k, p)
    for k in ("seq_read", "seq_write"):
        assert [p["bs"] for p in m[k]] == [131072, 1048576], k
        assert all(p["mib_s"] > 0 for p in m[k]), (k, m[k])
print("valid: %d model(s), %s" % (len(models), ", ".join(m["name"] for m in models)))
PY
}

"$URAID" bench --characterise "${short[@]}" --size=32M --output="$work/model.json" \
    "$work/a.img" "$work/b.img" >"$work/table" 2>"$work/err"
check "two new files, JSON to --output ($(cat "$work/err"))" test $? -eq 0
check "the table on stdout names both" grep -q "b.img" "$work/table"
check "an array of two valid models" validate "$work/model.json" 2
check "both files made at 32 MiB" test "$(stat -c %s "$work/a.img")" -eq $((32 << 20))

"$URAID" bench --characterise "${short[@]}" "$work/a.img" >"$work/out" 2>"$work/err"
rc=$?
check "an existing file without --force-write: refused ($(cat "$work/err"))" \
    test $rc -eq 2 -a ! -s "$work/out" -a "$(wc -l <"$work/err")" -eq 1
"$URAID" bench --characterise "${short[@]}" --force-write "$work/a.img" >"$work/one.json" \
    2>"$work/err"
check "with --force-write: one object on stdout, the table on stderr" test $? -eq 0
check "the table on stderr" grep -q "read IOPS" "$work/err"
check "and it is valid" validate "$work/one.json" 0

"$URAID" bench --characterise --rw=randread "$work/a.img" >/dev/null 2>"$work/err"
rc=$?
check "an option it does not take: refused ($(cat "$work/err"))" test $rc -eq 2
"$URAID" bench --characterise --runtime=0 "$work/a.img" >/dev/null 2>"$work/err"
rc=$?
check "--runtime=0 refused ($(cat "$work/err"))" test $rc -eq 2
"$URAID" bench --characterise --force-write --output="$work/nodir/x.json" "$work/a.img" \
    >/dev/null 2>"$work/err"
rc=$?
check "--output in a missing folder: refused before any run ($(cat "$work/err"))" test $rc -eq 2
echo "$fails failed"
[ $fails -eq 0 ]
