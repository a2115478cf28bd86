# shellcheck shell=bash
# The PPL block of make bench (issue 20), sourced by scripts/bench.sh (its
# helpers: want, serve, unserve, fio_nbd_once, line). Run it alone with
# BENCH_ONLY=ppl make bench; leave it out with BENCH_PPL=0.
#
# RAID 5 x4 over the bench's tmpfs members, served by `uraid serve` (2
# threads), fio's nbd engine, one connection: the same members created with
# --consistency-policy=ppl and with resync (no log), each served in turn,
# BENCH_REPEAT rounds, the best run of each. 4 KiB random write at QD 32 over
# the whole array: PPL >= 0.7 x no PPL (md's documentation puts PPL's cost at
# 30-40 % in the worst case, which this is: every write is partial and logs
# its partial parity before its member writes).

if want PPL; then
echo "== PPL: RAID 5 x4 (chunk 512 KiB) with md's partial parity log vs without, fio nbd 1 connection, 4 KiB randwrite QD 32, best of $REPEAT rounds of ${RT} s after ${RAMP} s ramp, the two in turn (issue 20)"
# ppl_run POLICY: create with POLICY, serve, one fio run, stop; prints IOPS (0 on failure)
ppl_run() {
    local v=0
    # shellcheck disable=SC2086
    "$URAID" create --level=5 --raid-devices=4 --assume-clean --force --run --name=ppl \
        --consistency-policy="$1" $D4 >/dev/null 2>>"$log" || { echo 0; return; }
    # shellcheck disable=SC2086
    if serve ppl $D4 >&2; then
        v=$(fio_nbd_once iops "$dir/ppl.sock" --rw=randwrite --bs=4k --iodepth=32 --norandommap)
        unserve ppl
    fi
    echo "${v:-0}"
}
ppl_best=0 none_best=0 ppl_runs=() none_runs=()
for i in $(seq "$REPEAT"); do
    if (( i % 2 )); then p=$(ppl_run ppl); n=$(ppl_run resync)
    else n=$(ppl_run resync); p=$(ppl_run ppl); fi
    ppl_runs+=("$p") none_runs+=("$n")
    [ "${p%.*}" -gt "${ppl_best%.*}" ] && ppl_best=$p
    [ "${n%.*}" -gt "${none_best%.*}" ] && none_best=$n
done
line "RAID 5 x4 4 KiB randwrite QD32, PPL" "$ppl_best" "no PPL (resync)" "$none_best" iops 0.7 \
    "(runs: PPL ${ppl_runs[*]}, none ${none_runs[*]})"
fi
