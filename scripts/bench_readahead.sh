# shellcheck shell=bash
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
#     little, and must not cost).
#   - 4 KiB random reads, 2 connections x QD 32: every read takes the stream
#     table's lock on both reactors and must not pay for it (>= 0.95 x).
# Through NBD rather than in process: the export is where clients meet
# read-ahead, the same server binary runs both ways, and uraid bench has no
# read-ahead switch (it assembles with the default). The server's status
# says how much read-ahead served (the note of the sequential lines).
# ---------------------------------------------------------------------------

# ra_measure TAG DEVICES...: RAID 5 on DEVICES served with read-ahead at its
# default and off; sets ra_seq_on, ra_seq_off, ra_rnd_on, ra_rnd_off and
# ra_note (what read-ahead did in the sequential run)
ra_measure() {
    local tag=$1 mode
    shift
    ra_seq_on=0 ra_seq_off=0 ra_rnd_on=0 ra_rnd_off=0 ra_note=""
    "$URAID" create --level=5 --raid-devices=4 --force --run --assume-clean --name="ra$tag" "$@" >/dev/null 2>>"$log"
    for mode in on off; do
        local arg=default
        [ $mode = off ] && arg=off
        serve "ra$tag" --read-ahead=$arg "$@" || continue
        eval "ra_seq_$mode=\$(fio_nbd bw \"\$dir/ra\$tag.sock\" --rw=read --bs=128k --iodepth=1 --numjobs=1)"
        if [ $mode = on ]; then
            ra_note=$(status "ra$tag" '"(read ahead %d MiB, %d MiB of it served, %d MiB wasted)" % (d["read_ahead"]["prefetched_bytes"] >> 20, d["read_ahead"]["served_bytes"] >> 20, d["read_ahead"]["wasted_bytes"] >> 20)')
        fi
        eval "ra_rnd_$mode=\$(fio_nbd iops \"\$dir/ra\$tag.sock\" --rw=randread --bs=4k $A2)"
        unserve "ra$tag"
    done
}

if want READAHEAD; then
echo "== read-ahead: RAID 5 x4 (chunk 512 KiB) served with --read-ahead=default vs off, fio nbd: 128 KiB sequential read 1x1, 4 KiB random read 2x32; on loop block devices (direct I/O) and on the tmpfs files"
if loop_attach; then
    # shellcheck disable=SC2086
    ra_measure loop $L4
    detach_loops
    line "loop RAID 5 x4 128 KiB seq read 1x1, RA on" "$ra_seq_on" "read-ahead off" "$ra_seq_off" bw 1.5 "$ra_note"
    line "loop RAID 5 x4 4 KiB randread 2x32, RA on" "$ra_rnd_on" "read-ahead off" "$ra_rnd_off" iops 0.95
else
    echo "loop devices: skipped ($loop_why)"
fi
# shellcheck disable=SC2086
ra_measure tmpfs $D4
line "RAID 5 x4 128 KiB seq read 1x1, RA on" "$ra_seq_on" "read-ahead off" "$ra_seq_off" bw 1.0 "$ra_note"
line "RAID 5 x4 4 KiB randread 2x32, RA on" "$ra_rnd_on" "read-ahead off" "$ra_rnd_off" iops 0.95
fi
