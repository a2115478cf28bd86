# shellcheck shell=bash
# The pool block of make bench (issue 22), sourced by scripts/bench.sh (its
# helpers: want, serve, unserve, line, best). Run it alone with
# BENCH_ONLY=pool make bench; leave it out with BENCH_POOL=0.
#
# Two parity (RAID 5) volumes on the same 4 tmpfs drives of a pool, served by
# one `uraid serve --pool` (2 threads), each driven by its own fio job
# through its own export at once (4 KiB random reads, then 4 KiB random
# writes, QD 16 each): the sum of their IOPS against one RAID 5 of the same
# chunk on 4 whole tmpfs files of the same size, served by `uraid serve` (2
# threads), driven by two fio jobs of the same depth through its one
# export. Target: >= 0.9 (the pool costs nothing by itself). Best of
# BENCH_REPEAT rounds each, the two in turn.

if want POOL; then
echo "== pool: two RAID 5 volumes of one pool, served by one process, fio on each export at once, vs one RAID 5 on whole drives (issue 22)"
pmb=$(( mb < 512 ? mb : 512 ))
pd=() wd=()
for i in 0 1 2 3; do
    rm -f "$dir/pd$i" "$dir/wd$i"; truncate -s "${pmb}M" "$dir/pd$i" "$dir/wd$i"
    pd+=("$dir/pd$i") wd+=("$dir/wd$i")
done
# each volume takes a bit under half of each drive (3 parts of data)
vmb=$(( ((pmb - 8) / 2 - 4) * 3 ))
pool_ok=1
"$URAID" pool create bp "${pd[@]}" >>"$log" 2>&1 || pool_ok=0
for v in va vb; do
    [ $pool_ok = 1 ] && { "$URAID" volume create bp $v --resiliency=parity --size="${vmb}M" \
        "${pd[@]}" >>"$log" 2>&1 || pool_ok=0; }
done
"$URAID" create --level=5 --raid-devices=4 --chunk=512 --name=bw --bitmap=none "${wd[@]}" \
    >>"$log" 2>&1 || pool_ok=0
if [ $pool_ok = 0 ]; then
    echo "the pool block did not run: pool or array creation failed (see $log)"
else
    run_t=$RT ramp_t=$RAMP
    # prun pool|whole RW: one served run, the IOPS of both jobs together (0 on failure)
    prun() {
        local kind=$1 rw=$2 out=$dir/fio-pool.json v=0 jobs=()
        if [ "$kind" = pool ]; then
            serve bp --pool=bp "${pd[@]}" >&2 || { echo 0; return; }
            jobs=(--name=a --uri="nbd+unix:///va?socket=$dir/bp.sock"
                  --name=b --uri="nbd+unix:///vb?socket=$dir/bp.sock")
        else
            serve bw "${wd[@]}" >&2 || { echo 0; return; }
            jobs=(--name=a --uri="nbd+unix:///?socket=$dir/bw.sock"
                  --name=b --uri="nbd+unix:///?socket=$dir/bw.sock")
        fi
        if fio --ioengine=nbd --rw="$rw" --bs=4k --iodepth=16 --time_based \
                --runtime="$run_t" --ramp_time="$ramp_t" --group_reporting \
                --output-format=json --output="$out" "${jobs[@]}" >>"$log" 2>&1; then
            v=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print("%.0f" % (j["read"]["iops"] + j["write"]["iops"]))' "$out")
        else
            echo "fio failed on the $kind server (see $log)" >&2
        fi
        unserve "$([ "$kind" = pool ] && echo bp || echo bw)"
        echo "${v:-0}"
    }
    for rw in randread randwrite; do
        bp_best=0 bw_best=0
        for i in $(seq "$REPEAT"); do
            if (( i % 2 )); then a=$(prun pool $rw); b=$(prun whole $rw)
            else b=$(prun whole $rw); a=$(prun pool $rw); fi
            (( a > bp_best )) && bp_best=$a
            (( b > bw_best )) && bw_best=$b
        done
        line "pool: 2 RAID 5 volumes at once, 4K $rw QD16x2" "$bp_best" \
            "one RAID 5 on whole drives, QD16x2" "$bw_best" iops 0.9 \
            "(load $(cut -d' ' -f1-3 /proc/loadavg))"
    done
fi
rm -f "${pd[@]}" "${wd[@]}"
fi
