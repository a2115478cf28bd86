#!/bin/bash
# `uraid grow` on a degraded RAID 10, as md 6.1 / mdadm 4.2 start it
# (raid10_start_reshape; mdadm freezes a rebuild first). Served arrays of
# image files, data from a seeded random file (the seed printed), compared
# byte by byte through NBD:
#  1. near=2 on 4, slot 1 missing, a spare rebuilding it (throttled): `grow
#     --raid-devices=5 --add` stops the rebuild, its member stays in slot 1
#     recovering from 0 (mdadm --examine: feature 0x46, role 1, recovery
#     offset 0, its own new offset), the added spare takes slot 4 (0x44);
#     kill -9 half-way; served again the reshape goes on from the checkpoint
#     and ends, then slot 1 is rebuilt; the data reads back, the size is 5/4,
#     `uraid check` finds 0 mismatches, every member at the new data offset.
#  2. near=2 on 4, slot 2 missing, no spare: chunk 64 -> 32 KiB, then
#     n2 -> o2, run degraded (md adds no spare for the same count); the data
#     reads back; a spare added after rebuilds slot 2; 0 mismatches.
#  3. the same with two spares there and the frozen-spare placement of md:
#     the first spare into the empty old slot (recovering), the second into
#     the new slot.
#  4. refusals (exit 1, one line, no reshape written): too few spares;
#     slots 1 and 2 missing with three spares (the old pairs each keep a
#     copy, the new geometry's pair 1+2 would have only recovering members:
#     md would start it and lose that data).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
# uri, examine, sums, check_zero, quiet, settled, refused
. "$(dirname "$0")/lib/grow.sh"
need nbdinfo nbdcopy mdadm sha256sum cmp
work_dir grow-r10deg
SEED=${SEED:-20261203}
echo "seed $SEED, work in $work"
fails=0

status_has() { "$URAID" status "$1" | grep -q "$2"; }
# whole NAME: no background job, no slot missing (a rebuild may follow a reshape)
whole() {
    for _ in $(seq 900); do
        status_has "$1" "Background : none" && status_has "$1" "Degraded : 0 of" && return 0
        sleep 0.2
    done
    "$URAID" status "$1" | grep -E "State|Degraded|Background"
    return 1
}
# same_data NAME FILE: the export's first bytes are FILE's
same_data() {
    nbdcopy "$(uri "$1")" "$work/$1.export" &&
        cmp -n "$(stat -c %s "$2")" "$2" "$work/$1.export"
    local rc=$?
    rm -f "$work/$1.export"
    return $rc
}
# degraded_r10 X N SEED SLOT...: N 40 MiB image files $work/X0.. (in mem),
# a near=2 RAID 10 rX of the first four with SLOTs missing, served; its
# size in $bytes, written whole from SEED's random bytes ($work/X.data)
# unless SEED is -
degraded_r10() {
    local x=$1 n=$2 seed=$3 i s
    shift 3
    mem=()
    for ((i = 0; i < n; i++)); do truncate -s 40M "$work/$x$i"; mem+=("$work/$x$i"); done
    local devs=("${mem[@]:0:4}") served=()
    for s in "$@"; do devs[s]=missing; done
    for i in 0 1 2 3; do [ "${devs[i]}" = missing ] || served+=("${devs[i]}"); done
    "$URAID" create --level=10 --layout=n2 --raid-devices=4 --chunk=64 --bitmap=none \
        --assume-clean --name="r$x" --run "${devs[@]}" >/dev/null
    serve_bg "$work" "r$x" "${served[@]}" || exit 1
    bytes=$(nbdinfo --size "$(uri "r$x")")
    [ "$seed" = - ] && return 0
    randfile "$seed" "$bytes" "$work/$x.data"
    nbdcopy "$work/$x.data" "$(uri "r$x")"
}

# ---- 1. near=2 4 -> 5 with slot 1 missing, its rebuild running; kill -9 ----
degraded_r10 a 6 "$SEED" 1
old_bytes=$bytes
check "the data written to the degraded array ($old_bytes bytes)" same_data ra "$work/a.data"
"$URAID" tune ra --speed-min=200 --speed-max=400 >/dev/null
"$URAID" add ra "${mem[1]}" >/dev/null
sleep 1
check "a spare rebuilds slot 1 (throttled)" status_has ra "Background : recovery"
out=$("$URAID" grow ra --raid-devices=5 --add "${mem[4]}" 2>&1); rc=$?
check "grow --raid-devices=5 on the degraded array (rc $rc): $(tail -1 <<<"$out")" test $rc -eq 0
check "  the rebuild stopped (md's freeze), the reshape runs" status_has ra "Background : reshape"
ex1=$(mdadm --examine "${mem[1]}" 2>&1)
ex4=$(mdadm --examine "${mem[4]}" 2>&1)
check "  examine: the rebuilding member stays in slot 1, recovering from 0, new offset 1920" \
    eval 'grep -q "Feature Map : 0x46" <<<"$ex1" && grep -q "Device Role : Active device 1" <<<"$ex1" &&
          grep -q "Recovery Offset : 0 sectors" <<<"$ex1" && grep -q "New Offset : 1920 sectors" <<<"$ex1"'
check "  examine: the added spare takes slot 4 (0x44, delta 1)" \
    eval 'grep -q "Feature Map : 0x44" <<<"$ex4" && grep -q "Device Role : Active device 4" <<<"$ex4" &&
          grep -q "Delta Devices : 1" <<<"$ex4"'
sleep 2
check "  the data reads back during the reshape" same_data ra "$work/a.data"
check "  still reshaping then" status_has ra "Background : reshape"
kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
pos=$(examine "${mem[0]}" "Reshape pos'n")
echo "  killed at $pos"
check "killed in mid-reshape (a checkpoint on disk)" test -n "$pos"
serve_bg "$work" ra "${mem[@]:0:5}" || exit 1
"$URAID" tune ra --speed-max=200000 >/dev/null
check "served again, the reshape goes on and ends, then slot 1 is rebuilt" whole ra
check "  the log says the reshape was continued" grep -q "reshape done" "$work/ra.err"
check "  the data reads back" same_data ra "$work/a.data"
check "  0 mismatches" check_zero ra
new_bytes=$(nbdinfo --size "$(uri ra)")
check "  the array is 5/4 of the size ($old_bytes -> $new_bytes)" \
    test "$new_bytes" -eq $((old_bytes * 5 / 4))
stop_served ra
for i in 0 1 2 3 4; do
    check "  member $i: slot $i, no reshape, data offset 1920" \
        test "$(examine "${mem[$i]}" "Device Role")|$(examine "${mem[$i]}" "Data Offset")|$(examine "${mem[$i]}" "Feature Map")" = \
             "Active device $i|1920 sectors|0x0"
done

# ---- 2. chunk 64 -> 32 KiB with slot 2 missing, no spare ----
degraded_r10 b 4 $((SEED + 1)) 2
out=$("$URAID" grow rb --chunk=32 2>&1); rc=$?
check "chunk 64 -> 32 KiB on the degraded array (rc $rc): $out" test $rc -eq 0
check "  done" settled rb 900
check "  examine: chunk 32K, slot 2 still missing" \
    test "$(examine "${mem[0]}" "Chunk Size")|$(examine "${mem[0]}" "Array State")" = "32K|AA.A ('A' == active, '.' == missing, 'R' == replacing)"
check "  the data reads back" same_data rb "$work/b.data"
out=$("$URAID" grow rb --layout=o2 2>&1); rc=$?
check "then n2 -> o2, still degraded (rc $rc): $out" test $rc -eq 0
check "  done" settled rb 900
check "  examine: offset=2" test "$(examine "${mem[0]}" "Layout")" = "offset=2"
check "  the data reads back" same_data rb "$work/b.data"
truncate -s 40M "$work/b2"
"$URAID" add rb "$work/b2" >/dev/null
check "  a spare added after rebuilds slot 2" whole rb
check "  the data reads back" same_data rb "$work/b.data"
check "  0 mismatches" check_zero rb
stop_served rb

# ---- 3. md's placement of frozen spares: old empty slot first, then the new ----
degraded_r10 c 6 $((SEED + 2)) 1
"$URAID" tune rc --speed-min=200 --speed-max=400 >/dev/null
out=$("$URAID" grow rc --raid-devices=5 --add "${mem[1]}" "${mem[4]}" 2>&1); rc=$?
check "grow --raid-devices=5 --add two spares (rc $rc): $(tail -1 <<<"$out")" test $rc -eq 0
check "  the first takes slot 1, recovering from 0; the second slot 4" \
    test "$(examine "${mem[1]}" "Device Role")|$(examine "${mem[1]}" "Feature Map")|$(examine "${mem[4]}" "Device Role")|$(examine "${mem[4]}" "Feature Map")" = \
         "Active device 1|0x46|Active device 4|0x44"
"$URAID" tune rc --speed-max=200000 >/dev/null
check "  it ends, slot 1 rebuilt" whole rc
check "  the data reads back" same_data rc "$work/c.data"
check "  0 mismatches" check_zero rc
stop_served rc

# ---- 4. refusals ----
degraded_r10 d 6 - 1 2
refused rd "4 -> 6 with no spare" --raid-devices=6
check "  it names the spares needed: $last_out" grep -q "need 2 spares" <<<"$last_out"
# three spares (one rebuilding slot 1, throttled): md would put them in
# slots 1, 2 (recovering) and 4, and write the new pair 1+2 to recovering
# members alone
"$URAID" tune rd --speed-min=1 --speed-max=1 >/dev/null
for i in 1 2 4; do "$URAID" add rd "${mem[$i]}" >/dev/null; done
out=$("$URAID" grow rd --raid-devices=5 2>&1); rc=$?
check "refused: 4 -> 5 leaving pair 1+2 of the new geometry without an in-sync copy (rc $rc)" \
    test $rc -eq 1
check "  in one line, md's raid10 words: $out" \
    eval 'one_line "$out" && grep -q "not enough operational mirrors" <<<"$out"'
check "  no reshape written: 4 devices, feature map 0x0" \
    test "$(examine "${mem[0]}" "Raid Devices")|$(examine "${mem[0]}" "Feature Map")|$(examine "${mem[3]}" "Feature Map")" = "4|0x0|0x0"
stop_served rd

echo "$fails failed"
[ $fails -eq 0 ]
