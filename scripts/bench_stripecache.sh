# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034  # $dir, $log, run_t...: bench.sh's
# make bench, the stripe cache block (sourced by scripts/bench.sh; run it
# alone with BENCH_ONLY=stripecache make bench, leave it out with
# BENCH_STRIPECACHE=0): md's tuning curve of stripe_cache_size. RAID 5 x4
# over the bench's members, served by uraid serve, fio writing through NBD,
# the stripe cache set with uraid tune between runs: the smallest size
# allowed (17 stripe heads), a few between, the default (256) and the
# largest (32768). One line per size: MiB/s (the best of BENCH_REPEAT
# runs), the ratio to the smallest, the requests that waited for a stripe
# head during that size's runs and the most heads in use at once. The
# sizes are measured in turn, round after round, so that a drift of the
# machine's load hits them alike. Two curves:
#   1. the issue's: 512 KiB chunks, 64 KiB sequential writes at QD 4. It
#      does not reach the bound: a head is one row piece in work (not md's
#      4 KiB page per member), a 64 KiB write is one piece, so at most a few
#      heads are in use and even 17 never makes a write wait.
#   2. one that fills it: 16 KiB chunks, 4 KiB random writes, 4 jobs (one
#      NBD connection each) at QD 32: up to 128 rows in work at once, so 17
#      and 64 heads throttle and the larger sizes do not.
#   3. re-writes, what the heads' row data buys (md's reason for a larger
#      stripe_cache_size): 16 KiB chunks, 4 KiB random writes, 2 jobs x QD
#      16, over 8 MiB (683 units of 4 KiB per member): from 1024 heads on
#      the units stay kept, and a write finds its unit's old data and
#      parity in memory instead of reading them from the members. Each line
#      says how many of the write units found theirs (hits).
# Uses bench.sh's $URAID, $dir, $log, $D4, $REPEAT, $RT, $RAMP, want and
# fio_nbd_once.

# sc_curve TITLE CHUNK fio-args...: one curve, a line per size
sc_curve() {
    local title=$1 chunk=$2 s v pid w0 w1 pk
    shift 2
    echo "-- $title --"
    # shellcheck disable=SC2086
    "$URAID" create --level=5 --raid-devices=4 --chunk="$chunk" --force --run --assume-clean \
        --name=sc $D4 >/dev/null 2>>"$log"
    rm -f "$dir/sc.pid"
    # shellcheck disable=SC2086
    "$URAID" serve --socket="$dir/sc.sock" --threads=2 --pid-file="$dir/sc.pid" $D4 \
        >>"$dir/sc.out" 2>&1 &
    pid=$!
    nbd_pids+=("$pid")          # bench.sh's cleanup stops it on an early exit
    for _ in $(seq 200); do [ -s "$dir/sc.pid" ] && break; sleep 0.05; done
    local -A best=() waited=() peak=() hit=() tried=()
    local h0 m0 h1 m1
    run_t=$RT ramp_t=$RAMP
    for _ in $(seq "$REPEAT"); do
        for s in "${sc_sizes[@]}"; do
            "$URAID" tune sc --stripe-cache="$s" >/dev/null 2>>"$log" || { best[$s]=0; continue; }
            read -r w0 _ h0 m0 < <(sc_stats)
            v=$(fio_nbd_once bw "$dir/sc.sock" "$@")
            [ "${v:-0}" -gt "${best[$s]:-0}" ] && best[$s]=$v
            # the peak is reset by the resize: it is this size's alone
            read -r w1 pk h1 m1 < <(sc_stats)
            waited[$s]=$(( ${waited[$s]:-0} + ${w1:-0} - ${w0:-0} ))
            hit[$s]=$(( ${hit[$s]:-0} + ${h1:-0} - ${h0:-0} ))
            tried[$s]=$(( ${tried[$s]:-0} + ${h1:-0} + ${m1:-0} - ${h0:-0} - ${m0:-0} ))
            [ "${pk:-0}" -gt "${peak[$s]:-0}" ] && peak[$s]=$pk
        done
    done
    # what the members did for it: bytes read per byte written (a full-row
    # write reads nothing; a 4 KiB read-modify-write reads 8 KiB, writes 8 KiB)
    local reads
    reads=$("$URAID" status --json sc 2>>"$log" | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = sum(m["read_bytes"] for m in d["members"])
w = sum(m["write_bytes"] for m in d["members"])
print("%.2f" % (r / (w or 1)))' 2>/dev/null)
    "$URAID" stop sc >/dev/null 2>>"$log"
    wait "$pid" 2>/dev/null
    for s in "${sc_sizes[@]}"; do
        awk -v s="$s" -v v="${best[$s]:-0}" -v b="${best[17]:-0}" -v w="${waited[$s]:-0}" \
            -v p="${peak[$s]:-0}" -v h="${hit[$s]:-0}" -v t="${tried[$s]:-0}" 'BEGIN {
            printf "stripe cache %5d heads (%9s): %7.1f MiB/s  %5.2f x the smallest  %8d waited  peak %5d in use  %5.1f %% of 4 KiB write units that found theirs kept (hits)\n",
                   s, sprintf("%.1f MiB", s * 4096 * 4 / 1048576), v / 1048576, (b > 0 ? v / b : 0), w, p,
                   (t > 0 ? 100 * h / t : 0) }'
    done
    echo "(members read ${reads:-?} bytes per byte they wrote, over all sizes; load $(cut -d' ' -f1-3 /proc/loadavg))"
}
# sc_stats: "WAITS PEAK HITS MISSES" of the array sc now
sc_stats() {
    "$URAID" status --json sc 2>>"$log" | python3 -c '
import json, sys
c = json.load(sys.stdin)["stripe_cache"]
print(c["waits"], c["peak"], c.get("hits", 0), c.get("misses", 0))' 2>/dev/null || echo "0 0 0 0"
}

if want STRIPECACHE; then
    echo
    echo "== stripe cache (RAID 5 x4 through NBD, by stripe_cache_size; waited: requests that found no head free) =="
    sc_sizes=(17 64 256 1024 4096 32768)
    sc_curve "64 KiB sequential writes at QD 4, 512 KiB chunks (the issue's; does not reach the bound)" \
        512K --rw=write --bs=64k --iodepth=4 --size=512M
    sc_curve "4 KiB random writes, 4 jobs x QD 32, 16 KiB chunks (fills the cache)" \
        16K --rw=randwrite --bs=4k --iodepth=32 --numjobs=4 --size=256M --randrepeat=0 --random_generator=tausworthe64
    sc_curve "4 KiB random re-writes over 8 MiB, 2 jobs x QD 16, 16 KiB chunks (kept from 1024 heads on)" \
        16K --rw=randwrite --bs=4k --iodepth=16 --numjobs=2 --size=8M --randrepeat=0 --random_generator=tausworthe64
fi
