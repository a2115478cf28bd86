#!/bin/bash
# uraid bench runs a pasted fio command line: fio's job options (--name,
# --filename lists with "\:" escapes, --ioengine with its note, --time_based,
# --group_reporting, --output-format=json|normal, --output) and fio's aliases
# take effect as the JSON shows; fio options it does not have are refused
# with one line naming them, before anything is created.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "skip: needs a writable /dev/shm"; exit 77; }
command -v python3 >/dev/null || { echo "skip: needs python3 (make deps)"; exit 77; }
work=$(mktemp -d /dev/shm/uraid-bench-fio.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
f=$work/a.img
truncate -s 16M "$f"

ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# json_check WHAT PY ARGS...: run uraid bench ARGS (JSON on stdout), then PY
# with d = the parsed JSON and err = stderr's text; PY asserts
json_check() {
    local what=$1 py=$2; shift 2
    timeout 60 "$URAID" bench "$@" >"$work/out.json" 2>"$work/err"
    local rc=$?
    [ $rc -eq 0 ] || { bad "$what: exit $rc: $(cat "$work/err")"; return; }
    if python3 - "$work/out.json" "$work/err" <<EOF
import json, sys
d = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read()
w = d["workload"]
$py
EOF
    then ok "$what"; else bad "$what: $(head -c 600 "$work/out.json") / $(cat "$work/err")"; fi
}

# the brief's example line, as fio would take it
json_check "pasted fio line (libaio, randread, 4k, QD 8)" '
assert d["kind"] == "single", d["kind"]
assert w["rw"] == "randread", w["rw"]
assert w["iodepth"] == 8 and d["iodepth"] == 8, (w["iodepth"], d["iodepth"])
assert w["numjobs"] == 1 and d["numjobs"] == 1
acc = w["access"]
assert len(acc) == 1 and acc[0]["bs_bytes"] == 4096 and acc[0]["read_pct"] == 100 \
    and acc[0]["random_pct"] == 100, acc
assert w["runtime_ns"] == 1000000000, w["runtime_ns"]
assert d["paths"] == [sys.argv[1].rsplit("/", 1)[0] + "/a.img"], d["paths"]
assert d["total"]["ios"] > 0 and d["write"]["ios"] == 0, d["total"]
lines = err.splitlines()
assert len(lines) == 1 and "note" in lines[0] and "libaio" in lines[0] \
    and "io_uring" in lines[0], err
' --name=t --filename="$f" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=8 \
    --numjobs=1 --time_based --runtime=1 --group_reporting --output-format=json

# io_uring is what runs: no note; fio's spelling of a yes/no option with =1
json_check "--ioengine=io_uring: no note" '
assert err == "", err
assert w["iodepth"] == 4
' --name=t --filename="$f" --ioengine=io_uring --iodepth=4 --time_based=1 \
    --group_reporting=1 --thread --norandommap --randrepeat=1 --fixedbufs --registerfiles \
    --readonly --runtime=0.3 --output-format=json

# --direct takes fio's booleans; libaio without O_DIRECT: fio's would hardly queue
json_check "--ioengine=libaio --direct=false: the note says near-synchronous" '
lines = err.splitlines()
assert len(lines) == 1 and "libaio" in lines[0] and "synchronous" in lines[0], err
' --filename="$f" --ioengine=libaio --direct=false --iodepth=4 --runtime=0.2 --output-format=json
json_check "--direct=true, --direct=on" '
assert err == "", err
' --filename="$f" --direct=true --direct=on --runtime=0.2 --output-format=json

# a synchronous engine keeps one I/O in flight, as in fio
json_check "--ioengine=psync: QD 1 and a note" '
assert w["iodepth"] == 1 and d["iodepth"] == 1, (w["iodepth"], d["iodepth"])
assert "psync" in err and "one I/O outstanding" in err and len(err.splitlines()) == 1, err
assert "pread and pwrite" in err, err
' --filename="$f" --ioengine=psync --iodepth=8 --runtime=0.3 --output-format=json

# fio's aliases of uraid's options
json_check "aliases: --blocksize --timeout --randseed --readwrite --ba --fileoffset" '
acc = w["access"]
assert acc[0]["bs_bytes"] == 8192 and acc[0]["align_bytes"] == 16384, acc
assert w["rw"] == "randrw" and acc[0]["read_pct"] == 70, (w["rw"], acc)
assert w["seed"] == 7 and w["runtime_ns"] == 300000000, w
assert d["write"]["ios"] > 0 and d["read"]["ios"] > 0
' --filename="$f" --blocksize=8k --ba=16k --timeout=0.3 --randseed=7 --readwrite=randrw \
    --rwmixread=70 --fileoffset=1M --size=4M --force-write --output-format=json

# --randrepeat=0: another seed than the default 1, reported
json_check "--randrepeat=0: a seed from the clock" '
assert w["seed"] != 1, w["seed"]
' --filename="$f" --randrepeat=0 --runtime=0.2 --output-format=json

# --randrepeat=0 with --seed: the seed given, not the clock's
json_check "--randrepeat=0 --seed=42 keeps the seed" '
assert w["seed"] == 42, w["seed"]
' --filename="$f" --randrepeat=0 --seed=42 --runtime=0.2 --output-format=json

# a backslash not before a colon is part of the name (fio's rule)
json_check "--filename: a backslash before no colon stays" '
base = sys.argv[1].rsplit("/", 1)[0]
assert d["paths"] == [base + "/b\\s.img"], d["paths"]
' --filename="$work/b\\s.img" --size=1M --runtime=0.2 --output-format=json

# a list of two new files, one with an escaped colon in its name: both created,
# --size shared between them as fio does (2M in all: 1M each)
json_check "--filename list with \\: and a shared --size" '
base = sys.argv[1].rsplit("/", 1)[0]
assert d["paths"] == [base + "/x:y.img", base + "/z.img"], d["paths"]
assert d["target"]["range_bytes"] == 1 << 20, d["target"]
assert d["numjobs"] == 1, d["numjobs"]      # fio: one job across its files
' --name=two --filename="$work/x\\:y.img:$work/z.img" --size=2M --rw=randwrite \
    --runtime=0.3 --output-format=json
json_check "--filename list with --numjobs=2: two workers" '
assert d["numjobs"] == 2 and w["numjobs"] == 2, (d["numjobs"], w["numjobs"])
' --filename="$work/x\\:y.img:$work/z.img" --numjobs=2 --runtime=0.2 --output-format=json
for n in "x:y.img" z.img; do
    s=$(stat -c %s "$work/$n" 2>/dev/null)
    if [ "$s" = 1048576 ]; then ok "$n created at 1 MiB"; else bad "$n: size '$s', want 1048576"; fi
done

# a fio line with --size and no --time_based: fio would stop after --size
# bytes, uraid bench runs for --runtime; one note says so
json_check "--size without --time_based: a note" '
lines = err.splitlines()
assert len(lines) == 1 and "note" in lines[0] and "--time_based" in lines[0] \
    and "--runtime" in lines[0], err
' --name=t --filename="$f" --size=4M --runtime=0.2 --output-format=json
json_check "--size with --time_based: no note" '
assert err == "", err
' --name=t --filename="$f" --size=4M --time_based --runtime=0.2 --output-format=json

# --size's share rounded down to 4 KiB: 10k over two targets is 4k each
json_check "--size=10k over two targets: 4 KiB each" '
assert d["target"]["range_bytes"] == 4096, d["target"]
' --filename="$work/s1.img:$work/s2.img" --size=10k --runtime=0.2 --output-format=json

# --output-format=normal (fio's name) into --output=FILE; stdout stays empty
if out=$(timeout 60 "$URAID" bench --filename="$f" --output-format=normal --runtime=0.2 \
        --output="$work/res.txt" 2>&1) && [ -z "$out" ] &&
   grep -q 'IOPS' "$work/res.txt" && grep -q '^read ' "$work/res.txt"; then
    ok "--output-format=normal --output=FILE"
else
    bad "--output-format=normal --output=FILE: stdout '$out', file: $(cat "$work/res.txt" 2>&1)"
fi

# refuse WANT ARGS...: exit 2, one line on stderr containing WANT, nothing created
refuse() {
    local want=$1; shift
    local out rc
    out=$(timeout 20 "$URAID" bench "$@" 2>&1)
    rc=$?
    if [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [[ $out == *"$want"* ]]; then
        ok "refused $*: $out"
    else
        bad "$* (exit $rc, want 2 and '$want'): $out"
    fi
}
n=$work/new.img
refuse "--gtod_reduce: not an option" --name=t --filename="$n" --gtod_reduce=1 --size=1M
refuse "--io_size: not an option" --filename="$n" --io_size=1G --size=1M
refuse "--name=b: a second job" --name=a --filename="$n" --name=b --size=1M
refuse "--time_based=0" --filename="$n" --time_based=0 --size=1M
refuse "--group_reporting=0" --filename="$n" --group_reporting=0 --size=1M
refuse "--norandommap=0" --filename="$n" --norandommap=0 --size=1M
refuse "--random_distribution=zipf:1.2" --filename="$n" --random_distribution=zipf:1.2 --size=1M
refuse "--verify=md5" --filename="$n" --verify=md5 --size=1M
refuse "--readonly: this run writes" --filename="$n" --readonly --rw=randrw --size=1M
refuse "--fixedbufs=0" --filename="$n" --fixedbufs=0 --size=1M
refuse "--ioengine=nbd: not supported" --filename="$n" --ioengine=nbd --size=1M
refuse "--output=$work: a folder" --filename="$n" --output="$work" --size=1M
refuse "--output=$work/no/r.txt: the folder" --filename="$n" --output="$work/no/r.txt" --size=1M
refuse "is shared by the 2 --filename targets" --filename="$n:$work/new2.img" \
    --size=8k --bs=8k
refuse "drop the word fio" fio --name=t --filename="$n" --size=1M
refuse "--direct=2: 0 or 1" --filename="$n" --direct=2 --size=1M
refuse "--output-format=terse" --filename="$n" --output-format=terse --size=1M
refuse "--filename=$n::$f: an empty name" --filename="$n::$f" --size=1M
refuse "an empty name" --filename="$n:" --size=1M
refuse "an empty name" --filename=":$n" --size=1M
many=$(for i in $(seq 0 64); do printf '%s/t%d.img:' "$work" "$i"; done)
refuse "at most 64 targets" --filename="${many%:}" --size=1M
[ ! -e "$work/t0.img" ] || bad "a refused run created $work/t0.img"
refuse "--filename given twice" --filename="$n" --filename="$f" --size=1M
refuse "DEVICE arguments or as --filename, not both" --filename="$n" --size=1M "$f"
refuse "--ioengine=sync runs one I/O at a time" --filename="$n" --ioengine=sync \
    --sweep=qd=1,2 --size=1M
refuse "--array: takes no value" --array=1 --filename="$n" --size=1M
refuse "--bs: needs a value" --filename="$n" --size=1M --bs
refuse "-x: not an option" --bs=4k -xy --filename="$n" --size=1M
refuse "-l: needs a value" --bs=4k --array --filename="$n" --size=1M -l
refuse "--level: needs a value" --bs=4k --array --filename="$n" --size=1M --level
refuse "no DEVICE given (or --filename" --name=t --rw=read
# the engine's note is not printed when the line is refused after all
refuse "no DEVICE given (or --filename" --name=t --ioengine=libaio --rw=read
# --readonly sees every writer of the plan, not only --rw: creating an array
# (its superblocks) and the matrix sweep (its cells write)
m1=$work/m1.img m2=$work/m2.img
truncate -s 8M "$m1" "$m2"
refuse "--readonly: this run writes" --readonly --array --level=1 --force-write --rw=read \
    --runtime=0.2 "$m1" "$m2"
for m in "$m1" "$m2"; do
    if cmp -s -n 8388608 "$m" /dev/zero; then ok "$(basename "$m"): no superblock written"
    else bad "$m was written by a refused --readonly run"; fi
done
# ... while reading an existing array under --readonly leaves its members as they were
if "$URAID" create --level=1 --raid-devices=2 --name=ro --run "$m1" "$m2" >/dev/null; then
    sum1=$(md5sum "$m1" "$m2")
    if timeout 60 "$URAID" bench --readonly --array --rw=randread --runtime=0.2 "$m1" "$m2" \
        >/dev/null 2>"$work/err"; then
        if [ "$(md5sum "$m1" "$m2")" = "$sum1" ]; then ok "--readonly --array: members unchanged"
        else bad "--readonly --array changed the members"; fi
    else
        bad "--readonly --array on an existing array: $(cat "$work/err")"
    fi
else
    bad "uraid create on $m1 $m2"
fi
refuse "--readonly: this run writes" --readonly --sweep=matrix --filename="$n" --size=1M --runtime=0.1
# getopt's prefix matching would take a fio option for a longer uraid one
refuse "--rate: not an option" --filename="$n" --rate=1000000 --size=1M --runtime=0.2
refuse "--mem: not an option" --filename="$n" --mem=malloc --size=1M
refuse "--buf: not an option" --filename="$n" --buf=1 --size=1M
[ ! -e "$n" ] || bad "a refused run created $n"
[ ! -e "$work/new2.img" ] || bad "a refused run created $work/new2.img"

if [ $fails -eq 0 ]; then echo "all passed"; else echo "$fails failed"; exit 1; fi
