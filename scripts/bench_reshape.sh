# shellcheck shell=bash
# The reshape block of make bench (issue 18), sourced by scripts/bench.sh
# (its helpers: lifecycle, serve, unserve, status, stamp_of, fio_nbd_once,
# line, wipe, fdiv, fsub, fadd, fmul, secs, sleep_until). Run it alone with
# BENCH_ONLY=reshape make bench; leave it out with BENCH_RESHAPE=0.
#
# A RAID 5 of 3 members (d0..d2, chunk 512 KiB, mdadm's default) restriped
# to 4 (d3 added), members on the bench's tmpfs:
#   - idle: the engine's reshape, unthrottled, started and timed by
#     tests/tools/reshape_start (the library, in-process: no server), vs a
#     plain program that reads and rewrites the same bytes with the same I/O
#     sizes, fdatasyncs and checkpoints per step (tests/tools/reshape_bound.c),
#     run after it on the same members (the array is made again after);
#     best of REPEAT rounds each: >= 0.8 x;
#   - under load: 4 KiB random reads QD 32 through NBD (`uraid serve`, 2
#     threads) while the reshape runs (it was started and stopped after its
#     first step by reshape_start; the server resumes it by itself, its
#     speed held at BENCH_REBUILD_MIN, the rebuild block's minimum under
#     load, so that it lasts through fio's window), vs the
#     same reads on the same array served with no background work before
#     the reshape: >= 0.5 x.

if lifecycle RESHAPE; then
echo "== reshape: RAID 5 3 -> 4 members (chunk 512 KiB) on $MEMBER members, idle vs a plain program (tests/tools/reshape_bound.c); 4 KiB randread QD32 (NBD) during it vs without (issue 18)"
RS_TOOL=$BUILD/tests/tools/reshape_start
make -s "$RS_TOOL" >>"$log" 2>&1 || RS_TOOL=
rs_bound_bin=$dir/reshape_bound
cc -O2 -std=gnu11 -o "$rs_bound_bin" "$(dirname "${BASH_SOURCE[0]}")/../tests/tools/reshape_bound.c" \
    -lisal 2>>"$log" || rs_bound_bin=
D3="$dir/d0 $dir/d1 $dir/d2"
# rs_create: a fresh RAID 5 of d0..d2 named rs, d3 wiped (the new member)
rs_create() {
    # shellcheck disable=SC2086
    "$URAID" create --level=5 --raid-devices=3 --chunk=512 --bitmap=none --assume-clean \
        --force --run --name=rs $D3 >/dev/null 2>>"$log" && wipe "$dir/d3"
}
# ex_field DEV KEY: a field of uraid examine --json
ex_field() {
    "$URAID" examine --json "$1" 2>>"$log" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)[0][sys.argv[1]])' "$2" 2>>"$log"
}
# rs_lcm A B
rs_lcm() { local a=$1 b=$2 t x=$1 y=$2; while [ "$b" -gt 0 ]; do t=$b; b=$((a % b)); a=$t; done; echo $(( x * y / a )); }

if [ -z "$RS_TOOL" ] || [ -z "$rs_bound_bin" ]; then
    echo "reshape block: tests/tools/reshape_start or reshape_bound did not build (see $log)"
else
# idle: the engine's rate (old array bytes / the time reshape_start took),
# then the bound on the same members with the same offsets and step
rs_rate=0 rs_bound=0 rs_rounds="" rs_brounds=""
for _ in $(seq "$(( REPEAT > 2 ? REPEAT : 2 ))"); do
    rs_create || { echo "reshape: create failed (see $log)"; break; }
    chunk=$(ex_field "$dir/d0" chunk_bytes)
    off_old=$(ex_field "$dir/d0" data_offset_bytes)
    used=$(ex_field "$dir/d0" used_dev_bytes)
    # shellcheck disable=SC2086
    out=$("$RS_TOOL" --raid-devices=4 --speed-kib="$SYNC_MAX" --stop-at=999999999999 \
        --add="$dir/d3" $D3 2>>"$log")
    t=$(sed -n 's/^ended after \([0-9.]*\) s$/\1/p' <<<"$out")
    [ -n "$t" ] || { echo "reshape: the idle reshape did not finish (see $log)"; break; }
    off_new=$(ex_field "$dir/d0" data_offset_bytes)
    # the job lays out the whole new array (3 x used: its last third is
    # zeroes, read from nowhere), as the bound does
    r=$(fdiv "$(( 3 * used ))" "$t")
    rs_rounds="$rs_rounds $(( r >> 20 ))"
    [ "$r" -gt "$rs_rate" ] && rs_rate=$r
    step=$(rs_lcm $(( 2 * chunk )) $(( 3 * chunk )))
    # shellcheck disable=SC2086
    b=$("$rs_bound_bin" --old-disks=3 --chunk="$chunk" --offset="$off_old" \
        --new-offset="$off_new" --size="$used" --step="$step" $D3 "$dir/d3" 2>>"$log")
    b=${b%% *}
    rs_brounds="$rs_brounds $(( ${b:-0} >> 20 ))"
    [ "${b:-0}" -gt "$rs_bound" ] && rs_bound=$b
done
line "RAID 5 3 -> 4 reshape, idle (new array laid out)" "$rs_rate" \
    "bound: reshape_bound, same I/O, same members" "$rs_bound" bw 0.80 \
    "(reshape rounds:$rs_rounds MiB/s; bound rounds:$rs_brounds MiB/s; step $(( ${step:-0} >> 10 )) KiB)"

# under load: the same reads before the reshape (3 members, no background
# work), then while the server goes on with it
sock=$dir/rs.sock
fg_idle=0 fg_load=0 rs_note="" rs_moved=""
for _ in $(seq "$REPEAT"); do
    rs_create || break
    # shellcheck disable=SC2086
    serve rs $D3 || break
    v=$(fio_nbd_once iops "$sock" --rw=randread --bs=4k --iodepth=32)
    [ "$v" -gt "$fg_idle" ] && fg_idle=$v
    unserve rs
    # shellcheck disable=SC2086
    "$RS_TOOL" --raid-devices=4 --speed-kib=1000 --stop-at=1 --add="$dir/d3" $D3 \
        >>"$log" 2>&1 || { echo "reshape: reshape_start failed (see $log)"; break; }
    n=$(( $(count_of rs 'reshape done') + 1 ))
    # shellcheck disable=SC2086
    serve rs $D3 "$dir/d3" || break
    # at REBUILD_MIN whether clients are busy or not, so that it runs through
    # fio's window (unthrottled it would end before); full speed after
    "$URAID" speed --min="$REBUILD_MIN" --max="$REBUILD_MIN" rs >/dev/null 2>>"$log"
    # the server resumes it by itself: fio starts once it runs
    for _ in $(seq 200); do
        [ "$(status rs 'd["last_background"]["running"] and d["last_background"]["kind"] == "reshape"')" = True ] && break
        sleep 0.05
    done
    p1=$(status rs 'd["last_background"]["done_bytes"]')
    v=$(fio_nbd_once iops "$sock" --rw=randread --bs=4k --iodepth=32)
    p2=$(status rs 'd["last_background"]["done_bytes"]')
    still=$(status rs 'd["last_background"]["running"] and d["last_background"]["kind"] == "reshape"')
    rs_moved="$rs_moved $(( (${p2:-0} - ${p1:-0}) >> 20 ))"
    # a round counts only when the reshape ran through fio's whole window
    if [ "$still" = True ] && [ "${p2:-0}" -gt "${p1:-0}" ]; then
        [ "$v" -gt "$fg_load" ] && fg_load=$v
    else
        rs_note="(a round where the reshape did not run through fio's window was left out: a larger BENCH_MEMBER or a lower BENCH_REBUILD_MIN)"
    fi
    "$URAID" speed --min="$REBUILD_MIN" --max="$SYNC_MAX" rs >/dev/null 2>>"$log"
    stamp_of rs 'reshape done' "$n" >/dev/null ||
        echo "the reshape on rs did not complete (see $dir/rs.err)" >&2
    unserve rs
done
line "4 KiB randread QD32 (NBD) during the reshape" "$fg_load" "the same, no background work" \
    "$fg_idle" iops 0.50 "(MiB per member reshaped during fio's run:$rs_moved) $rs_note"
fi
fi
