# shellcheck shell=bash
# make bench, the stripe cache block (sourced by scripts/bench.sh; run it
# alone with BENCH_ONLY=stripecache make bench, leave it out with
# BENCH_STRIPECACHE=0): md's tuning curve of stripe_cache_size. RAID 5 x4
# over the bench's members (512 KiB chunks), served by uraid serve, fio
# writing sequentially in 64 KiB at queue depth 4 through NBD, the stripe
# cache set with uraid tune between runs: the smallest size allowed (17
# stripe heads), a few between, the default (256) and the largest (32768).
# One line per size: MiB/s (the best of BENCH_REPEAT runs) and the ratio to
# the smallest. The sizes are measured in turn, round after round, so that
# a drift of the machine's load hits them alike. Uses bench.sh's $URAID,
# $dir, $log, $D4, $REPEAT, $RT, $RAMP, want and fio_nbd_once.
if want STRIPECACHE; then
    echo
    echo "== stripe cache (RAID 5 x4, 64 KiB sequential writes at QD 4 through NBD, by stripe_cache_size) =="
    sc_sizes=(17 64 256 1024 4096 32768)
    sc_pid=
    # shellcheck disable=SC2086
    "$URAID" create --level=5 --raid-devices=4 --force --run --assume-clean --name=sc $D4 \
        >/dev/null 2>>"$log"
    rm -f "$dir/sc.pid"
    # shellcheck disable=SC2086
    "$URAID" serve --socket="$dir/sc.sock" --threads=2 --pid-file="$dir/sc.pid" $D4 \
        >>"$dir/sc.out" 2>&1 &
    sc_pid=$!
    nbd_pids+=("$sc_pid")       # bench.sh's cleanup stops it on an early exit
    for _ in $(seq 200); do [ -s "$dir/sc.pid" ] && break; sleep 0.05; done
    declare -A sc_best=()
    run_t=$RT ramp_t=$RAMP
    for _ in $(seq "$REPEAT"); do
        for s in "${sc_sizes[@]}"; do
            "$URAID" tune sc --stripe-cache="$s" >/dev/null 2>>"$log" || { sc_best[$s]=0; continue; }
            v=$(fio_nbd_once bw "$dir/sc.sock" --rw=write --bs=64k --iodepth=4 --size=512M)
            [ "${v:-0}" -gt "${sc_best[$s]:-0}" ] && sc_best[$s]=$v
        done
    done
    # what the members did for it: bytes read per byte written (a full-row
    # write reads nothing; a lone 64 KiB write to a 4-member RAID 5 reads
    # 128 KiB and writes 128 KiB: 1.00), and the writes that waited
    read -r waits reads peak < <("$URAID" status --json sc 2>>"$log" | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = sum(m["read_bytes"] for m in d["members"])
w = sum(m["write_bytes"] for m in d["members"])
print(d["stripe_cache"]["waits"], "%.2f" % (r / (w or 1)), d["stripe_cache"]["peak"])' 2>/dev/null)
    "$URAID" stop sc >/dev/null 2>>"$log"
    wait "$sc_pid" 2>/dev/null
    base_bw=${sc_best[17]:-0}
    for s in "${sc_sizes[@]}"; do
        awk -v s="$s" -v v="${sc_best[$s]:-0}" -v b="$base_bw" 'BEGIN {
            printf "stripe cache %5d heads (%9s): %7.1f MiB/s  %5.2f x the smallest\n", s,
                   sprintf("%.1f MiB", s * 4096 * 4 / 1048576), v / 1048576, (b > 0 ? v / b : 0) }'
    done
    echo "(over all runs: ${waits:-?} writes waited for a stripe head, at most ${peak:-?} heads in use at the last size; members read ${reads:-?} bytes per byte they wrote)"
fi
