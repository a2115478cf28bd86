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
# (dd of its data area). uraid does not write the journal at run time yet,
# so there are no throughput or latency lines for it.

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
        doff=$("$URAID" examine "$dir/jrj" | awk '/Data Offset/ { print $4 }')
        b0=$EPOCHREALTIME
        dd if="$dir/jrj" of=/dev/null bs=1M iflag=skip_bytes skip=$((doff * 512)) status=none
        b1=$EPOCHREALTIME
        line "journal replay, 64 MiB ($rows)" "$(python3 -c "print($t1 - $t0)")" \
            "reading the journal once" "$(python3 -c "print($b1 - $b0)")" s "" \
            "(serve to ready, assembly included; pid file polled every 50 ms)"
    fi
    rm -f "${jm[@]}" "$dir/jrj"
fi
fi
