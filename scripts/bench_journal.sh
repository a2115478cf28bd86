# shellcheck shell=bash
# The write journal block of make bench (issue 20), sourced by scripts/bench.sh
# (its helpers: want, serve, unserve, line). Run it alone with
# BENCH_ONLY=journal make bench; leave it out with BENCH_JOURNAL=0.
#
# The replay of a full journal: a RAID 5 x4 on the bench's tmpfs with a
# 64 MiB journal holding 3200 logged rows (data and parity, md's layout,
# written by tests/tools/journal_inject, the members stale), served once:
# the time from `uraid serve` to serving (assembly, the replay, the new
# tail in the superblocks) against its bound, reading the journal once
# (dd of its data area, after the replay: the same cache state, a tmpfs
# file either way; O_DIRECT, as the replay opens it, is the same page-cache
# copy on tmpfs: dd with and without iflag=direct took 0.063 and 0.065 s,
# medians of 7, load 8; dd's own start is in its time). Then the cost of the write-through journal (md's
# default mode) at run time: a RAID 5 x4 with a journal (on a tmpfs file too)
# against one without, served by `uraid serve` (2 threads), fio's nbd engine,
# the two in turn, best of BENCH_REPEAT rounds: 4 KiB random writes at QD 1
# (mean latency, from the IOPS: <= 1.5 x) and QD 32 (IOPS, >= 0.5 x), 1 MiB
# sequential writes at QD 8 (>= 0.8 x). The same in write-back mode, and the
# floor of its QD 1 line (jfloor below: RAID 0 x4, and write-back with the
# destage held off, each against no journal in the same rounds), and the CPU
# bound of the 1 MiB and write-back QD 32 lines (jbound below).

if want JOURNAL; then
echo "== write journal: replay of a full 64 MiB journal (RAID 5 x4, 3200 rows of 4 KiB data x3 + parity), time to serve vs reading the journal once (issue 20)"
jinject=$dir/journal_inject
# shellcheck disable=SC2046
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$(dirname "$0")/../include" -I"$(dirname "$0")/../src" \
    -o "$jinject" "$(dirname "$0")/../tests/tools/journal_inject.c" "$BUILD/liburaid.a" \
    -lisal -luring -lgnutls -lnbd -lm -lpthread 2>>"$log" || jinject=
if [ -z "$jinject" ]; then
    echo "the journal replay is not measured: tests/tools/journal_inject.c did not build (see $log)"
else
    jm=()
    for i in 0 1 2 3; do rm -f "$dir/jr$i"; truncate -s 160M "$dir/jr$i"; jm+=("$dir/jr$i"); done
    rm -f "$dir/jrj"; truncate -s 66M "$dir/jrj"     # 64 MiB of ring after the data offset
    "$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=jr --write-journal="$dir/jrj" \
        "${jm[@]}" >/dev/null 2>>"$log"
    "$jinject" inject 20261202 3200 "$dir/jr.exp" "$dir/jrj" "${jm[@]}" >>"$log" 2>&1
    rm -f "$dir/jr.exp"
    t0=$EPOCHREALTIME
    if serve jr "${jm[@]}" "$dir/jrj"; then
        t1=$EPOCHREALTIME
        unserve jr
        rows=$(grep -o "[0-9]* rows written" "$dir/jr.err" | tail -1)
        rt=$(sed -n 's/.*write journal replayed in \([0-9.]*\) s.*/\1/p' "$dir/jr.err" | tail -1)
        doff=$("$URAID" examine "$dir/jrj" | awk '/Data Offset/ { print $4 }')
        b0=$EPOCHREALTIME
        dd if="$dir/jrj" of=/dev/null bs=1M iflag=skip_bytes skip=$((doff * 512)) status=none
        b1=$EPOCHREALTIME
        line "journal replay, 64 MiB ($rows)" "$(python3 -c "print($t1 - $t0)")" \
            "reading the journal once" "$(python3 -c "print($b1 - $b0)")" s "" \
            "(serve to ready, assembly included; pid file polled every 50 ms)"
        [ -n "$rt" ] && line "journal replay itself, 64 MiB" "$rt" \
            "reading the journal once" "$(python3 -c "print($b1 - $b0)")" s "<=3" \
            "(the replay's own time, from its log line: scan, row writes, flush)"
    fi
    rm -f "${jm[@]}" "$dir/jrj"
fi
run_t=$RT ramp_t=$RAMP
jw=() nw=()
for i in 0 1 2 3; do
    rm -f "$dir/jw$i" "$dir/nw$i"; truncate -s 256M "$dir/jw$i" "$dir/nw$i"
    jw+=("$dir/jw$i") nw+=("$dir/nw$i")
done
rm -f "$dir/jwj"; truncate -s 66M "$dir/jwj"
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=jw --write-journal="$dir/jwj" \
    "${jw[@]}" >/dev/null 2>>"$log"
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=nw --bitmap=none \
    "${nw[@]}" >/dev/null 2>>"$log"
# jrun journal|wb|none METRIC fio-args...: one served run, its figure (0 on
# failure); wb: the journal in write-back mode (serve --journal-mode=write-back)
jrun() {
    local kind=$1 metric=$2 v=0 name=nw
    shift 2
    [ "$kind" != none ] && name=jw
    local args=("${nw[@]}")
    [ "$kind" = journal ] && args=("${jw[@]}" "$dir/jwj")
    [ "$kind" = wb ] && args=(--journal-mode=write-back "${jw[@]}" "$dir/jwj")
    if serve "$name" "${args[@]}" >&2; then
        v=$(fio_nbd_once "$metric" "$dir/$name.sock" "$@")
        unserve "$name"
    fi
    echo "${v:-0}"
}
# jpair LABEL METRIC TARGET LATENCY(0|1) fio-args...: both in turn, best of each
# (JKIND=wb: the journal in write-back mode; JPFX: a prefix of the label)
jpair() {
    local label=$1 metric=$2 target=$3 lat=$4 i a b ba=0 bb=0 k=${JKIND:-journal}
    shift 4
    [ "$k" = wb ] && label="$label, write-back"
    label="${JPFX:-}RAID 5 x4 $label"
    for i in $(seq "$REPEAT"); do
        if (( i % 2 )); then a=$(jrun "$k" "$metric" "$@"); b=$(jrun none "$metric" "$@")
        else b=$(jrun none "$metric" "$@"); a=$(jrun "$k" "$metric" "$@"); fi
        [ "$a" -gt "$ba" ] && ba=$a
        [ "$b" -gt "$bb" ] && bb=$b
    done
    if [ "$lat" = 1 ]; then
        line "$label, journal" "$(python3 -c "print(1e6 / max($ba, 1))")" \
            "no journal" "$(python3 -c "print(1e6 / max($bb, 1))")" us "$target" \
            "(mean latency from the IOPS at QD 1: $ba vs $bb)"
    else
        line "$label, journal" "$ba" "no journal" "$bb" "$metric" "$target"
    fi
}
jpair "4 KiB randwrite QD1" iops "<=1.5" 1 --rw=randwrite --bs=4k --iodepth=1 --size=512M --norandommap
jpair "4 KiB randwrite QD32" iops 0.5 0 --rw=randwrite --bs=4k --iodepth=32 --size=512M --norandommap
jpair "1 MiB seq write QD8" bw 0.8 0 --rw=write --bs=1M --iodepth=8 --size=512M
JKIND=wb jpair "4 KiB randwrite QD1" iops "<=0.6" 1 --rw=randwrite --bs=4k --iodepth=1 --size=512M --norandommap
JKIND=wb jpair "4 KiB randwrite QD32" iops 0.7 0 --rw=randwrite --bs=4k --iodepth=32 --size=512M --norandommap
# The floor of the QD 1 write-back line (issue 20): what fio's nbd engine
# against `uraid serve` costs for a 4 KiB write that does no member work
# worth naming, in the same rounds as the no-journal figure. F: RAID 0 x4
# (one 4 KiB member write, no parity). F + J: the write-back journal with
# its destage held off by the workload, not by a switch: 16 pages of one
# chunk rewritten at random (each write's record lets the page's older one
# go, the checkpoints keep the log's tail near its head, and no other page
# of their 4 KiB rows is written), so no write waits for a destage and the
# destage writes counted over the run stay near none (printed). (F + J) /
# (no journal) is the best ratio a write-back design of this path could
# reach: the acknowledgement costs at least the log write on top of F.
jfloor() {
    local i a b f ba=0 bb=0 bf=0 dst="" r0=()
    for i in 0 1 2 3; do rm -f "$dir/jr0$i"; truncate -s 256M "$dir/jr0$i"; r0+=("$dir/jr0$i"); done
    "$URAID" create --level=0 --raid-devices=4 --chunk=64 --name=j0 "${r0[@]}" >/dev/null 2>>"$log"
    local qd1=(--rw=randwrite --bs=4k --iodepth=1 --norandommap)
    for i in $(seq "$REPEAT"); do
        b=$(jrun none iops "${qd1[@]}" --size=512M)
        if serve jw --journal-mode=write-back "${jw[@]}" "$dir/jwj" >&2; then
            a=$(fio_nbd_once iops "$dir/jw.sock" "${qd1[@]}" --size=64k)
            dst="$dst $(status "$dir/jw.sock" "d['write_cache']['destage_writes']")"
            unserve jw
        fi
        f=0
        if serve j0 "${r0[@]}" >&2; then
            f=$(fio_nbd_once iops "$dir/j0.sock" "${qd1[@]}" --size=512M)
            unserve j0
        fi
        [ "${a:-0}" -gt "$ba" ] && ba=$a
        [ "${b:-0}" -gt "$bb" ] && bb=$b
        [ "${f:-0}" -gt "$bf" ] && bf=$f
    done
    line "RAID 0 x4 4 KiB randwrite QD1 (floor F)" "$(python3 -c "print(1e6 / max($bf, 1))")" \
        "RAID 5 x4 no journal" "$(python3 -c "print(1e6 / max($bb, 1))")" us "" \
        "(fio nbd + uraid serve, one member write: $bf vs $bb IOPS)"
    line "RAID 5 x4 write-back, destage held off (F + J)" "$(python3 -c "print(1e6 / max($ba, 1))")" \
        "RAID 5 x4 no journal" "$(python3 -c "print(1e6 / max($bb, 1))")" us "<=0.6" \
        "(the best ratio any write-back design could reach on this path; 64 KiB rewritten, destage writes per run:${dst:- ?})"
    rm -f "${r0[@]}"
}
# The CPU bound of a throughput line (issue 20): on this machine's few CPUs
# fio, the server's reactors and the journal's log writer share the CPUs,
# so a journal that adds CPU per byte lowers the ratio whatever its
# pipeline. One run of each (KIND, then no journal) with the CPU time of
# fio (bash's time), of the server (all its threads, exited io_uring
# workers included) and of its busiest thread, over the ramp and the run,
# per unit moved (an I/O, or a MiB for bw). Each side's bound is the most
# units per second those costs allow: the CPUs over the total, the busiest
# thread over one CPU, fio's one thread over one CPU, whichever is least.
# The ratio of the two bounds is the best ratio that line can reach while
# the work per unit stays what it is; the measured ratio sitting near it
# says the line is at its CPU bound, not held back by waiting.
thread_ticks() {
    local f
    for f in /proc/"$1"/task/*/stat; do
        awk '{ c = $0; sub(/^[0-9]+ \(/, "", c); sub(/\) .*/, "", c)
               r = $0; sub(/.*\) /, "", r); split(r, a, " "); print c, a[12] + a[13] }' "$f" 2>/dev/null
    done
}
# jbound_once KIND METRIC fio-args... -> "VALUE FIO_S SERVER_TICKS BUSIEST_TICKS BUSIEST_NAME"
jbound_once() {
    local kind=$1 metric=$2 name=nw args=("${nw[@]}") out=$dir/fio-jb.json p0 p1 t0 t1 fcpu v
    shift 2
    [ "$kind" != none ] && name=jw args=("${jw[@]}" "$dir/jwj")
    [ "$kind" = wb ] && args=(--journal-mode=write-back "${args[@]}")
    serve "$name" "${args[@]}" >&2 || { echo "0 0 0 0 -"; return; }
    t0=$(thread_ticks "$srv_pid") p0=$(cpu_ticks "$srv_pid")
    fcpu=$( { TIMEFORMAT='%3U %3S'; time fio --name=ref --ioengine=nbd \
        --uri="nbd+unix:///?socket=$dir/$name.sock" --time_based --runtime="$run_t" \
        --ramp_time="$ramp_t" --output-format=json --output="$out" "$@" >>"$log" 2>&1; } 2>&1 )
    t1=$(thread_ticks "$srv_pid") p1=$(cpu_ticks "$srv_pid")
    unserve "$name"
    v=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print("%.0f" % (j["write"]["iops" if sys.argv[2] == "iops" else "bw_bytes"]))' "$out" "$metric" 2>/dev/null)
    python3 -c '
import sys
t0 = dict(l.split() for l in sys.argv[1].splitlines() if l.strip())
t1 = [l.split() for l in sys.argv[2].splitlines() if l.strip()]
d = [(int(t) - int(t0.get(c, 0)), c) for c, t in t1]
b = max(d) if d else (0, "-")
print(sys.argv[3], sum(float(x) for x in sys.argv[4].split()), int(sys.argv[6]) - int(sys.argv[5]), b[0], b[1])
' "$t0" "$t1" "${v:-0}" "${fcpu:-0 0}" "${p0:-0}" "${p1:-0}"
}
# jbound LABEL KIND METRIC fio-args...: the bound line (above)
jbound() {
    local label=$1 kind=$2 metric=$3 a b
    shift 3
    a=$(jbound_once "$kind" "$metric" "$@")
    b=$(jbound_once none "$metric" "$@")
    python3 - "$label" "$metric" "$(nproc)" "$(getconf CLK_TCK)" "$run_t" "$ramp_t" "$a" "$b" <<'PY' |
import sys
label, metric, ncpu, hz, rt, ramp, a, b = sys.argv[1:9]
ncpu, hz = int(ncpu), float(hz)
def sec(x): return float(x[:-2]) / 1000 if x.endswith("ms") else float(x)
span = sec(rt) + sec(ramp)
def side(s):
    v, fio_s, srv, busy, bname = s.split()
    v = float(v)
    units = v * span / (2**20 if metric == "bw" else 1)  # MiB or I/Os over ramp and run
    if units <= 0:
        return None
    f = float(fio_s) / units * 1e6
    sv = int(srv) / hz / units * 1e6
    bt = int(busy) / hz / units * 1e6
    bound = 1e6 / max((f + sv) / ncpu, bt, f)
    return v, f, sv, bt, bname, bound * (2**20 if metric == "bw" else 1)
A, B = side(a), side(b)
if not A or not B:
    print("skip")
else:
    per = "MiB" if metric == "bw" else "I/O"
    note = ("(us per %s: fio %.0f + server %.0f, busiest thread %s %.0f, vs fio %.0f + server %.0f, %s %.0f; "
            "%d CPUs; measured in these runs %.0f vs %.0f, ratio %.2f)" %
            (per, A[1], A[2], A[4], A[3], B[1], B[2], B[4], B[3], ncpu, A[0] / (2**20 if metric == "bw" else 1),
             B[0] / (2**20 if metric == "bw" else 1), A[0] / B[0] if B[0] else 0))
    print("%s\t%.0f\t%.0f\t%s" % (label, A[5], B[5], note))
PY
    while IFS=$'\t' read -r l x y note; do
        [ "$l" = skip ] && { echo "$label: not measured (a run failed, see $log)"; continue; }
        line "$l" "$x" "no journal, its bound" "$y" "$metric" "" "$note"
    done
}
jfloor
JKIND=wb jpair "1 MiB seq write QD8" bw 0.8 0 --rw=write --bs=1M --iodepth=8 --size=512M
jbound "RAID 5 x4 1 MiB seq write QD8, journal: CPU bound" journal bw \
    --rw=write --bs=1M --iodepth=8 --size=512M
jbound "RAID 5 x4 4 KiB randwrite QD32, write-back: CPU bound" wb iops \
    --rw=randwrite --bs=4k --iodepth=32 --size=512M --norandommap
rm -f "${jw[@]}" "${nw[@]}" "$dir/jwj"
# The same on the loop block's path (see its block in bench.sh): the members
# are loop block devices with direct I/O over tmpfs files, so every member
# I/O goes through io_uring to a device, as on real drives; the journal
# stays a tmpfs file (a fast log device). 4 KiB random writes only, QD 1 and
# QD 32, write-through and write-back (~1.5 min).
jl=()
for i in 0 1 2 3; do
    for s in jw nw; do
        rm -f "$dir/l$s$i"; truncate -s 256M "$dir/l$s$i"
        l=$(losetup --direct-io=on -f --show "$dir/l$s$i" 2>&1) || { jl_why="losetup: $l"; break 2; }
        loops+=("$l"); jl+=("$l")
    done
done
if [ ${#jl[@]} -ne 8 ]; then
    echo "== write journal on loop devices: skipped (${jl_why:-no losetup})"
else
    jw=("${jl[0]}" "${jl[2]}" "${jl[4]}" "${jl[6]}") nw=("${jl[1]}" "${jl[3]}" "${jl[5]}" "${jl[7]}")
    echo "== write journal on loop devices: RAID 5 x4 on 4 loop block devices (direct I/O $(loop_dio)) over tmpfs files, the journal on tmpfs, against RAID 5 x4 on 4 others without one"
    rm -f "$dir/jwj"; truncate -s 66M "$dir/jwj"
    "$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=jw --write-journal="$dir/jwj" \
        --force --run "${jw[@]}" >/dev/null 2>>"$log"
    "$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=nw --bitmap=none \
        --force --run "${nw[@]}" >/dev/null 2>>"$log"
    for k in journal wb; do
        JPFX="loop " JKIND=$k jpair "4 KiB randwrite QD1" iops "$([ $k = wb ] && echo "<=0.6" || echo "<=1.5")" 1 \
            --rw=randwrite --bs=4k --iodepth=1 --size=512M --norandommap
        JPFX="loop " JKIND=$k jpair "4 KiB randwrite QD32" iops "$([ $k = wb ] && echo 0.7 || echo 0.5)" 0 \
            --rw=randwrite --bs=4k --iodepth=32 --size=512M --norandommap
    done
    rm -f "$dir/jwj"
fi
detach_loops
rm -f "$dir"/ljw? "$dir"/lnw?
fi
