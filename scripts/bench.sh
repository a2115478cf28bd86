#!/bin/bash
# make bench: uraid against the limit measured in the same run. Members are
# files on tmpfs (so the figures measure software); the reference is fio
# (io_uring, O_DIRECT, no random map: offsets drawn as uraid bench draws them)
# on the same files as JBOD, or the level's ideal I/O
# count applied to it (for RAID 4/5/6 from the faster of fio's io_uring and
# psync JBOD figures), or, for the rebuild, the same work done by a plain
# program (tests/tools/rebuild_bound.c). The loop block does the same on loop
# block devices over those files. One line per figure: the figure, the
# reference, the ratio (and the target from the issues where there is one).
# Throughput figures are the best of BENCH_REPEAT runs: these machines are
# shared, and interference only ever lowers a throughput. The fidelity block
# (uraid bench vs fio) is the exception: two instruments are compared there,
# so both run BENCH_FID_REPEAT times, interleaved, and their medians compared;
# so do the NBD servers (uraid serve, nbdkit, qemu-nbd, with and without
# TLS): BENCH_NBD_REPEAT rounds, each server once per round.
#   BENCH_RUNTIME=4 BENCH_RAMP=1 BENCH_REPEAT=2 BENCH_DIR=/dev/shm BENCH_MEMBER=1G scripts/bench.sh
#   BENCH_FID_REPEAT=3 BENCH_FID_RUNTIME=2 BENCH_FID_RAMP=500ms BENCH_FID_CPU=<last CPU>
#   BENCH_FID_DEFAULTS=1 (fio with its defaults in the fidelity notes too)
#   BENCH_FID_NBD_DELAY=1ms BENCH_FID_NBD_REPEAT=9 BENCH_FID_NBD_QD1_RUNTIME=2
#   BENCH_FID_NBD_PIN=0:1 (the latency-bound lines: rounds, run length at QD 1
#   and for 2 jobs; PIN: nbdkit on CPU 0, the clients on CPU 1)
#   BENCH_NBD_REPEAT=5 BENCH_NBD_RUNTIME=2 BENCH_NBD_RAMP=1
#   BENCH_NBD_BASELINE=PATH: another uraid binary (say, one built before a
#   change) served the same way in the same rounds; a line per workload says
#   whether the NBD figures moved (target: within +-10 %)
#   BENCH_REBUILD_MIN=51200 (KiB/s) BENCH_SYNC_MAX=100000000 (KiB/s)
#   BENCH_LOOP_REPEAT=5: the loop block's interleaved rounds of fio and uraid
# Blocks can be left out: BENCH_FIDELITY=0 BENCH_ARRAYS=0 BENCH_NBD=0 (or only
# its TLS servers: BENCH_TLS=0), BENCH_LOOP=0 (loop block devices; skipped
# with a line saying why where losetup is missing or not permitted), and
# BENCH_LIFECYCLE=0 (or one of BENCH_REBUILD=0 BENCH_REBUILD_LOAD=0
# BENCH_RESYNC=0); or some run alone: BENCH_ONLY=nbd (a list:
# BENCH_ONLY=fidelity,fidelity_nbd (its latency-bound NBD lines alone, no member
# files made),arrays,nbd,loop,lifecycle,rebuild,rebuild_load,resync,readahead,cache,ppl,
# stripecache,plan,pool; rebuild includes its bound, tests/tools/rebuild_bound.c). The
# write cache block (BENCH_CACHE=0 leaves it out; BENCH_CACHE_SIZE=64M) is in
# scripts/bench_cache.sh; the stripe cache's (BENCH_STRIPECACHE=0) in
# scripts/bench_stripecache.sh; the planner's in scripts/bench_plan.sh; the write
# journal's replay (BENCH_JOURNAL=0) in scripts/bench_journal.sh; nested RAID 50
# against RAID 0 in process (BENCH_NESTED=0, BENCH_ONLY=nested) in
# scripts/bench_nested.sh; the pool's (BENCH_POOL=0: two volumes of one serve
# --pool against whole drives) in scripts/bench_pool.sh.
# What the NBD block costs with the defaults: 4 workloads x 5 servers x 5
# rounds of 3 s and fio's start (~0.5 s), then the NBD hop: about 7 minutes
# on 2 idle CPUs; 13 minutes were measured at a load average of 10.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
RT=${BENCH_RUNTIME:-4}
RAMP=${BENCH_RAMP:-1}
REPEAT=${BENCH_REPEAT:-2}
MEMBER=${BENCH_MEMBER:-1G}
base=${BENCH_DIR:-/dev/shm}
# fidelity: more and shorter runs (a median needs several; odd is best)
FID_REPEAT=${BENCH_FID_REPEAT:-3}
FID_RT=${BENCH_FID_RUNTIME:-2}
FID_RAMP=${BENCH_FID_RAMP:-500ms}
# the CPU both tools run on (see there), or none
FID_CPU=${BENCH_FID_CPU:-$(( $(nproc) - 1 ))}
# lifecycle: the rebuild's configured minimum while clients are busy, and a
# maximum high enough never to throttle a rebuild of tmpfs members (the
# default, md's 200000 KiB/s, would), both in KiB/s per member
REBUILD_MIN=${BENCH_REBUILD_MIN:-51200}
SYNC_MAX=${BENCH_SYNC_MAX:-100000000}
# NBD: rounds (odd: the median is one of them), run and ramp of each
NBD_REPEAT=${BENCH_NBD_REPEAT:-5}
NBD_RT=${BENCH_NBD_RUNTIME:-2}
NBD_RAMP=${BENCH_NBD_RAMP:-1}
NBD_BASE=${BENCH_NBD_BASELINE:+$(realpath "$BENCH_NBD_BASELINE")}
# loop block: interleaved rounds of fio and uraid (odd: the median is one)
LOOP_REPEAT=${BENCH_LOOP_REPEAT:-5}

# dur D: a duration as fio takes it ("1", "500ms") for the reader ("1 s")
dur() { if [[ $1 == *[a-z] ]]; then echo "$1"; else echo "$1 s"; fi; }

# off NAME: is BENCH_NAME set to 0?
off() { local v="BENCH_$1"; [ "${!v:-1}" = 0 ]; }
# only NAME...: is one of the NAMEs in the list BENCH_ONLY (or is it unset)?
only() {
    local n l=${BENCH_ONLY:-}
    [ -z "$l" ] && return 0
    l=",${l// /,},"
    for n; do [[ ${l,,} == *",${n,,},"* ]] && return 0; done
    return 1
}
# want NAME: is block NAME wanted? lifecycle NAME: and this lifecycle block?
want() { ! off "$1" && only "$1"; }
lifecycle() { ! off LIFECYCLE && ! off "$1" && only LIFECYCLE "$1"; }

if ! command -v fio >/dev/null; then
    scripts/deps.sh || exit 1
    command -v fio >/dev/null || { echo "make bench: fio is missing (apt-get install fio)"; exit 1; }
fi
command -v python3 >/dev/null || { echo "make bench: needs python3"; exit 1; }
dir=$(mktemp -d "$base/uraid-bench.XXXXXX") || exit 1
log=$dir/log
nbd_pids=()     # the NBD servers of a block (uraid serve, nbdkit, qemu-nbd)
srv_pid=        # the lifecycle blocks' uraid serve
tls_shim=       # the NBD block's fio wrapper for TLS-PSK (scripts/fio_nbd_tls.c)
loops=()        # the loop devices of the loop block (detached on exit)
cleanup() {
    [ -n "$srv_pid" ] && kill -9 "$srv_pid" 2>/dev/null
    [ ${#nbd_pids[@]} -gt 0 ] && kill "${nbd_pids[@]}" 2>/dev/null
    wait 2>/dev/null
    detach_loops
    rm -rf "$dir"
}
detach_loops() {
    local l
    for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
    loops=()
}
trap cleanup EXIT
# a signal ends the script through its EXIT trap (servers stopped, loop
# devices detached, files removed)
trap 'exit 1' INT TERM HUP
export URAID_RUN_DIR=$dir/run

echo "make bench: members are $( [ "${BENCH_ONLY,,}" = fidelity_nbd ] && echo none || echo "$MEMBER files") in $dir (tmpfs); best of $REPEAT runs of ${RT} s after ${RAMP} s ramp (fidelity: medians of $FID_REPEAT interleaved runs of $FID_RT s after $FID_RAMP; NBD: of $NBD_REPEAT of $NBD_RT s after $(dur "$NBD_RAMP"))${BENCH_ONLY:+; only $BENCH_ONLY}; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
mb=$(( $(numfmt --from=iec "$MEMBER") / 1048576 ))
# the latency-bound fidelity lines alone need no members (nbdkit's memory)
[ "${BENCH_ONLY,,}" = fidelity_nbd ] && mb=0
for i in 0 1 2 3 4 5; do
    (( mb )) || break
    dd if=/dev/zero of="$dir/d$i" bs=1M count="$mb" status=none || exit 1
done
D4="$dir/d0 $dir/d1 $dir/d2 $dir/d3"
D6="$D4 $dir/d4 $dir/d5"

# How long each measurement runs (the fidelity block shortens it), and a
# command prefix for both tools (taskset), empty unless a block sets it.
run_t=$RT ramp_t=$RAMP
pin=()

# fio_once METRIC(iops|bw) FILES(colon list) fio-args... -> prints the total
fio_once() {
    local metric=$1 files=$2
    shift 2
    if ! "${pin[@]}" fio --name=ref --filename="$files" --ioengine=io_uring --direct=1 \
            --time_based --norandommap --runtime="$run_t" --ramp_time="$ramp_t" \
            --group_reporting --output-format=json "$@" >"$dir/fio.json" 2>>"$log"; then
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
    if ! "${pin[@]}" "$URAID" bench --json --runtime="$run_t" --ramp_time="$ramp_t" "$@" \
            >"$dir/ub.json" 2>>"$log"; then
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

# jbod_faster METRIC FILES fio-args...: a level's "ideal" is counted from the
# JBOD's figure, and of fio's two ways to drive the members, io_uring (2 jobs
# x QD32) and psync (2 jobs, an I/O at a time each, the copies in fio's own
# threads as uraid does them on tmpfs), neither is the faster everywhere (on
# tmpfs psync's random writes can be), so the ideal takes the faster one:
# prints "FASTER IO_URING PSYNC"
# (jb_uring: more options for the io_uring run, such as FIO_LIGHT's)
jb_uring=()
# shellcheck disable=SC2086
jbod_faster() {
    local metric=$1 files=$2 u p
    shift 2
    u=$(fio_run "$metric" "$files" "$@" $A2 "${jb_uring[@]}")
    p=$(fio_run "$metric" "$files" "$@" --numjobs=2 --ioengine=psync)
    echo "$(( u > p ? u : p )) $u $p"
}
# jbod_note METRIC IO_URING PSYNC: the note on an ideal's line
jbod_note() { echo "(JBOD: io_uring 2x32 $(fmt_value "$1" "$2"), psync 2 jobs $(fmt_value "$1" "$3"): the faster)"; }

# line LABEL VALUE REF-LABEL REF-VALUE UNIT(iops|bw|s|us) [TARGET [NOTE]]: one
# figure; TARGET "10%" (within +-10 %), a number (ratio at least that),
# "<=" and a number (ratio at most that: a cost, such as CPU time), "A..B"
# (ratio from A to B: the fidelity block's) or ""
line() {
    python3 - "$@" <<'PY'
import sys
label, v, rlabel, r, unit = sys.argv[1:6]
target = sys.argv[6] if len(sys.argv) > 6 and sys.argv[6] else None
note = "  " + sys.argv[7] if len(sys.argv) > 7 and sys.argv[7] else ""
v, r = float(v), float(r)
fmt = {"iops": lambda x: "%9.0f IOPS" % x,
       "s": lambda x: "%9.2f s   " % x,
       "us": lambda x: "%9.2f us  " % x}.get(unit, lambda x: "%7.0f MiB/s" % (x / 2**20))
ratio = v / r if r else 0
t = ""
if target is not None and ".." in target:
    lo, hi = (float(x) for x in target.split(".."))
    t = "  (target %s to %s: %s)" % (lo, hi, "met" if lo <= ratio <= hi else "NOT MET")
elif target == "10%":
    t = "  (target within +-10 %%: %s)" % ("met" if 0.9 <= ratio <= 1.1 else "NOT MET")
elif target is not None and target.startswith("<="):
    t = "  (target <= %s: %s)" % (target[2:], "met" if ratio <= float(target[2:]) else "NOT MET")
elif target is not None:
    t = "  (target >= %s: %s)" % (target, "met" if ratio >= float(target) else "NOT MET")
print("%-46s %s | %-40s %s | ratio %5.2f%s%s" % (label, fmt(v), rlabel, fmt(r), ratio, t, note))
PY
}

j4=$(echo "$D4" | tr ' ' ':')
j6=$(echo "$D6" | tr ' ' ':')
A2="--numjobs=2 --iodepth=32"

# ---------------------------------------------------------------------------
# Fidelity (issue 6). uraid bench and fio are two instruments that must read
# the same: one worker, one file, O_DIRECT, io_uring with the same ring flags
# (COOP_TASKRUN, SINGLE_ISSUER, DEFER_TASKRUN) and registered file and
# buffers (fio: registerfiles, fixedbufs), time based with the same ramp
# and runtime, uniform block-aligned random offsets over the whole file (fio:
# norandommap), the same queue depth, the same option names.
# Both run on one CPU (taskset, the same CPU for both; BENCH_FID_CPU=none
# leaves them to the scheduler). On tmpfs every 4 KiB I/O is handed by
# io_uring to an io-wq kernel thread (tmpfs cannot do it without blocking);
# left to the scheduler, that thread and the issuer share one CPU in some
# runs (a few us per I/O) and sit on two in others, when each I/O waits for
# an idle vCPU to be woken (~80 us): at QD 1 one run differs from the next
# by up to 10x, for either tool, so an unpinned comparison measures the
# scheduler and the hypervisor. Pinned, what remains is the copy, the
# kernel's path and the tools' own cost per I/O; fio's is kept at its least
# (FIO_LIGHT below), so that what is compared is what both measure.
# Runs still swing by some % (other jobs on that CPU), so each side runs
# FID_REPEAT times, alternately (A B, B A, A B ...: a drift in the machine's
# load hits both alike), and the medians are compared (the best of a few
# would pick outliers). The note gives each side's lowest and highest run
# around its median.
# ---------------------------------------------------------------------------

# median N...: the middle value (the mean of the two middle ones for an even count)
median() {
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 }
        END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# spread MEDIAN N...: "-a/+b %", the lowest and the highest run against the median
spread() {
    local m=$1
    shift
    printf '%s\n' "$@" | sort -n | awk -v m="$m" '{ v[NR] = $1 }
        END { if (m > 0) printf "-%.0f/+%.0f %%", 100 * (m - v[1]) / m, 100 * (v[NR] - m) / m }'
}

# fio spends about 1 us of its own per I/O with its defaults (clock reads for
# its latency figures, mapping the buffer and looking up the file for each
# I/O, one io_uring_enter per I/O): at a few 100K IOPS that is 10-20 % of the
# time, which uraid bench does not spend. The reference is therefore fio at
# its lightest (no clock reads, registered file and buffers, and at QD > 1
# submissions and completions batched up to the queue depth, as uraid bench
# does them); fio with its defaults only where BENCH_FID_DEFAULTS=1 asks.
FIO_LIGHT=(--gtod_reduce=1 --registerfiles=1 --fixedbufs=1)
# and its jobs as threads of one process (--thread), as uraid bench's workers
# are: fio's jobs are processes by default, and two of them on the pinned
# CPU (the pin binds their io-wq threads too: this kernel gives an io-wq
# worker its task's affinity) read 74-76K IOPS at QD 1 against 132-135K as
# threads, and 489-507K against 556-575K at QD 32 (randread and randrw 70/30,
# taskset -c 1, load 5-7; uraid bench: 164-176K and 634-647K). Only the
# fidelity block's fio takes it, where it runs more than one job (the JBOD
# references elsewhere do not yet).
FIO_LIGHT_JOBS=(--thread)

# fio's candidates for a fidelity line: at any queue depth io_uring at its
# lightest (FIO_LIGHT, batches of the queue depth); at QD 1 also its
# synchronous engines, psync (pread/pwrite) and pvsync2 (preadv2/pwritev2):
# on tmpfs one system call per I/O with the copy done by the caller, where
# io_uring hands each I/O to an io-wq thread (a wake-up and two context
# switches) and fio's io_uring makes two io_uring_enter calls per I/O at QD 1
# (submit, then getevents). Measured on this 2-CPU VM, taskset -c 1, 4 KiB
# randread QD 1, 2 s after 500 ms, 7 interleaved rounds at load 8.5-9.7,
# medians of IOPS and CPU time per I/O (fio's job thread; uraid bench's
# process): fio io_uring 50K 5.3 us (without its io-wq thread, which fio
# does not count), psync 112K 3.42 us, pvsync2 103K 3.43 us; uraid bench
# through io_uring 153K 6.46 us, with pread (what it now does at QD 1,
# src/bench/target_raw_sync.c) 75K 3.36 us. The IOPS swing 2-5x between
# rounds at such a load (a thread that sleeps on each I/O is scheduled
# differently from one that never sleeps: see that file); CPU time per I/O
# does not, and it is in each line's note. Not run: fio's sync engine (read
# and lseek, two calls per I/O) and libaio (io_submit and io_getevents per
# I/O at QD 1; no io-wq on tmpfs, the copy done in io_submit), never the
# fastest at QD 1 in 5 rounds (load 10-13: sync 50-82K, libaio 10-76K,
# psync 43-91K, pvsync2 59-113K); io_uring's --nonvectored=1 (46-57K) or
# --iodepth_batch_complete_min=0 (a busy poll: 28-35K, it takes the pinned
# CPU from the io-wq thread); --sqthread_poll needs a second CPU, which the
# pinned comparison does not give either tool.
# The reference of a line is the candidate with the highest median, named on
# the line, every candidate's median in its note. BENCH_FID_DEFAULTS=1 adds
# fio's io_uring with its defaults, in the note (never the reference).
# fid_cands QD NJOBS: one candidate a line, "NAME OPTIONS..."
fid_cands() {
    local qd=$1 jobs=() 
    [ "$2" != 1 ] && jobs=("${FIO_LIGHT_JOBS[@]}")
    echo "io_uring ${FIO_LIGHT[*]} ${jobs[*]} --iodepth_batch_submit=$qd --iodepth_batch_complete_max=$qd"
    if [ "$qd" = 1 ]; then
        echo "psync --ioengine=psync --gtod_reduce=1 ${jobs[*]}"
        echo "pvsync2 --ioengine=pvsync2 --gtod_reduce=1 ${jobs[*]}"
    fi
    [ "${BENCH_FID_DEFAULTS:-0}" = 1 ] && echo "defaults ${jobs[*]}"
}

# fidelity LABEL METRIC FILE ARGS...: ARGS (fio's option names, which uraid
# bench shares) run FID_REPEAT times by uraid bench and by each of fio's
# candidates (fid_cands), the order reversed every other round; the
# reference is the candidate with the highest median
fidelity() {
    local label=$1 metric=$2 file=$3 i k v um qd=1 nj=1 best=-1 bm=0 note=""
    shift 3
    local us=() names=() opts=() order=() fr=() fm=() fc=() uc=()
    for v in "$@"; do
        [[ $v == --iodepth=* ]] && qd=${v#--iodepth=}
        [[ $v == --numjobs=* ]] && nj=${v#--numjobs=}
    done
    while read -r k v; do names+=("$k"); opts+=("$v"); fr+=(""); done < <(fid_cands "$qd" "$nj")
    for i in $(seq "$FID_REPEAT"); do
        order=($(seq 0 ${#names[@]}))        # the last one is uraid bench
        (( i % 2 )) || order=($(seq ${#names[@]} -1 0))
        for k in "${order[@]}"; do
            if (( k == ${#names[@]} )); then
                us+=("$(ub_once "$metric" "$@" --force-write "$file")")
                uc+=("$(last_cpu ub)")
            else
                # shellcheck disable=SC2086
                fr[k]+=" $(fio_once "$metric" "$file" "$@" ${opts[k]})"
                fc[k]+=" $(last_cpu fio)"
            fi
        done
    done
    um=$(median "${us[@]}")
    for k in "${!names[@]}"; do
        # shellcheck disable=SC2086
        fm[k]=$(median ${fr[k]})
        note+="${note:+, }${names[k]} $(fmt_value "$metric" "${fm[k]}")"
        [ "${names[k]}" != defaults ] && (( fm[k] > bm )) && { bm=${fm[k]}; best=$k; }
    done
    (( best >= 0 )) || best=0
    # shellcheck disable=SC2086
    line "uraid bench $label" "$um" "fio $label (${names[best]})" "$bm" "$metric" 0.9..1.3 \
        "(fio: $note; runs: fio $(spread "$bm" ${fr[best]}), uraid $(spread "$um" "${us[@]}"); CPU per I/O: uraid $(median_g "${uc[@]}") us, fio $(fio_cpu_note "${names[best]}" ${fc[best]}))"
}
# last_cpu fio|ub: CPU time per I/O in us (2 decimals) of the last run of
# fio_once or ub_once, from its JSON: uraid bench's whole process over the
# measured window; fio's job threads only, summed over its jobs (fio reads
# RUSAGE_THREAD: complete for its synchronous engines, not for io_uring)
last_cpu() {
    python3 - "$1" "$dir/$1.json" <<'PY' 2>/dev/null || echo 0
import json, sys
j = json.load(open(sys.argv[2]))
if sys.argv[1] == "ub":
    n, c = j["total"]["ios"], (j["cpu"]["user_ns"] + j["cpu"]["sys_ns"]) / 1e3
else:
    n = c = 0
    for t in j["jobs"]:
        n += t["read"]["total_ios"] + t["write"]["total_ios"]
        c += (t["usr_cpu"] + t["sys_cpu"]) / 100 * t["job_runtime"] * 1e3
print("%.2f" % (c / n if n else 0))
PY
}
# fio_cpu_note NAME V...: fio's CPU time per I/O for the note; not for its
# io_uring, where the io-wq threads that do the copies on tmpfs are not
# counted by fio (it reads RUSAGE_THREAD) while uraid bench's figure has them
# (1.2-2.4 us against 3.4-5.1 at QD 32 at load 17: a figure of another thing)
fio_cpu_note() {
    local n=$1
    shift
    if [ "$n" = io_uring ] || [ "$n" = defaults ]; then echo "not counted (io-wq)"; else echo "$(median_g "$@") us"; fi
}
# median_g V...: the median of decimal values (the lower middle for an even count)
median_g() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# fmt_value METRIC V: as line prints it; fdiv2 A B: A / B with 2 decimals
fmt_value() { awk -v m="$1" -v v="$2" 'BEGIN { if (m == "iops") printf "%.0f IOPS", v; else printf "%.0f MiB/s", v / 1048576 }'; }
fdiv2() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

if ! off FIDELITY && only FIDELITY FIDELITY_NBD; then
# python3 looked up once for the block: a version manager's shim (pyenv)
# took 2.7 s a call at load 15 on this VM (the interpreter itself 0.35 s),
# and each run here makes two calls (its figure, its CPU per I/O): with the
# shim the block took 19 min (run of 09:33 UTC on Dec 3, load 7-16)
py3=$(python3 -c 'import sys; print(sys.executable)') || exit 1
python3() { "$py3" "$@"; }
[ "$FID_CPU" = none ] && where="as the scheduler places them" || where="both on CPU $FID_CPU"
run_t=$FID_RT ramp_t=$FID_RAMP
if only FIDELITY; then
echo "== bench fidelity: uraid bench vs fio at its lightest (the fastest of io_uring with ${FIO_LIGHT[*]}, batches of the queue depth, and at QD 1 psync and pvsync2 with --gtod_reduce=1; ${FIO_LIGHT_JOBS[*]} for 2 jobs) on the same tmpfs file, 1 worker (and 2 jobs where it says so), $where, medians of $FID_REPEAT interleaved runs (issue 6)"
[ "$FID_CPU" = none ] || pin=(taskset -c "$FID_CPU")
f=$dir/d0
for qd in 1 32; do
    for rw in randread randwrite; do
        fidelity "4 KiB $rw QD$qd" iops "$f" --rw=$rw --bs=4k --iodepth=$qd
    done
    fidelity "4 KiB randrw 70/30 QD$qd" iops "$f" --rw=randrw --rwmixread=70 --bs=4k --iodepth=$qd
    # two workers (fio: two jobs) on the same file and CPU, pure and mixed
    fidelity "4 KiB randread 2 jobs QD$qd" iops "$f" --rw=randread --bs=4k --iodepth=$qd --numjobs=2
    fidelity "4 KiB randrw 70/30 2 jobs QD$qd" iops "$f" --rw=randrw --rwmixread=70 --bs=4k \
        --iodepth=$qd --numjobs=2
done
for rw in read write; do
    fidelity "128 KiB seq $rw QD8" bw "$f" --rw=$rw --bs=128k --iodepth=8
done
pin=()
fi
# the latency-bound target (nbdkit's delay filter) through NBD: its own file
# (alone: BENCH_ONLY=fidelity_nbd)
. "$(dirname "${BASH_SOURCE[0]}")/bench_fidelity_nbd.sh"
unset -f python3
run_t=$RT ramp_t=$RAMP
fi

# Array runs create their array (--level, assume-clean) each time: the fio runs
# on the same files overwrite the superblocks.
if want ARRAYS; then
echo "== RAID 0, 4 members (chunk 512 KiB), 2 threads x QD32, in process vs fio JBOD on the same 4 files"
# shellcheck disable=SC2086
{
jr=$(fio_run iops "$j4" --rw=randread --bs=4k $A2)
jw=$(fio_run iops "$j4" --rw=randwrite --bs=4k $A2)
v0r=$(ub iops --array --level=0 --force-write --rw=randread $A2 $D4)
line "RAID 0 x4 4 KiB randread 2x32" "$v0r" "fio JBOD x4 randread 2x32" "$jr" iops 0.90
v0w=$(ub iops --array --level=0 --force-write --rw=randwrite $A2 $D4)
line "RAID 0 x4 4 KiB randwrite 2x32" "$v0w" "fio JBOD x4 randwrite 2x32" "$jw" iops 0.90
# uraid copies to and from tmpfs members in its own threads (member_io.c);
# fio's io_uring engine hands each such I/O to a kernel worker. fio's psync
# engine, two jobs, does the copies in its own threads too (one I/O at a
# time each, with fio's own cost per I/O): the other way to drive these files
kr=$(fio_run iops "$j4" --rw=randread --bs=4k --numjobs=2 --ioengine=psync)
kw=$(fio_run iops "$j4" --rw=randwrite --bs=4k --numjobs=2 --ioengine=psync)
line "RAID 0 x4 4 KiB randread 2x32" "$v0r" "fio psync JBOD x4, 2 jobs" "$kr" iops
line "RAID 0 x4 4 KiB randwrite 2x32" "$v0w" "fio psync JBOD x4, 2 jobs" "$kw" iops
v1=$(ub iops --array --level=0 --force-write --rw=randread --numjobs=1 --iodepth=32 $D4)
line "RAID 0 x4 4 KiB randread, 2 threads x QD32" "$v0r" "1 thread x QD32" "$v1" iops
}

echo "== RAID 5, 4 members (chunk 512 KiB, left-symmetric)"
# shellcheck disable=SC2086
{
read -r jm jmu jmp < <(jbod_faster iops "$j4" --rw=randrw --rwmixread=50 --bs=4k)
read -r js jsu jsp < <(jbod_faster bw "$j4" --rw=write --bs=1M)
ideal=$(( jm / 4 ))
v5w=$(ub iops --array --level=5 --force-write --rw=randwrite $A2 $D4)
line "RAID 5 x4 4 KiB randwrite 2x32" "$v5w" "ideal: fio JBOD x4 50/50 randrw / 4" "$ideal" iops 0.80 \
    "$(jbod_note iops "$jmu" "$jmp")"
v1=$(ub iops --array --level=5 --force-write --rw=randwrite --numjobs=1 --iodepth=32 $D4)
line "RAID 5 x4 4 KiB randwrite, 2 threads x QD32" "$v5w" "1 thread x QD32" "$v1" iops
ideal=$(( js * 3 / 4 ))
v=$(ub bw --array --level=5 --force-write --rw=write --bs=1M $A2 $D4)
line "RAID 5 x4 seq write 1 MiB 2x32" "$v" "ideal: 3/4 x fio JBOD x4 seq write 1M" "$ideal" bw 0.85 \
    "$(jbod_note bw "$jsu" "$jsp")"
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
read -r jm jmu jmp < <(jbod_faster iops "$j6" --rw=randrw --rwmixread=50 --bs=4k)
ideal=$(( jm / 6 ))
v=$(ub iops --array --level=6 --force-write --rw=randwrite $A2 $D6)
line "RAID 6 x6 4 KiB randwrite 2x32" "$v" "ideal: fio JBOD x6 50/50 randrw / 6" "$ideal" iops 0.80 \
    "$(jbod_note iops "$jmu" "$jmp")"
}
fi

# fio_nbd_once METRIC SOCKET|URI fio-args... -> the total, as fio_once. A
# URI with tls-psk-file= runs fio with the wrapper that lets libnbd read the
# file (scripts/fio_nbd_tls.c; built by the NBD block as $tls_shim)
fio_nbd_once() {
    local metric=$1 uri=$2 out=$dir/fio-nbd.$BASHPID.json pre=()
    shift 2
    [[ $uri == *://* ]] || uri="nbd+unix:///?socket=$uri"
    [[ $uri == *tls-psk-file=* ]] && pre=(env LD_PRELOAD="$tls_shim")
    if ! "${pre[@]}" fio --name=ref --ioengine=nbd --uri="$uri" --time_based \
            --runtime="$run_t" --ramp_time="$ramp_t" --group_reporting --output-format=json \
            --output="$out" "$@" >>"$log" 2>&1; then
        echo "fio failed: fio nbd $uri $* (see $log)" >&2; echo 0; return
    fi
    python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
key = "iops" if sys.argv[2] == "iops" else "bw_bytes"
print("%.0f" % (j["read"][key] + j["write"][key]))' "$out" "$metric"
}
fio_nbd() { best fio_nbd_once "$@"; }

# cpu_ticks PID: clock ticks of user and system time the process (all its
# threads) has used so far (utime and stime: fields 14 and 15 of its stat,
# counted after the ")" that ends the command name, which may hold spaces);
# nothing when there is no such process (a 0 here would read as "no CPU")
cpu_ticks() { sed -n 's/.*) //p' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'; }
# fio_nbd_cpu_once SOCKET|URI SERVER-PID fio-args... -> "IOPS US": the IOPS,
# and the server's CPU time per I/O in microseconds (over ramp and run alike),
# "-" for US when the server was not there to be sampled before and after,
# or did not use a single clock tick (then what it used is not known)
fio_nbd_cpu_once() {
    local sock=$1 pid=$2 t0 t1 v
    shift 2
    t0=$(cpu_ticks "$pid")
    v=$(fio_nbd_once iops "$sock" "$@")
    t1=$(cpu_ticks "$pid")
    [ -n "$t0" ] && [ -n "$t1" ] || echo "server $pid not found in /proc: its CPU time is not measured" >&2
    awk -v v="$v" -v t0="$t0" -v t1="$t1" -v hz="$(getconf CLK_TCK)" -v rt="$run_t" -v ramp="$ramp_t" '
        function sec(x) { return (x ~ /ms$/) ? x / 1000 : x + 0 }
        BEGIN { n = v * (sec(rt) + sec(ramp)); d = t1 - t0
                if (t0 == "" || t1 == "" || d <= 0 || n <= 0) printf "%d -\n", v
                else printf "%d %.2f\n", v, d / hz * 1e6 / n }'
}
# wait_sock PATH: until a server listens there (10 s)
wait_sock() { for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.1; done; echo "no server on $1" >&2; return 1; }

# The NBD block runs every server in turn, round after round (the first
# server of a round moves on by one each round), NBD_REPEAT rounds, and
# compares medians: as in the fidelity block, these are different programs
# on a shared machine, and a drift in its load must hit all of them alike.
# nbd_rounds fio-args...: one such series over the servers in ns_name;
# the runs of each land in run_iops[NAME] and run_cpu[NAME] (space separated)
declare -A run_iops run_cpu
nbd_rounds() {
    local i j n s v c
    n=${#ns_name[@]}
    run_iops=() run_cpu=()
    for i in $(seq 0 $(( NBD_REPEAT - 1 ))); do
        for j in $(seq 0 $(( n - 1 ))); do
            s=$(( (i + j) % n ))
            read -r v c < <(fio_nbd_cpu_once "${ns_uri[s]}" "${ns_pid[s]}" "$@")
            run_iops[${ns_name[s]}]+=" $v"
            run_cpu[${ns_name[s]}]+=" $c"
        done
    done
}
# med_iops NAME, med_cpu NAME: the median of its runs (CPU: 2 decimals;
# "-" when a run of it was not measured)
# shellcheck disable=SC2086
med_iops() { median ${run_iops[$1]}; }
# shellcheck disable=SC2086
med_cpu() { printf '%s\n' ${run_cpu[$1]} | sort -g | awk '{ v[NR] = $1; if ($1 == "-") bad = 1 }
    END { if (bad || NR == 0) print "-"
          else if (NR % 2) printf "%.2f\n", v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# cpu_line LABEL US REF-LABEL REF-US [TARGET [NOTE]]: line's figure of CPU
# time per I/O, or "not measured" (never judged) when either side is "-"
cpu_line() {
    if [ "$2" = - ] || [ "$4" = - ]; then
        printf '%-46s %s | %-40s %s | not measured (no target judged)%s\n' "$1" \
            "$( [ "$2" = - ] && echo "not measured" || echo "$2 us")" "$3" \
            "$( [ "$4" = - ] && echo "not measured" || echo "$4 us")" "${6:+  $6}"
        return
    fi
    line "$1" "$2" "$3" "$4" us "${5:-}" "${6:-}"
}
# cpu_div A B: A / B with 2 decimals, "not measured" when either is "-"
cpu_div() { if [ "$1" = - ] || [ "$2" = - ]; then echo "not measured"; else fdiv2 "$1" "$2"; fi; }
# runs NAME...: "uraid 150.2k 151.0k ..., nbdkit ...", each one's IOPS in
# run order; cpu_runs NAME...: the same for CPU time per I/O (us)
runs() {
    local n sep=""
    for n; do
        printf '%s%s%s' "$sep" "$n" \
            "$(awk '{ for (i = 1; i <= NF; i++) printf " %.1fk", $i / 1000 }' <<<"${run_iops[$n]}")"
        sep=", "
    done
}
cpu_runs() {
    local n sep=""
    for n; do
        # shellcheck disable=SC2086
        printf '%s%s%s' "$sep" "$n" "$(printf ' %s' ${run_cpu[$n]})"
        sep=", "
    done
}

if want NBD; then
echo "== NBD export: uraid serve (linear over 1 tmpfs file, 2 threads, its default limits) vs nbdkit file and qemu-nbd on a file of the same size; fio nbd engine, jobs = connections; medians of $NBD_REPEAT rounds of ${NBD_RT} s after $(dur "$NBD_RAMP"), the servers in turn (issues 4 and 15)"
run_t=$NBD_RT ramp_t=$NBD_RAMP
# shellcheck disable=SC2086
{
# uraid serve runs with its default limits (connections, handshake deadline,
# buffer memory); nothing here lifts them. What they cost: a uraid from
# before them as BENCH_NBD_BASELINE, run in the same rounds.
"$URAID" create --level=linear --raid-devices=1 --force --run "$dir/d0" >/dev/null 2>>"$log"
dd if=/dev/zero of="$dir/peer" bs=1M count="$mb" status=none
# ns_pid: each server's own PID, taken as it starts (nbd_pids may hold
# those of an earlier block; ns_pid[i] must be the server of ns_name[i])
"$URAID" serve --socket="$dir/u.sock" --threads=2 "$dir/d0" >>"$dir/servers.log" 2>&1 & nbd_pids+=($!)
ns_pid=($!)
nbdkit -U "$dir/k.sock" -f --exit-with-parent file "$dir/peer" >>"$dir/servers.log" 2>&1 & nbd_pids+=($!)
ns_pid+=($!)
qemu-nbd --socket="$dir/q.sock" --format=raw --persistent --shared=8 --cache=none --aio=io_uring \
    "$dir/peer" >>"$dir/servers.log" 2>&1 & nbd_pids+=($!)
ns_pid+=($!)
wait_sock "$dir/u.sock" && wait_sock "$dir/k.sock" && wait_sock "$dir/q.sock"
ns_name=(uraid nbdkit qemu-nbd)
ns_uri=("$dir/u.sock" "$dir/k.sock" "$dir/q.sock")
if [ -n "$NBD_BASE" ]; then
    "$NBD_BASE" create --level=linear --raid-devices=1 --force --run "$dir/d2" >/dev/null 2>>"$log"
    "$NBD_BASE" serve --socket="$dir/b.sock" --threads=2 "$dir/d2" >>"$dir/servers.log" 2>&1 & nbd_pids+=($!)
    if wait_sock "$dir/b.sock"; then
        ns_name+=(baseline) ns_uri+=("$dir/b.sock") ns_pid+=("${nbd_pids[-1]}")
    else
        echo "BENCH_NBD_BASELINE: $NBD_BASE serve did not start (see $dir/servers.log)"; NBD_BASE=
    fi
fi

# TLS-PSK: uraid serve and nbdkit with one key (psktool's "username:hexkey"
# format, a 256-bit key as psktool makes by default), each on its own Unix
# socket, in the same rounds as the plain servers. fio's nbd engine reaches
# them through nbds+unix URIs with the wrapper of scripts/fio_nbd_tls.c.
# uraid_tls: "" when uraid's TLS side runs, else why it does not
uraid_tls="" kit_tls=""
if ! off TLS; then
    printf 'alice:%s\n' "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$dir/psk"
    chmod 600 "$dir/psk"
    tls_shim=$dir/fio_nbd_tls.so
    psk_uri() { echo "nbds+unix://alice@/?socket=$1&tls-psk-file=$dir/psk"; }
    if ! cc -O2 -shared -fPIC -o "$tls_shim" "$(dirname "$0")/fio_nbd_tls.c" 2>>"$log"; then
        kit_tls="skipped: the fio wrapper scripts/fio_nbd_tls.c did not build (see $log)"
        uraid_tls=$kit_tls
    fi
    if [ -z "$kit_tls" ]; then
        nbdkit -U "$dir/kt.sock" -f --exit-with-parent --tls=require --tls-psk="$dir/psk" \
            file "$dir/peer" >>"$dir/servers.log" 2>&1 & nbd_pids+=($!)
        if wait_sock "$dir/kt.sock"; then
            ns_name+=(nbdkit-tls) ns_uri+=("$(psk_uri "$dir/kt.sock")") ns_pid+=("${nbd_pids[-1]}")
        else
            kit_tls="skipped: nbdkit --tls=require --tls-psk did not start (see $dir/servers.log)"
        fi
    fi
    if [ -n "$uraid_tls" ]; then :
    elif ! "$URAID" serve --help 2>/dev/null | grep -q -- '--tls-psk'; then
        uraid_tls="skipped: this uraid has no --tls"
    else
        "$URAID" create --level=linear --raid-devices=1 --force --run "$dir/d1" >/dev/null 2>>"$log"
        "$URAID" serve --socket="$dir/ut.sock" --threads=2 --tls=require --tls-psk="$dir/psk" \
            "$dir/d1" >>"$dir/servers.log" 2>&1 & nbd_pids+=($!)
        if wait_sock "$dir/ut.sock"; then
            ns_name+=(uraid-tls) ns_uri+=("$(psk_uri "$dir/ut.sock")") ns_pid+=("${nbd_pids[-1]}")
        else
            uraid_tls="skipped: uraid serve --tls=require --tls-psk did not start (see $dir/servers.log)"
        fi
    fi
fi

# The client runs on the same CPUs as the server: beside each figure, the
# server's own CPU time per I/O. The targets (issue 15): at one connection
# of random writes, uraid >= 1.0 x the better peer's IOPS and <= 0.9 x the
# lower peer CPU time per I/O; at 2 connections >= 1.2 x in IOPS (issue 4;
# one connection of reads keeps that too). With TLS: >= 1.0 x nbdkit's IOPS
# and <= 1.0 x its CPU time per I/O (the cipher costs both the same).
for rw in randread randwrite; do
    for nj in 1 2; do
        nbd_rounds --rw=$rw --bs=4k --iodepth=32 --numjobs=$nj
        u=$(med_iops uraid) k=$(med_iops nbdkit) q=$(med_iops qemu-nbd)
        uc=$(med_cpu uraid) kc=$(med_cpu nbdkit) qc=$(med_cpu qemu-nbd)
        if [ "$k" -ge "$q" ]; then peer=nbdkit p=$k; else peer=qemu-nbd p=$q; fi
        # the lower of the measured peers ("-": not measured)
        if [ "$qc" = - ] || { [ "$kc" != - ] && awk -v k="$kc" -v q="$qc" 'BEGIN { exit !(k <= q) }'; }; then
            cpeer=nbdkit pc=$kc
        else
            cpeer=qemu-nbd pc=$qc
        fi
        it=1.2 ct=""
        [ "$rw$nj" = randwrite1 ] && it=1.0 ct="<=0.9"
        w="4 KiB $rw ${nj}x32"
        line "uraid serve linear $w" "$u" "better peer: $peer (nbdkit $k, qemu-nbd $q)" "$p" iops "$it" \
            "(runs: $(runs uraid nbdkit qemu-nbd))"
        cpu_line "  server CPU per I/O" "$uc" "lower peer: $cpeer (nbdkit $kc, qemu-nbd $qc)" "$pc" "$ct" \
            "(runs: $(cpu_runs uraid nbdkit qemu-nbd))"
        if [ -n "$NBD_BASE" ]; then
            b=$(med_iops baseline) bc=$(med_cpu baseline)
            line "  uraid against the baseline" "$u" "BENCH_NBD_BASELINE uraid" "$b" iops 10% \
                "(CPU per I/O $uc us vs $bc us: ratio $(cpu_div "$uc" "$bc"); runs: $(runs uraid baseline))"
        fi
        off TLS && continue
        if [ -n "$kit_tls" ]; then echo "TLS-PSK $w: $kit_tls"; continue; fi
        kt=$(med_iops nbdkit-tls) ktc=$(med_cpu nbdkit-tls)
        kit_cost="nbdkit's TLS / plain: IOPS $(fdiv2 "$kt" "$k"), CPU per I/O $(cpu_div "$ktc" "$kc")"
        if [ -n "$uraid_tls" ]; then
            echo "uraid serve TLS-PSK $w: $uraid_tls (nbdkit TLS-PSK $kt IOPS, $ktc us CPU per I/O; $kit_cost; runs: $(runs nbdkit-tls))"
            continue
        fi
        ut=$(med_iops uraid-tls) utc=$(med_cpu uraid-tls)
        line "uraid serve TLS-PSK $w" "$ut" "nbdkit TLS-PSK" "$kt" iops 1.0 \
            "(runs: $(runs uraid-tls nbdkit-tls))"
        cpu_line "  server CPU per I/O, TLS-PSK" "$utc" "nbdkit TLS-PSK" "$ktc" "<=1.0" \
            "(runs: $(cpu_runs uraid-tls nbdkit-tls))"
        line "  cost of TLS: uraid TLS-PSK" "$ut" "uraid plain (above)" "$u" iops "" \
            "(CPU per I/O $utc us vs $uc us: TLS / plain $(cpu_div "$utc" "$uc"); $kit_cost)"
    done
done
kill "${nbd_pids[@]}" 2>/dev/null; wait "${nbd_pids[@]}" 2>/dev/null; nbd_pids=()
rm -f "$dir/peer"
run_t=$RT ramp_t=$RAMP

echo "== the NBD hop: RAID 0 x4 through uraid serve (fio nbd, 2 connections x QD32) vs in process (2 threads x QD32)"
"$URAID" create --level=0 --raid-devices=4 --force --run --assume-clean $D4 >/dev/null 2>>"$log"
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
fi

# ---------------------------------------------------------------------------
# Loop devices: the path real drives take. tmpfs members are copied by the
# reactor itself (member_submit), so no block above sends uraid's I/O through
# io_uring to a device asynchronously. Here the members are loop block
# devices with direct I/O (losetup --direct-io=on) over the tmpfs files
# d0..d3: uraid opens them O_DIRECT and every member I/O goes through
# io_uring to the loop driver, which hands it to its backing file
# asynchronously, as an NVMe or SATA drive would take it. Reference: fio
# (io_uring, O_DIRECT) on the same 4 devices as JBOD, and for RAID 5 random
# writes its ideal (the faster of fio's io_uring and psync JBOD randrw / 4).
# fio runs at its lightest here (FIO_LIGHT, batches of the queue depth, as
# in the fidelity block): on this path its own cost per I/O (~1 us) is what
# would set its figure, and the reference is the devices' limit.
# In process (uraid bench) and through NBD (uraid serve, fio nbd, 2
# connections x QD32, as the NBD hop above).
# ---------------------------------------------------------------------------

# loop_attach: the loop devices over d0..d3 in loops (and L4, j4l); returns
# 1 with the reason in loop_why when losetup is missing or not permitted
loop_attach() {
    local i l
    command -v losetup >/dev/null || { loop_why="no losetup (util-linux)"; return 1; }
    for i in 0 1 2 3; do
        if ! l=$(losetup --direct-io=on -f --show "$dir/d$i" 2>&1); then
            loop_why="losetup --direct-io=on -f --show: $l"; detach_loops; return 1
        fi
        loops+=("$l")
    done
    L4="${loops[*]}"
    j4l=$(echo "$L4" | tr ' ' ':')
}
# loop_dio: "on" when every loop device does direct I/O on its file
loop_dio() {
    local l d=on
    for l in "${loops[@]}"; do
        [ "$(cat "/sys/block/${l#/dev/}/loop/dio" 2>/dev/null)" = 1 ] || d=off
    done
    echo "$d"
}

if want LOOP; then
if ! loop_attach; then
    echo "== loop devices: skipped ($loop_why)"
else
echo "== loop devices: 4 loop block devices (direct I/O $(loop_dio)) over the tmpfs files, RAID 0 and RAID 5 x4 (chunk 512 KiB), 2 threads / connections x QD32, in process and through NBD, vs fio JBOD (at its lightest) on the same 4 devices; RAID 0 in process: medians of $LOOP_REPEAT rounds interleaved with fio's"
# shellcheck disable=SC2086
{
jb_uring=("${FIO_LIGHT[@]}" --iodepth_batch_submit=32 --iodepth_batch_complete_max=32)
# loop_pair RW: fio JBOD and uraid bench RAID 0 x4, LOOP_REPEAT rounds of
# each once, the order swapped every other round; prints "FIO_MEDIAN
# URAID_MEDIAN NOTE" (NOTE: each round's uraid / fio). On this path every
# write is copied by the loop device's kernel worker, which competes for
# the CPUs with whatever else runs: at a load of 15-20 one tool's runs swing
# by 2-3x from one run to the next (fio 61K and 113K, uraid 158K and 166K
# IOPS in four runs of a minute; at a load of 20 uraid once read 0.21 x
# fio), while on an idle machine the pair reads 0.85 x. Best-of-2 of each
# picked two unrelated moments; the medians of interleaved rounds (as the
# fidelity block does) compare like with like, and the rounds show the spread.
loop_pair() {
    local i a b fs=() us=() note=""
    for (( i = 0; i < LOOP_REPEAT; i++ )); do
        if (( i % 2 )); then
            b=$(ub_once iops --array --level=0 --force-write --rw="$1" $A2 $L4)
            a=$(fio_once iops "$j4l" --rw="$1" --bs=4k $A2 "${jb_uring[@]}")
        else
            a=$(fio_once iops "$j4l" --rw="$1" --bs=4k $A2 "${jb_uring[@]}")
            b=$(ub_once iops --array --level=0 --force-write --rw="$1" $A2 $L4)
        fi
        fs+=("$a"); us+=("$b")
        note="$note $(fdiv2 "$b" "$a")"
    done
    echo "$(median "${fs[@]}") $(median "${us[@]}") (uraid / fio by round:$note; load $(cut -d' ' -f1 /proc/loadavg))"
}
read -r jr r0r r0r_note < <(loop_pair randread)
read -r jw r0w r0w_note < <(loop_pair randwrite)
read -r jm jmu jmp < <(jbod_faster iops "$j4l" --rw=randrw --rwmixread=50 --bs=4k)
jb_uring=()
ideal5=$(( jm / 4 ))
# loop_nbd LEVEL: uraid serve on the loop devices as a LEVEL array, fio nbd
# randread then randwrite (2 connections x QD32): nbd_randread, nbd_randwrite
loop_nbd() {
    local rw n
    nbd_randread=0 nbd_randwrite=0
    "$URAID" create --level="$1" --raid-devices=4 --force --run --assume-clean $L4 >/dev/null 2>>"$log"
    "$URAID" serve --socket="$dir/loop.sock" --threads=2 $L4 >>"$dir/servers.log" 2>&1 & nbd_pids+=($!)
    if wait_sock "$dir/loop.sock"; then
        for rw in randread randwrite; do
            n=$(fio_nbd iops "$dir/loop.sock" --rw=$rw --bs=4k --iodepth=32 --numjobs=2)
            eval "nbd_$rw=$n"
        done
    fi
    kill "${nbd_pids[@]}" 2>/dev/null; wait "${nbd_pids[@]}" 2>/dev/null; nbd_pids=()
    rm -f "$dir/loop.sock"
}
for lv in 0 5; do
    if [ $lv = 0 ]; then
        r=$r0r w=$r0w
    else
        r=$(ub iops --array --level=$lv --force-write --rw=randread $A2 $L4)
        w=$(ub iops --array --level=$lv --force-write --rw=randwrite $A2 $L4)
    fi
    loop_nbd $lv
    # RAID 0's targets are those of its tmpfs lines; RAID 5's reads have none
    # there (they are RAID 0's over 4 members less the parity chunks)
    t=""; [ $lv = 0 ] && t=0.90
    line "loop RAID $lv x4 4 KiB randread 2x32" "$r" "fio JBOD x4 loop randread 2x32" "$jr" iops "$t" \
        "$( [ $lv = 0 ] && echo "$r0r_note")"
    line "loop RAID $lv x4 4 KiB randread, NBD 2x32" "$nbd_randread" "fio JBOD x4 loop randread 2x32" "$jr" iops "" \
        "(NBD / in process $(fdiv2 "$nbd_randread" "$r"))"
    if [ $lv = 0 ]; then
        line "loop RAID 0 x4 4 KiB randwrite 2x32" "$w" "fio JBOD x4 loop randwrite 2x32" "$jw" iops 0.90 \
            "$r0w_note"
        line "loop RAID 0 x4 4 KiB randwrite, NBD 2x32" "$nbd_randwrite" "fio JBOD x4 loop randwrite 2x32" "$jw" iops "" \
            "(NBD / in process $(fdiv2 "$nbd_randwrite" "$w"))"
    else
        line "loop RAID 5 x4 4 KiB randwrite 2x32" "$w" "ideal: fio JBOD x4 loop randrw / 4" "$ideal5" iops 0.80 \
            "$(jbod_note iops "$jmu" "$jmp")"
        line "loop RAID 5 x4 4 KiB randwrite, NBD 2x32" "$nbd_randwrite" "ideal: fio JBOD x4 loop randrw / 4" "$ideal5" iops "" \
            "(NBD / in process $(fdiv2 "$nbd_randwrite" "$w"))"
    fi
done
}
fi
detach_loops
fi

# ---------------------------------------------------------------------------
# Lifecycle (rebuild and resync). These time the server's own background work,
# so the array is served (`uraid serve`, as an admin runs it) and driven by its
# CLI. Its messages on stderr get a time stamp as they arrive (stamp), and the
# background work is timed from its own "started" to its "done" message, to
# the millisecond; uraid status --json confirms the outcome and gives the
# bytes done. Durations are printed as rates in bytes per member per second,
# as md counts them (speed_limit_min/max are per member too).
# ---------------------------------------------------------------------------

# stamp: each line of stdin with the time it arrived (s since the epoch) in front
stamp() { local l; while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }

# serve NAME ARGS...: uraid serve on $dir/NAME.sock, stderr stamped into
# $dir/NAME.err; returns once it serves (its pid file is written), pid in srv_pid
serve() {
    local name=$1
    shift
    rm -f "$dir/$name.pid"
    "$URAID" serve --socket="$dir/$name.sock" --threads=2 --pid-file="$dir/$name.pid" "$@" \
        >>"$dir/$name.out" 2> >(stamp >>"$dir/$name.err") &
    srv_pid=$!
    for _ in $(seq 200); do [ -s "$dir/$name.pid" ] && return 0; nap; done
    echo "uraid serve $name did not start (see $dir/$name.err)" >&2
    cat "$dir/$name.err" >>"$log"
    return 1
}
# unserve NAME: stop it cleanly (uraid stop) and wait for its exit
unserve() { "$URAID" stop "$1" >/dev/null 2>>"$log"; wait "$srv_pid" 2>/dev/null; srv_pid=; }

# status NAME PYTHON-EXPR: evaluate the expression on its status (d: the JSON)
status() {
    "$URAID" status --json "$1" 2>>"$log" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(eval(sys.argv[1]))' "$2" 2>/dev/null
}

# nap: 50 ms of sleep that starts no process (read's timeout on a FIFO
# that nobody writes). The waits below look every 50 ms while uraid works
# on the array being timed, and a fork and exec per look (grep, sed, sleep)
# cost ~45 ms of CPU here (the VM's page tables make forks dear): ~0.9 of a
# CPU taken from the rebuild, in its own session's share (autogroup), while
# its bound ran alone. The rebuild measured 0.57-0.66 x its bound so; given
# the CPUs to themselves (chrt -f, a one-off check) the rebuild took 278-293
# ms for 1 GiB per member, the bound 296-320 ms: the same CPU per byte.
mkfifo "$dir/nap" && exec {nap_fd}<>"$dir/nap" || exit 1
nap() { read -r -t 0.05 -u "$nap_fd" _; }

# stamp_of NAME REGEX N: the time stamp of the Nth message matching REGEX
# (waits for it, up to 10 minutes; prints nothing when it never comes). Bash
# alone, no process per look (see nap).
stamp_of() {
    local line k t
    for (( t = 0; t < 12000; t++ )); do
        k=0
        if [ -r "$dir/$1.err" ]; then
            while IFS= read -r line; do
                [[ $line =~ $2 ]] && (( ++k == $3 )) && { echo "${line%% *}"; return 0; }
            done < "$dir/$1.err"
        fi
        nap
    done
    return 1
}
count_of() { grep -cE "$2" "$dir/$1.err" 2>/dev/null; }
# how a rebuild ends (uraid's messages): done, or stopped or failed
REBUILT='recovery (done|stopped|failed)'


# fsub A B: A - B for time stamps, fadd A B: A + B, fmul A B: A * B;
# fdiv A B: A / B rounded to an integer (0 when B is 0)
fsub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f\n", a - b }'; }
fadd() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f\n", a + b }'; }
fmul() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f\n", a * b }'; }
fdiv() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f\n", (b > 0 ? a / b : 0) }'; }
# sleep_until T: sleep until the epoch time T (not at all if it has passed)
sleep_until() { sleep "$(awk -v t="$1" -v n="$EPOCHREALTIME" 'BEGIN { d = t - n; printf "%.3f\n", (d > 0 ? d : 0) }')"; }
# secs DURATION: fio's and uraid bench's "500ms" / "2s" / "2" in seconds
secs() { awk -v d="$1" 'BEGIN { if (d ~ /ms$/) print d / 1000; else { sub(/s$/, "", d); print d + 0 } }'; }

# wipe DEV: zero its superblock area, so that `uraid add` takes it as a new
# device (with a superblock of the array, a later version might re-add it and
# rebuild only what changed; the figure is a full rebuild)
wipe() { dd if=/dev/zero of="$1" bs=1M count=4 conv=notrunc status=none; }

# rebuild_round NAME OUT: fail member OUT; the spare takes its slot and is
# rebuilt by itself. Waits for the end: rr_secs and rr_bytes (per member),
# 0 when it failed; then OUT is removed, wiped and added back: the spare of
# the next round.
rebuild_round() {
    local name=$1 out=$2 n t0 t1 ok
    rr_secs=0 rr_bytes=0
    n=$(( $(count_of "$name" "$REBUILT") + 1 ))
    "$URAID" fail "$out" >/dev/null 2>>"$log"
    t0=$(stamp_of "$name" 'recovery started' "$n")
    t1=$(stamp_of "$name" "$REBUILT" "$n")
    ok=$(status "$name" 'd["last_background"]["result"] == "completed" and d["last_background"]["kind"] == "recovery"')
    rr_bytes=$(status "$name" 'd["last_background"]["total_bytes"]')
    spare_back "$name" "$out"
    if [ -z "$t0" ] || [ -z "$t1" ] || [ "$ok" != True ]; then
        echo "rebuild on $name did not complete (see $dir/$name.err)" >&2
        rr_bytes=0; return
    fi
    rr_secs=$(fsub "$t1" "$t0")
}
# spare_back NAME DEV: the failed DEV out of the array, wiped, back as a spare
spare_back() {
    "$URAID" remove "$2" >/dev/null 2>>"$log"
    wipe "$2"
    "$URAID" add "$1" "$2" >/dev/null 2>>"$log"
}

source "$(dirname "${BASH_SOURCE[0]}")/bench_readahead.sh"   # read-ahead on vs off (issue 19)

if lifecycle REBUILD || lifecycle REBUILD_LOAD; then
# One RAID 5 over d0..d3 with d4 as its hot spare. Each round fails a member
# (d1, then d4, d1 ...: whichever holds slot 1), the spare is rebuilt, and
# the failed one comes back as the next spare. --assume-clean: what the
# members hold does not change how fast a rebuild goes.
# shellcheck disable=SC2086
"$URAID" create --level=5 --raid-devices=4 --bitmap=none --assume-clean --force --run \
    --name=rb $D4 >/dev/null 2>>"$log"
rb_ok=1
serve rb "$dir/d0" "$dir/d1" "$dir/d2" "$dir/d3" || rb_ok=0
[ $rb_ok = 1 ] && { wipe "$dir/d4"; "$URAID" add rb "$dir/d4" >/dev/null 2>>"$log" || rb_ok=0; }
[ $rb_ok = 1 ] && { "$URAID" speed --min="$REBUILD_MIN" --max="$SYNC_MAX" rb >/dev/null 2>>"$log" || rb_ok=0; }
slot1=$dir/d1 spare=$dir/d4     # who holds slot 1, who waits as the spare
# next_round: the roles swap after each rebuild
next_round() { local t=$slot1; slot1=$spare; spare=$t; }
[ $rb_ok = 1 ] || echo "rebuild blocks: the array could not be served (see $log)"
fi

if [ "${rb_ok:-0}" = 1 ] && lifecycle REBUILD; then
echo "== rebuild of RAID 5 x4 onto a spare, no clients (max $SYNC_MAX KiB/s: unthrottled), vs the same reads, XOR and writes with no engine (tests/tools/rebuild_bound.c) on the same members (lifecycle issue)"
# The bound: what uraid's recovery does per rebuilt byte (sync_raid5.c), done
# by a plain program on the same members: the survivors read a chunk row at
# a time (one I/O of the chunk each, by the thread itself, as the engine
# copies tmpfs members), their XOR (ISA-L xor_gen), the missing chunk written
# to the spare; one row in progress per thread, as many threads as the
# server's reactors (serve: --threads=2), over the same member area
# (data offset and size from uraid examine). The spare is the served array's,
# idle between rebuilds: what the bound writes there the next rebuild
# overwrites. fio's sequential write, the old reference, is in the note:
# on tmpfs a rebuild, which reads 3 bytes for each it writes, cannot reach it.
# Per MiB rebuilt both do 6 reads and 2 writes of 512 KiB (the engine adds
# 0.3 io_uring_enter) and one xor_gen pass (ISA-L, AVX-512); a perf profile
# of the rebuild is 47 % the kernel's copies, 15 % tmpfs's page lookups,
# 10 % xor_gen, under 2 % uraid's own code, and it took the same CPU per
# GiB as the bound (0.57 s against 0.55-0.78 s). What separates them on a
# loaded machine is the share of the CPUs each gets (see nap).
bound_bin=$dir/rebuild_bound
cc -O2 -std=gnu11 -o "$bound_bin" "$(dirname "$0")/../tests/tools/rebuild_bound.c" \
    -lisal -luring -lpthread 2>>"$log" || bound_bin=
bound_args=$(python3 -c '
import json, sys
d = json.loads(sys.stdin.read())[0]
print("--chunk=%d --offset=%d --size=%d" % (d["chunk_bytes"], d["data_offset_bytes"], d["used_dev_bytes"]))
' < <("$URAID" examine --json "$dir/d0" 2>>"$log") 2>>"$log")
[ -n "$bound_bin" ] && [ -n "$bound_args" ] ||
    echo "the rebuild bound is not measured: tests/tools/rebuild_bound.c did not build or uraid examine failed (see $log)"
# bound_once: its rate in bytes per member per second (0 when it failed);
# the survivors are the members other than slot 1's, the target the spare
bound_once() {
    local out
    if [ -z "$bound_bin" ] || [ -z "$bound_args" ]; then echo 0; return; fi
    # shellcheck disable=SC2086
    out=$("$bound_bin" --threads=2 $bound_args "$spare" "$dir/d0" "$dir/d2" "$dir/d3" 2>>"$log") ||
        { echo "rebuild_bound failed (see $log)" >&2; echo 0; return; }
    echo "${out%% *}"
}
# the rebuild's rate: the best of REPEAT rebuilds (3 at least), each timed
# from its "recovery started" to its "recovery done" message; every round's
# time is printed (the first reads pages the members' files have not been
# read from yet, which costs the kernel more, so it tends to be the slowest).
# The bound runs after each rebuild (a drift in the machine's load hits
# both), onto the spare that is to be rebuilt next; its best round counts.
rate=0 secs_best=0 rounds="" bound=0 brounds=""
for _ in $(seq "$(( REPEAT > 3 ? REPEAT : 3 ))"); do
    rebuild_round rb "$slot1"
    next_round
    r=$(fdiv "$rr_bytes" "$rr_secs")
    rounds="$rounds $(printf '%.2f' "$rr_secs")"
    [ "$r" -gt "$rate" ] && { rate=$r; secs_best=$rr_secs; }
    b=$(bound_once)
    brounds="$brounds $(( b >> 20 ))"
    [ "$b" -gt "$bound" ] && bound=$b
done
# and fio writing 1 MiB blocks sequentially on a file of the member's size
# on the same tmpfs (QD 8: on tmpfs 1 to 32 differ by a few %)
ref=$(fio_run bw "$dir/d5" --rw=write --bs=1M --iodepth=8)
line "RAID 5 x4 rebuild, idle ($(printf '%.2f' "$secs_best") s for $MEMBER)" "$rate" \
    "bound: rebuild_bound, 2 threads, same members" "$bound" bw 0.90 \
    "(rebuild rounds:$rounds s; bound rounds:$brounds MiB/s; fio seq write 1 MiB QD8 on one $MEMBER file $(fmt_value bw "$ref"))"
fi

if [ "${rb_ok:-0}" = 1 ] && lifecycle REBUILD_LOAD; then
echo "== rebuild under load: RAID 5 x4 served (2 threads), fio nbd 4 KiB randread QD32 (1 connection), rebuild min $REBUILD_MIN KiB/s (lifecycle issue)"
# Each round: the foreground alone on the healthy array, then the same fio
# run with a member failed RAMP/2 into it, so that the rebuild starts under
# load and runs through the whole measured window (at REBUILD_MIN while
# clients are busy, as md's speed_limit_min). The rebuild's rate under load
# is the progress status --json reports between the window's start and end.
# Foreground: best of REPEAT rounds on each side; the rebuild's rate: the
# lowest round (a minimum holds in every round or it does not hold).
sock=$dir/rb.sock
fg_idle=0 fg_load=0 rb_rate="" rb_all="" rb_note=""
for _ in $(seq "$REPEAT"); do
    v=$(fio_nbd_once iops "$sock" --rw=randread --bs=4k --iodepth=32)
    [ "$v" -gt "$fg_idle" ] && fg_idle=$v
    n=$(( $(count_of rb "$REBUILT") + 1 ))
    t0=$EPOCHREALTIME
    fio_nbd_once iops "$sock" --rw=randread --bs=4k --iodepth=32 >"$dir/fg.val" &
    fpid=$!
    sleep_until "$(fadd "$t0" "$(fmul "$(secs "$RAMP")" 0.5)")"
    "$URAID" fail "$slot1" >/dev/null 2>>"$log"
    # the window fio measures, less 0.2 s at its end (fio's start-up is in its ramp)
    sleep_until "$(fadd "$t0" "$(secs "$RAMP")")"
    d1=$(status rb 'd["last_background"]["done_bytes"]'); w1=$EPOCHREALTIME
    sleep_until "$(fadd "$w1" "$(fsub "$(secs "$RT")" 0.2)")"
    d2=$(status rb 'd["last_background"]["done_bytes"]'); w2=$EPOCHREALTIME
    still=$(status rb 'd["last_background"]["running"] and d["last_background"]["kind"] == "recovery"')
    wait "$fpid"
    v=$(cat "$dir/fg.val")
    [ "$v" -gt "$fg_load" ] && fg_load=$v
    r=$(fdiv "$(( ${d2:-0} - ${d1:-0} ))" "$(fsub "$w2" "$w1")")
    [ -z "$rb_rate" ] || [ "$r" -lt "$rb_rate" ] && rb_rate=$r
    # and from its start (under load too: fio was running), for the note
    ts=$(stamp_of rb 'recovery started' "$n")
    r=$(fdiv "${d2:-0}" "$(fsub "$w2" "${ts:-$w2}")")
    [ -z "$rb_all" ] || [ "$r" -lt "$rb_all" ] && rb_all=$r
    [ "$still" = True ] || rb_note="(the rebuild ended inside the window: a larger BENCH_MEMBER or a lower BENCH_REBUILD_MIN)"
    # the rest of the rebuild runs at full speed now that fio is done
    stamp_of rb "$REBUILT" "$n" >/dev/null
    [ "$(status rb 'd["last_background"]["result"]')" = completed ] ||
        echo "the rebuild on rb did not complete (see $dir/rb.err)" >&2
    spare_back rb "$slot1"
    next_round
done
line "4 KiB randread QD32 (NBD) during the rebuild" "$fg_load" "the same, no background work" "$fg_idle" iops 0.50
line "rebuild rate while clients are busy" "$rb_rate" "configured minimum (uraid speed --min)" \
    "$(( REBUILD_MIN * 1024 ))" bw 1.00 \
    "(in fio's window; from the rebuild's start $(( ${rb_all:-0} >> 20 )) MiB/s) $rb_note"
fi
if [ -n "$srv_pid" ]; then unserve rb; fi

# serve_until_idle NAME MEMBERS...: serve the array and time it from the
# start of `uraid serve` until it has no background work left and needs no
# resync: idle_secs, and idle_bytes the resync went over per member (0 when
# none ran). The end is the resync's "done" message. Status is asked once
# when the server is up (is a resync running or to come?) and once at the
# end; the wait between is bash alone (stamp_of, see nap): a fork and exec
# per look would take CPU from the resync being timed. It leaves the array
# served.
RESYNCED='resync (done|stopped|failed)'
serve_until_idle() {
    local name=$1 t0 t1 n idle
    shift
    idle_secs=0 idle_bytes=0
    n=$(( $(count_of "$name" "$RESYNCED") + 1 ))
    t0=$EPOCHREALTIME
    serve "$name" --speed-max="$SYNC_MAX" "$@" || return
    t1=$EPOCHREALTIME
    # nothing running, and nothing to do or a resync that has ended
    idle=$(status "$name" 'not d["background"] and (not d["resync_needed"] or
        d["last_background"]["kind"] == "resync" and not d["last_background"]["running"])')
    if [ "$idle" != True ] || [ "$(count_of "$name" "$RESYNCED")" -ge "$n" ]; then
        t1=$(stamp_of "$name" "$RESYNCED" "$n")
        [ -n "$t1" ] || { echo "$name: the resync did not end (see $dir/$name.err)" >&2; return; }
    fi
    [ "$(status "$name" 'd["resync_needed"]')" = False ] ||
        echo "$name: the resync did not complete (see $dir/$name.err)" >&2
    idle_secs=$(fsub "$t1" "$t0")
    idle_bytes=$(status "$name" 'd["last_background"]["done_bytes"] - d["last_background"]["skipped_bytes"] if d["last_background"]["kind"] == "resync" else 0')
}

if lifecycle RESYNC; then
echo "== resync of RAID 5 x4 (internal bitmap, 1 MiB per bit): full, after creation, vs after a crash during a few writes (lifecycle issue)"
# One array, so that the two differ only in what is dirty. Created without
# --assume-clean over members that do not read as zeroes (or uraid create
# would find it clean), it is born dirty with every bitmap bit set: the first
# start resyncs every member in full. Then 4 fio connections write in 1 MiB
# at 1/8, 3/8, 5/8 and 7/8 of the array, and the server is killed (SIGKILL)
# in the middle of them: dirty, and only the bits of those writes are set
# (the bits of the full resync are cleared first: two bitmap sweeps, 1 s
# apart with --delay=1), so a resync guided by the bitmap has 4 MiB of array
# data to go over.
for m in $D4; do
    head -c 1048576 /dev/urandom | dd of="$m" bs=1M seek=16 conv=notrunc status=none
done
# shellcheck disable=SC2086
"$URAID" create --level=5 --raid-devices=4 --bitmap=internal --bitmap-chunk=1024 --force --run \
    --delay=1 --name=rs $D4 >/dev/null 2>>"$log"
# shellcheck disable=SC2086
serve_until_idle rs $D4
t_full=$idle_secs b_full=$idle_bytes
for _ in $(seq 300); do
    [ "$(status rs 'd["bitmap"]["dirty_bits"]')" = 0 ] && break
    sleep 0.1
done
size=$(status rs 'd["array_bytes"]')
fio --name=dirty --ioengine=nbd --uri="nbd+unix:///?socket=$dir/rs.sock" --rw=randwrite \
    --bs=64k --iodepth=4 --numjobs=4 --size=1M --offset=$(( size / 8 / 1048576 ))M \
    --offset_increment=$(( size / 4 / 1048576 ))M --time_based --runtime=60 \
    --output="$dir/dirty.out" >/dev/null 2>&1 &
fpid=$!
sleep 1
kill -9 "$srv_pid"; wait "$srv_pid" 2>/dev/null; srv_pid=
kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null
# shellcheck disable=SC2086
serve_until_idle rs $D4
t_bm=$idle_secs b_bm=$idle_bytes
[ -n "$srv_pid" ] && unserve rs
line "resync after a crash during 4 x 1 MiB writes" "$t_bm" "full resync (created dirty)" "$t_full" s "" \
    "(MiB per member resynced: $(( ${b_bm:-0} >> 20 )) after the crash, $(( ${b_full:-0} >> 20 )) in full)"
fi

. "$(dirname "$0")/bench_plan.sh"   # BENCH_ONLY=plan: uraid plan --verify, predicted / measured
. "$(dirname "${BASH_SOURCE[0]}")/bench_cache.sh"
. "$(dirname "${BASH_SOURCE[0]}")/bench_reshape.sh"   # BENCH_ONLY=reshape (issue 18)
. "$(dirname "${BASH_SOURCE[0]}")/bench_journal.sh"   # BENCH_ONLY=journal: the replay's time
. "$(dirname "${BASH_SOURCE[0]}")/bench_ppl.sh"     # BENCH_ONLY=ppl: PPL vs no PPL
. "$(dirname "${BASH_SOURCE[0]}")/bench_nested.sh"  # BENCH_ONLY=nested: RAID 50 vs RAID 0
. "$(dirname "${BASH_SOURCE[0]}")/bench_pool.sh"    # BENCH_ONLY=pool: two volumes of a pool vs whole drives
# the stripe cache's tuning curve (its own file)
. "$(dirname "$0")/bench_stripecache.sh"

[ -s "$log" ] && { echo "messages:"; cat "$log"; }
exit 0
