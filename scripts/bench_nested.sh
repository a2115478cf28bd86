# shellcheck shell=bash
# The nested RAID block of make bench (issue 22), sourced by scripts/bench.sh
# (its helpers: want, line; $D6 the six tmpfs members). Run it alone with
# BENCH_ONLY=nested make bench; leave it out with BENCH_NESTED=0.
#
# RAID 50 (2 groups of 3, chunk 64 KiB) in process against RAID 0 (chunk
# 64 KiB) of the same six members: 4 KiB random reads at QD 32 on one
# reactor (tests/tools/nested_bench.c: each completion submits the next
# from the reactor's thread), the two made in turn, BENCH_REPEAT rounds,
# the best of each. Target: RAID 50 >= 0.9 x RAID 0 (a stacked member costs
# one more request of the inner array, on the same reactor, no copy).

if want NESTED; then
echo "== nested: RAID 50 (2 x 3) vs RAID 0 of the same 6 members, in process, 4 KiB randread QD 32, one reactor, best of $REPEAT rounds of ${RT} s (issue 22)"
nb=$BUILD/tests/tools/nested_bench
if [ -x "$nb" ]; then
    # shellcheck disable=SC2086
    out=$("$nb" "$RT" "$REPEAT" $D6 2>>"$log")
    r50=$(sed -n 's/^iops_raid50=\([0-9]*\) .*/\1/p' <<<"$out")
    r0=$(sed -n 's/.* iops_raid0=\([0-9]*\)$/\1/p' <<<"$out")
    line "RAID 50 (2x3) 4 KiB randread QD32 in process" "${r50:-0}" "RAID 0 x6" "${r0:-0}" \
        iops 0.9 "($(grep '^round' <<<"$out" | tr '\n' ';' | sed 's/;$//'); load $(cut -d' ' -f1-3 /proc/loadavg))"
else
    echo "nested: $nb not built (make $nb)"
fi
fi
