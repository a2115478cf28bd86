#!/bin/bash
# uraid bench --replay on tmpfs: fio iolog v2 and v3 traces written here
# (and, when fio is installed, one fio itself wrote with write_iolog) are
# replayed completely: the I/O and byte counts per direction are the
# trace's, the busy time is positive and no longer than the window, and the
# busy-time rate is bytes / busy time. A timed v3 replay does not finish
# before its last timestamp; with --ramp_time the busy time is that of the
# measured window only. Bad traces get one line and exit 2.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "skip: needs a writable /dev/shm"; exit 77; }
work=$(mktemp -d /dev/shm/uraid-bench-replay.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
seed=${SEED:-7}
echo "seed $seed"

python3 - "$work" "$seed" <<'PY'
import random, sys
work, seed = sys.argv[1], int(sys.argv[2])
r = random.Random(seed)
with open(work + "/v2.log", "w") as f:
    f.write("fio version 2 iolog\n/x/a add\n/x/b add\n/x/a open\n/x/b open\n")
    for i in range(3000):
        fn = "/x/a" if r.random() < 0.6 else "/x/b"
        op = "read" if r.random() < 0.7 else "write"
        f.write("%s %s %d %d\n" % (fn, op, r.randrange(0, 2048) * 4096, r.choice([512, 4096, 65536])))
        if i == 1500:
            f.write("/x/a wait 100000 0\n/x/a sync 0 0\n/x/b trim 0 4096\n")
    f.write("/x/a close\n/x/b close\n")
with open(work + "/v3.log", "w") as f:
    f.write("fio version 3 iolog\n0 /x/a add\n1 /x/a open\n")
    for i in range(500):
        f.write("%d /x/a %s %d 8192\n" % (i * 600, "write" if i % 4 == 0 else "read",
                                          r.randrange(0, 1024) * 8192))
    f.write("300000 /x/a close\n")
PY

# replayed NAME TRACE MIN_RUNTIME_NS uraid-bench-args...
replayed() {
    local name=$1 trace=$2 min_ns=$3
    shift 3
    if ! "$URAID" bench --json --replay="$trace" "$@" >"$work/out.json" 2>"$work/err"; then
        echo "FAIL $name: $(cat "$work/err")"; fails=$((fails + 1)); return
    fi
    python3 - "$name" "$trace" "$min_ns" "$work/out.json" <<'PY' || fails=$((fails + 1))
import json, sys
name, trace, min_ns, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
d = json.load(open(path))
want = {"read": [0, 0], "write": [0, 0]}
v3 = open(trace).readline().startswith("fio version 3")
for line in open(trace).read().splitlines()[1:]:
    w = line.split()[1:] if v3 else line.split()
    if len(w) == 4 and w[1] in want:
        want[w[1]][0] += 1
        want[w[1]][1] += int(w[3])
bad = []
for k in want:
    got = [d[k]["ios"], d[k]["bytes"]]
    if got != want[k]: bad.append("%s: %s instead of %s" % (k, got, want[k]))
rp = d["replay"]
if not 0 < rp["busy_ns"] <= d["runtime_ns"]:
    bad.append("busy %d ns, window %d ns" % (rp["busy_ns"], d["runtime_ns"]))
rate = d["total"]["bytes"] * 1e9 / rp["busy_ns"]
if abs(rp["busy_bw_bytes_per_s"] - rate) > 1 + 1e-6 * rate:
    bad.append("busy rate %d, bytes/busy %.0f" % (rp["busy_bw_bytes_per_s"], rate))
if d["runtime_ns"] < min_ns:
    bad.append("finished after %d ns, before the trace's last timestamp %d" % (d["runtime_ns"], min_ns))
if bad:
    print("FAIL %s: %s" % (name, "; ".join(bad))); sys.exit(1)
print("ok %s: %d I/Os, %.1f MiB/s over %.3f s busy (window %.3f s)" %
      (name, d["total"]["ios"], rp["busy_bw_bytes_per_s"] / 2**20, rp["busy_ns"] / 1e9, d["runtime_ns"] / 1e9))
PY
}

replayed "v2, two files on two targets, QD 8" "$work/v2.log" 0 --iodepth=8 --size=9M \
    "$work/a.img" "$work/b.img"
replayed "v2, both files on one target, QD 1" "$work/v2.log" 0 --force-write "$work/a.img"
replayed "v3 as fast as possible" "$work/v3.log" 0 --iodepth=4 --force-write "$work/a.img"
replayed "v3 timed" "$work/v3.log" 299400000 --replay-timed --iodepth=4 --force-write "$work/a.img"
m="$work/m0 $work/m1 $work/m2"
# shellcheck disable=SC2086
replayed "v3 on a RAID 5" "$work/v3.log" 0 --array --level=5 --member-size=16M --iodepth=4 $m
if command -v fio >/dev/null; then
    if fio --name=t --filename="$work/f.img" --size=4M --rw=randrw --bs=4k --ioengine=psync \
            --number_ios=2000 --write_iolog="$work/fio.log" --output=/dev/null 2>/dev/null; then
        replayed "a trace fio wrote" "$work/fio.log" 0 --iodepth=4 --force-write "$work/a.img"
    else
        echo "note: fio could not write an iolog here"
    fi
fi
# --ramp_time: the busy time counts only the measured window, as the bytes do. 200
# reads in the first 0.4 s (the ramp), 5 in 0.8..0.9 s: the busy time is the union
# of the measured reads' intervals, so at most the sum of their latencies.
python3 - "$work/ramp.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("fio version 3 iolog\n0 /x/a add\n0 /x/a open\n")
    for i in range(200):
        f.write("%d /x/a read %d 65536\n" % (i * 2000, (i % 100) * 65536))
    for i in range(5):
        f.write("%d /x/a read %d 4096\n" % (800000 + i * 25000, i * 4096))
    f.write("900000 /x/a close\n")
PY
if "$URAID" bench --json --replay="$work/ramp.log" --replay-timed --ramp_time=0.5 \
        "$work/a.img" >"$work/out.json" 2>"$work/err" && python3 - "$work/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ios, busy = d["total"]["ios"], d["replay"]["busy_ns"]
lat_sum = (d["total"]["lat_ns"]["mean"] + 1) * ios      # mean is rounded to the nearest ns
assert ios == 5, "%d I/Os measured, not the 5 after the ramp" % ios
assert 0 < busy <= lat_sum, "busy %d ns: more than the %d ns of the measured I/Os" % (busy, lat_sum)
print("ok: busy time with --ramp_time: %d ns for %d I/Os of %d ns in all" % (busy, ios, lat_sum))
PY
then :; else echo "FAIL: busy time with --ramp_time $(cat "$work/err")"; fails=$((fails + 1)); fi
printf 'fio version 2 iolog\n/x/a add\n/x/a read 0 4096\n' >"$work/ok.log"
printf 'fio version 2 iolog\n/x/a add\n/x/a read 100 4096\n' >"$work/unaligned.log"
printf 'fio version 2 iolog\n/x/a add\n/x/a read 0 4096\n/x/a fly 0 1\n' >"$work/badact.log"
for bad in "--replay=$work/nonesuch" "--replay=$work/badact.log" "--replay=$work/unaligned.log" \
        "--replay=$work/ok.log --sweep=qd=1,2" "--replay-timed" "--replay=$work/v2.log"; do
    # shellcheck disable=SC2086
    out=$("$URAID" bench $bad "$work/a.img" 2>&1)
    if [ $? -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then echo "ok: refused $bad: $out"
    else echo "FAIL: $bad: $out"; fails=$((fails + 1)); fi
done
[ $fails -eq 0 ] && echo "all replay checks passed"
[ $fails -eq 0 ]
