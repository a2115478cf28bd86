#!/bin/bash
# make bench: uraid against the limit measured in the same run. Members are
# files on tmpfs (so the figures measure software); the reference is fio
# (io_uring, O_DIRECT, no random map: offsets drawn as uraid bench draws them)
# on the same files as JBOD, or the level's ideal I/O
# count applied to it. One line per figure: the figure, the reference, the
# ratio (and the target from the issues where there is one).
# Every figure is the best of BENCH_REPEAT runs: these machines are shared, and
# interference only ever lowers a throughput.
#   BENCH_RUNTIME=4 BENCH_RAMP=1 BENCH_REPEAT=2 BENCH_DIR=/dev/shm BENCH_MEMBER=1G scripts/bench.sh
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
RT=${BENCH_RUNTIME:-4}
RAMP=${BENCH_RAMP:-1}
REPEAT=${BENCH_REPEAT:-2}
MEMBER=${BENCH_MEMBER:-1G}
base=${BENCH_DIR:-/dev/shm}

if ! command -v fio >/dev/null; then
    scripts/deps.sh || exit 1
    command -v fio >/dev/null || { echo "make bench: fio is missing (apt-get install fio)"; exit 1; }
fi
command -v python3 >/dev/null || { echo "make bench: needs python3"; exit 1; }
dir=$(mktemp -d "$base/uraid-bench.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
log=$dir/log
failed=0

mkdir -p "$dir"
echo "make bench: members are $MEMBER files in $dir (tmpfs); best of $REPEAT runs of ${RT} s after ${RAMP} s ramp; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
mb=$(( $(numfmt --from=iec "$MEMBER") / 1048576 ))
for i in 0 1 2 3 4 5; do
    dd if=/dev/zero of="$dir/d$i" bs=1M count="$mb" status=none || exit 1
done
D4="$dir/d0 $dir/d1 $dir/d2 $dir/d3"
D6="$D4 $dir/d4 $dir/d5"

# fio_once METRIC(iops|bw) FILES(colon list) fio-args... -> prints the total
fio_once() {
    local metric=$1 files=$2
    shift 2
    if ! fio --name=ref --filename="$files" --ioengine=io_uring --direct=1 --time_based --norandommap \
            --runtime="$RT" --ramp_time="$RAMP" --group_reporting --output-format=json \
            "$@" >"$dir/fio.json" 2>>"$log"; then
        echo "fio failed: fio $* (see $log)" >&2; echo 0; return
    fi
    python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
key = "iops" if sys.argv[2] == "iops" else "bw_bytes"
print("%.0f" % (j["read"][key] + j["write"][key]))' "$dir/fio.json" "$metric"
}

# ub_once METRIC uraid-bench-args... -> prints the total
ub_once() {
    local metric=$1
    shift
    if ! "$URAID" bench --json --runtime="$RT" --ramp_time="$RAMP" "$@" >"$dir/ub.json" \
            2>>"$log"; then
        echo "uraid bench failed: uraid bench $* (see $log)" >&2; echo 0; return
    fi
    python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["total"]
print(t["iops"] if sys.argv[2] == "iops" else t["bw_bytes_per_s"])' "$dir/ub.json" "$metric"
}

# best CMD ARGS...: the highest of REPEAT runs
best() {
    local b=0 v
    for _ in $(seq "$REPEAT"); do
        v=$("$@")
        [ "$v" -gt "$b" ] && b=$v
    done
    echo "$b"
}
fio_run() { best fio_once "$@"; }
ub() { best ub_once "$@"; }

# line LABEL VALUE REF-LABEL REF-VALUE UNIT(iops|bw) [TARGET]: one figure
line() {
    python3 - "$@" <<'PY'
import sys
label, v, rlabel, r, unit = sys.argv[1:6]
target = sys.argv[6] if len(sys.argv) > 6 else None
v, r = float(v), float(r)
fmt = (lambda x: "%9.0f IOPS" % x) if unit == "iops" else (lambda x: "%7.0f MiB/s" % (x / 2**20))
ratio = v / r if r else 0
t = ""
if target == "10%":
    t = "  (target within +-10 %%: %s)" % ("met" if 0.9 <= ratio <= 1.1 else "NOT MET")
elif target is not None:
    t = "  (target >= %s: %s)" % (target, "met" if ratio >= float(target) else "NOT MET")
print("%-46s %s | %-40s %s | ratio %5.2f%s" % (label, fmt(v), rlabel, fmt(r), ratio, t))
PY
}

j4=$(echo "$D4" | tr ' ' ':')
j6=$(echo "$D6" | tr ' ' ':')
A2="--numjobs=2 --iodepth=32"

echo "== bench fidelity: uraid bench vs fio on the same tmpfs file, 1 worker (issue 6)"
f=$dir/d0
for qd in 1 32; do
    for rw in randread randwrite; do
        r=$(fio_run iops "$f" --rw=$rw --bs=4k --iodepth=$qd)
        v=$(ub iops --rw=$rw --bs=4k --iodepth=$qd --force-write "$f")
        line "uraid bench 4 KiB $rw QD$qd" "$v" "fio 4 KiB $rw QD$qd" "$r" iops 10%
    done
done
for rw in read write; do
    r=$(fio_run bw "$f" --rw=$rw --bs=128k --iodepth=8)
    v=$(ub bw --rw=$rw --bs=128k --iodepth=8 --force-write "$f")
    line "uraid bench 128 KiB seq $rw QD8" "$v" "fio 128 KiB seq $rw QD8" "$r" bw 10%
done

# Array runs create their array (--level, assume-clean) each time: the fio runs
# on the same files overwrite the superblocks.
echo "== RAID 0, 4 members (chunk 512 KiB), 2 threads x QD32, in process vs fio JBOD on the same 4 files"
# shellcheck disable=SC2086
{
jr=$(fio_run iops "$j4" --rw=randread --bs=4k $A2)
jw=$(fio_run iops "$j4" --rw=randwrite --bs=4k $A2)
v0r=$(ub iops --array --level=0 --force-write --rw=randread $A2 $D4)
line "RAID 0 x4 4 KiB randread 2x32" "$v0r" "fio JBOD x4 randread 2x32" "$jr" iops 0.90
v=$(ub iops --array --level=0 --force-write --rw=randwrite $A2 $D4)
line "RAID 0 x4 4 KiB randwrite 2x32" "$v" "fio JBOD x4 randwrite 2x32" "$jw" iops 0.90
v1=$(ub iops --array --level=0 --force-write --rw=randread --numjobs=1 --iodepth=32 $D4)
line "RAID 0 x4 4 KiB randread, 2 threads x QD32" "$v0r" "1 thread x QD32" "$v1" iops
}

echo "== RAID 5, 4 members (chunk 512 KiB, left-symmetric)"
# shellcheck disable=SC2086
{
jm=$(fio_run iops "$j4" --rw=randrw --rwmixread=50 --bs=4k $A2)
js=$(fio_run bw "$j4" --rw=write --bs=1M $A2)
ideal=$(( jm / 4 ))
v5w=$(ub iops --array --level=5 --force-write --rw=randwrite $A2 $D4)
line "RAID 5 x4 4 KiB randwrite 2x32" "$v5w" "ideal: fio JBOD x4 50/50 randrw / 4" "$ideal" iops 0.80
v1=$(ub iops --array --level=5 --force-write --rw=randwrite --numjobs=1 --iodepth=32 $D4)
line "RAID 5 x4 4 KiB randwrite, 2 threads x QD32" "$v5w" "1 thread x QD32" "$v1" iops
ideal=$(( js * 3 / 4 ))
v=$(ub bw --array --level=5 --force-write --rw=write --bs=1M $A2 $D4)
line "RAID 5 x4 seq write 1 MiB 2x32" "$v" "ideal: 3/4 x fio JBOD x4 seq write 1M" "$ideal" bw 0.85
v=$(ub bw --array --level=5 --force-write --rw=write --bs=128k $A2 $D4)
line "RAID 5 x4 seq write 128 KiB 2x32" "$v" "ideal: 3/4 x fio JBOD x4 seq write 1M" "$ideal" bw 0.75
vh=$(ub iops --array --level=5 --force-write --rw=randread $A2 $D4)
# the array just made, assembled without its last member
vd=$(ub iops --array --rw=randread $A2 "$dir/d0" "$dir/d1" "$dir/d2")
line "RAID 5 x4 one member lost, 4 KiB randread 2x32" "$vd" "healthy RAID 5 x4 randread 2x32" "$vh" iops
}

echo "== RAID 6, 6 members (chunk 512 KiB)"
# shellcheck disable=SC2086
{
jm=$(fio_run iops "$j6" --rw=randrw --rwmixread=50 --bs=4k $A2)
ideal=$(( jm / 6 ))
v=$(ub iops --array --level=6 --force-write --rw=randwrite $A2 $D6)
line "RAID 6 x6 4 KiB randwrite 2x32" "$v" "ideal: fio JBOD x6 50/50 randrw / 6" "$ideal" iops 0.80
}
echo "== NBD export: uraid serve (linear over 1 tmpfs file, 2 threads) vs nbdkit file and qemu-nbd on a file of the same size; fio nbd engine, jobs = connections (issue 4)"
# fio_nbd_once METRIC SOCKET fio-args... -> the total, as fio_once
fio_nbd_once() {
    local metric=$1 sock=$2
    shift 2
    if ! fio --name=ref --ioengine=nbd --uri="nbd+unix:///?socket=$sock" --time_based \
            --runtime="$RT" --ramp_time="$RAMP" --group_reporting --output-format=json \
            --output="$dir/fio-nbd.json" "$@" >>"$log" 2>&1; then
        echo "fio failed: fio nbd $* (see $log)" >&2; echo 0; return
    fi
    python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
key = "iops" if sys.argv[2] == "iops" else "bw_bytes"
print("%.0f" % (j["read"][key] + j["write"][key]))' "$dir/fio-nbd.json" "$metric"
}
fio_nbd() { best fio_nbd_once "$@"; }
# wait_sock PATH: until a server listens there (10 s)
wait_sock() { for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.1; done; echo "no server on $1" >&2; return 1; }
nbd_pids=()
export URAID_RUN_DIR=$dir/run
{
"$URAID" create --level=linear --raid-devices=1 --force --run "$dir/d0" >>"$log" 2>&1
dd if=/dev/zero of="$dir/peer" bs=1M count="$mb" status=none
"$URAID" serve --socket="$dir/u.sock" --threads=2 "$dir/d0" >>"$dir/servers.log" 2>&1 & nbd_pids+=($!)
nbdkit -U "$dir/k.sock" -f --exit-with-parent file "$dir/peer" >>"$dir/servers.log" 2>&1 & nbd_pids+=($!)
qemu-nbd --socket="$dir/q.sock" --format=raw --persistent --shared=8 --cache=none --aio=io_uring \
    "$dir/peer" >>"$dir/servers.log" 2>&1 & nbd_pids+=($!)
wait_sock "$dir/u.sock" && wait_sock "$dir/k.sock" && wait_sock "$dir/q.sock"
for rw in randread randwrite; do
    for nj in 1 2; do
        a=(--rw=$rw --bs=4k --iodepth=32 --numjobs=$nj)
        u=$(fio_nbd iops "$dir/u.sock" "${a[@]}")
        k=$(fio_nbd iops "$dir/k.sock" "${a[@]}")
        q=$(fio_nbd iops "$dir/q.sock" "${a[@]}")
        if [ "$k" -ge "$q" ]; then peer=nbdkit p=$k; else peer=qemu-nbd p=$q; fi
        line "uraid serve linear 4 KiB $rw ${nj}x32" "$u" "better peer: $peer (nbdkit $k, qemu-nbd $q)" "$p" iops 1.2
    done
done
kill "${nbd_pids[@]}" 2>/dev/null; wait "${nbd_pids[@]}" 2>/dev/null; nbd_pids=()

echo "== the NBD hop: RAID 0 x4 through uraid serve (fio nbd, 2 connections x QD32) vs in process (2 threads x QD32)"
"$URAID" create --level=0 --raid-devices=4 --force --run --assume-clean $D4 >>"$log" 2>&1
"$URAID" serve --socket="$dir/r0.sock" --threads=2 $D4 >>"$dir/servers.log" 2>&1 & nbd_pids+=($!)
wait_sock "$dir/r0.sock"
for rw in randread randwrite; do
    n=$(fio_nbd iops "$dir/r0.sock" --rw=$rw --bs=4k --iodepth=32 --numjobs=2)
    eval "nbd_$rw=$n"
done
kill "${nbd_pids[@]}" 2>/dev/null; wait "${nbd_pids[@]}" 2>/dev/null; nbd_pids=()
for rw in randread randwrite; do
    v=$(ub iops --array --force-write --rw=$rw $A2 $D4)
    eval "n=\$nbd_$rw"
    line "RAID 0 x4 4 KiB $rw over NBD 2x32" "$n" "in process 2x32" "$v" iops
done
}
[ -s "$log" ] && { echo "messages:"; cat "$log"; }
exit 0
