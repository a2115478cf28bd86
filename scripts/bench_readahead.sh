# shellcheck shell=bash
# shellcheck disable=SC2154  # dir, log, loop_why, L4, D4, A2, URAID: bench.sh's
# ---------------------------------------------------------------------------
# Read-ahead (issue 19, [cache]); sourced by scripts/bench.sh, which it uses
# (want, loop_attach, serve, unserve, status, fio_nbd, line). Run it alone
# with BENCH_ONLY=readahead; leave it out with BENCH_READAHEAD=0.
# RAID 5 x4 (chunk 512 KiB: a stripe row is 1.5 MiB, the default window four
# rows) served by `uraid serve` twice, --read-ahead=default then off, and
# read by fio through NBD:
#   - 128 KiB sequential reads, one connection at QD 1: what read-ahead is
#     for. Target >= 1.5 x on loop block devices (direct I/O over the tmpfs
#     files: member reads are asynchronous, as on drives, so reading rows
#     ahead overlaps them with the client's round trips) and >= 1.0 x on the
#     tmpfs files themselves (copied inline by the reactor: prefetching buys
#     little, and must not cost). On tmpfs read-ahead steps aside (no
#     prefetch, no stream table): with prefetching forced on it measured
#     0.63 x (prefetches issued before the read) and 0.79 x (read first,
#     445 vs 562 MiB/s, 2 CPUs under load ~9), so "on" equals "off" there:
#     what is left of it is one look at the members per read (ra_read),
#     and a ratio such as 0.91 (best of 2 runs each) is the load's noise.
#   - 4 KiB random reads, 2 connections x QD 32: every read is looked at by
#     stream detection on both reactors (no lock: the stream fronts' atomic
#     copies and one slot per reactor's candidate table) and must not pay
#     for it (>= 0.95 x).
# Through NBD rather than in process: the export is where clients meet
# read-ahead, the same server binary runs both ways, and uraid bench has no
# read-ahead switch yet (its in-process array assembles with read-ahead
# off). The server's status says how much read-ahead served (the note of
# the sequential lines).
# ---------------------------------------------------------------------------

# The machine is shared: on and off are measured in alternating order
# (on off, off on, ...), max(5, BENCH_REPEAT) rounds (BENCH_RA_ROUNDS
# overrides), a server started for each, runs of BENCH_RA_RUNTIME (2) s
# after BENCH_RA_RAMP (1) s, and the lines compare the medians of each
# side's runs (all runs are printed, and each round's on / off: a drift in
# the load hits both alike, and one lucky run does not decide), with the
# load at each round. At a load of 2.5-3.3 two rounds of three once read
# on 1431 MiB/s and off 1178, and the ratio of the medians 1.24: the 5
# rounds (about 75 s for each kind of member) are there for that. The
# server's CPU time per GiB read (utime + stime over ramp and run, from
# /proc) is printed beside: it moves less with the load than the
# throughput does. On tmpfs read-ahead does nothing but look at the
# members (ra_read: no table, no lock, no prefetch), so a ratio away from
# 1.0 there is the machine's noise: the rounds printed beside show its
# spread.
RA_RT=${BENCH_RA_RUNTIME:-2}
RA_RAMP=${BENCH_RA_RAMP:-1}

# ra_round TAG MODE(on|off) DEVICES...: one server, one run of each workload;
# appends to ra_seq_MODE_runs, ra_seq_MODE_cpu (server ms per GiB of the
# sequential run) and ra_rnd_MODE_runs
ra_round() {
    local tag=$1 mode=$2 arg=default v t0 t1
    shift 2
    [ "$mode" = off ] && arg=off
    serve "ra$tag" --read-ahead=$arg "$@" || return
    t0=$(cpu_ticks "$srv_pid")
    v=$(fio_nbd_once bw "$dir/ra$tag.sock" --rw=read --bs=128k --iodepth=1 --numjobs=1)
    t1=$(cpu_ticks "$srv_pid")
    eval "ra_seq_${mode}_runs+=(\"\$v\")"
    eval "ra_seq_${mode}_cpu+=(\"$(awk -v v="$v" -v t0="$t0" -v t1="$t1" -v hz="$(getconf CLK_TCK)" \
        -v s="$(secs "$run_t")" -v r="$(secs "$ramp_t")" 'BEGIN { g = v * (s + r) / 2^30
            if (t0 == "" || t1 == "" || g <= 0) print "-"; else printf "%.0f\n", (t1 - t0) / hz * 1000 / g }')\")"
    if [ "$mode" = on ]; then
        ra_note=$(status "ra$tag" '"(read ahead %d MiB, %d MiB of it served, %d MiB wasted; %.2f %% of the reads served waited for their prefetch; window %d KiB)" % (d["read_ahead"]["prefetched_bytes"] >> 20, d["read_ahead"]["served_bytes"] >> 20, d["read_ahead"]["wasted_bytes"] >> 20, 100.0 * d["read_ahead"]["waited_reads"] / max(1, d["read_ahead"]["served_reads"]), d["read_ahead"]["window_bytes"] >> 10)')
    fi
    # shellcheck disable=SC2086
    v=$(fio_nbd_once iops "$dir/ra$tag.sock" --rw=randread --bs=4k $A2)
    eval "ra_rnd_${mode}_runs+=(\"\$v\")"
    unserve "ra$tag"
}

# ra_median VALUES...: the median (the lower middle of an even count)
ra_median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }
# ra_ratios A B: each round's A[i] / B[i] of the arrays named A and B
ra_ratios() {
    local -n ra_a=$1 ra_b=$2
    local i
    for i in "${!ra_a[@]}"; do printf '%s ' "$(fdiv2 "${ra_a[$i]}" "${ra_b[$i]:-0}")"; done | sed 's/ $//'
}

# ra_measure TAG DEVICES...: RAID 5 on DEVICES served with read-ahead at its
# default and off; sets ra_seq_on, ra_seq_off, ra_rnd_on, ra_rnd_off (the
# medians), ra_seq_runs and ra_rnd_runs (every run, for the note) and
# ra_note (what read-ahead did in the last sequential run)
ra_measure() {
    local tag=$1 round rounds=${BENCH_RA_ROUNDS:-$REPEAT} loads=""
    local run_t=$RA_RT ramp_t=$RA_RAMP
    shift
    [ -z "${BENCH_RA_ROUNDS:-}" ] && [ "$rounds" -lt 5 ] && rounds=5
    ra_seq_on_runs=() ra_seq_off_runs=() ra_rnd_on_runs=() ra_rnd_off_runs=() ra_note=""
    ra_seq_on_cpu=() ra_seq_off_cpu=()
    "$URAID" create --level=5 --raid-devices=4 --force --run --assume-clean --name="ra$tag" "$@" >/dev/null 2>>"$log"
    for round in $(seq "$rounds"); do
        loads="$loads $(cut -d' ' -f1 /proc/loadavg)"
        if [ $((round % 2)) = 1 ]; then
            ra_round "$tag" on "$@"; ra_round "$tag" off "$@"
        else
            ra_round "$tag" off "$@"; ra_round "$tag" on "$@"
        fi
    done
    ra_seq_on=$(ra_median "${ra_seq_on_runs[@]}") ra_seq_off=$(ra_median "${ra_seq_off_runs[@]}")
    ra_rnd_on=$(ra_median "${ra_rnd_on_runs[@]}") ra_rnd_off=$(ra_median "${ra_rnd_off_runs[@]}")
    ra_seq_runs="medians of $rounds interleaved rounds of ${run_t} s; on $(fmt_runs bw "${ra_seq_on_runs[@]}"), off $(fmt_runs bw "${ra_seq_off_runs[@]}"); on / off by round $(ra_ratios ra_seq_on_runs ra_seq_off_runs); server CPU ms per GiB on $(ra_median "${ra_seq_on_cpu[@]}") off $(ra_median "${ra_seq_off_cpu[@]}") (medians); load by round$loads"
    ra_rnd_runs="medians of $rounds interleaved rounds; on $(fmt_runs iops "${ra_rnd_on_runs[@]}"), off $(fmt_runs iops "${ra_rnd_off_runs[@]}"); on / off by round $(ra_ratios ra_rnd_on_runs ra_rnd_off_runs)"
}
# every run of a side, as bench_cache.sh prints them
command -v fmt_runs >/dev/null || fmt_runs() { local m=$1; shift; local v; for v; do printf '%s ' "$(fmt_value "$m" "$v")"; done | sed 's/ $//'; }

if want READAHEAD; then
echo "== read-ahead: RAID 5 x4 (chunk 512 KiB) served with --read-ahead=default vs off, fio nbd: 128 KiB sequential read 1x1, 4 KiB random read 2x32; on loop block devices (direct I/O) and on the tmpfs files"
if loop_attach; then
    # shellcheck disable=SC2086
    ra_measure loop $L4
    detach_loops
    line "loop RAID 5 x4 128 KiB seq read 1x1, RA on" "$ra_seq_on" "read-ahead off" "$ra_seq_off" bw 1.5 "$ra_note ($ra_seq_runs)"
    line "loop RAID 5 x4 4 KiB randread 2x32, RA on" "$ra_rnd_on" "read-ahead off" "$ra_rnd_off" iops 0.95 "($ra_rnd_runs)"
else
    echo "loop devices: skipped ($loop_why)"
fi
# shellcheck disable=SC2086
ra_measure tmpfs $D4
line "RAID 5 x4 128 KiB seq read 1x1, RA on" "$ra_seq_on" "read-ahead off" "$ra_seq_off" bw 1.0 "$ra_note ($ra_seq_runs)"
line "RAID 5 x4 4 KiB randread 2x32, RA on" "$ra_rnd_on" "read-ahead off" "$ra_rnd_off" iops 0.95 "($ra_rnd_runs)"
fi
