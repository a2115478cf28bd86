# shellcheck shell=bash
# shellcheck disable=SC2154  # dir, log, loop_why, L4, D4, A2, URAID: bench.sh's
# ---------------------------------------------------------------------------
# Read-ahead (issue 19, [cache]); sourced by scripts/bench.sh, which it uses
# (want, loop_attach, serve, unserve, status, fio_nbd, line). Run it alone
# with BENCH_ONLY=readahead; leave it out with BENCH_READAHEAD=0.
# RAID 5 x4 (chunk 512 KiB: a stripe row is 1.5 MiB, the default window two
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
# (on off, off on, ...), max(3, BENCH_REPEAT) rounds, a server started for
# each, and the lines compare the medians of each side's runs (all runs
# are printed), so that a drift in the load hits both alike and one lucky
# run does not decide. On tmpfs read-ahead does nothing but look at the
# members (ra_read: no table, no lock, no prefetch), so a ratio away from
# 1.0 there is the machine's noise: the runs printed beside show its spread.

# ra_round TAG MODE(on|off) DEVICES...: one server, one run of each workload;
# appends to ra_seq_MODE_runs and ra_rnd_MODE_runs
ra_round() {
    local tag=$1 mode=$2 arg=default v
    shift 2
    [ "$mode" = off ] && arg=off
    serve "ra$tag" --read-ahead=$arg "$@" || return
    v=$(fio_nbd_once bw "$dir/ra$tag.sock" --rw=read --bs=128k --iodepth=1 --numjobs=1)
    eval "ra_seq_${mode}_runs+=(\"\$v\")"
    if [ "$mode" = on ]; then
        ra_note=$(status "ra$tag" '"(read ahead %d MiB, %d MiB of it served, %d MiB wasted)" % (d["read_ahead"]["prefetched_bytes"] >> 20, d["read_ahead"]["served_bytes"] >> 20, d["read_ahead"]["wasted_bytes"] >> 20)')
    fi
    # shellcheck disable=SC2086
    v=$(fio_nbd_once iops "$dir/ra$tag.sock" --rw=randread --bs=4k $A2)
    eval "ra_rnd_${mode}_runs+=(\"\$v\")"
    unserve "ra$tag"
}

# ra_median VALUES...: the median (the lower middle of an even count)
ra_median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }

# ra_measure TAG DEVICES...: RAID 5 on DEVICES served with read-ahead at its
# default and off; sets ra_seq_on, ra_seq_off, ra_rnd_on, ra_rnd_off (the
# medians), ra_seq_runs and ra_rnd_runs (every run, for the note) and
# ra_note (what read-ahead did in the last sequential run)
ra_measure() {
    local tag=$1 round rounds=$REPEAT
    shift
    [ "$rounds" -lt 3 ] && rounds=3
    ra_seq_on_runs=() ra_seq_off_runs=() ra_rnd_on_runs=() ra_rnd_off_runs=() ra_note=""
    "$URAID" create --level=5 --raid-devices=4 --force --run --assume-clean --name="ra$tag" "$@" >/dev/null 2>>"$log"
    for round in $(seq "$rounds"); do
        if [ $((round % 2)) = 1 ]; then
            ra_round "$tag" on "$@"; ra_round "$tag" off "$@"
        else
            ra_round "$tag" off "$@"; ra_round "$tag" on "$@"
        fi
    done
    ra_seq_on=$(ra_median "${ra_seq_on_runs[@]}") ra_seq_off=$(ra_median "${ra_seq_off_runs[@]}")
    ra_rnd_on=$(ra_median "${ra_rnd_on_runs[@]}") ra_rnd_off=$(ra_median "${ra_rnd_off_runs[@]}")
    ra_seq_runs="medians of $rounds interleaved rounds; on $(fmt_runs bw "${ra_seq_on_runs[@]}"), off $(fmt_runs bw "${ra_seq_off_runs[@]}"); load $(cut -d' ' -f1-3 /proc/loadavg)"
    ra_rnd_runs="medians of $rounds interleaved rounds; on $(fmt_runs iops "${ra_rnd_on_runs[@]}"), off $(fmt_runs iops "${ra_rnd_off_runs[@]}")"
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
