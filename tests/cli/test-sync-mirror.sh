#!/bin/bash
# Background work on served RAID 1 and RAID 10 arrays (RAID 1 with 2 and 3
# members, RAID 10 n2, f2 and o2 on 4): pages of a non-first copy corrupted on
# a member file are counted by check exactly as md's mismatch_cnt counts them
# (64 KiB resync blocks, per differing copy); repair fixes them from the first
# copy, a second check finds 0 and the data reads back as written. A member
# failed while fio writes and verifies through NBD is rebuilt onto a spare
# added with `uraid add`; the rebuild survives a restart (recovery_offset in
# member sectors). A RAID 1 killed while active resyncs at the next start; a
# RAID 10 resync stopped half-way goes on from resync_offset (array sectors,
# as md keeps it for RAID 10).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need nbdinfo nbdcopy qemu-img fio python3
work_dir syncm
SEED=${SEED:-20261130}
echo "seed $SEED, work in $work"
serve() { serve_bg "$work" "$@"; }   # serve NAME ARGS...
stop() { stop_served "$1"; }
# members NAME N SIZE-MiB: zeroed image files in $m
members() {
    m=()
    for i in $(seq 0 $(($2 - 1))); do
        rm -f "$work/$1.$i"; truncate -s "$3M" "$work/$1.$i"; m+=("$work/$1.$i")
    done
}
# pattern FILE BYTES: seeded random data
pattern() {
    randfile "$SEED" "$2" "$1"
}
field() { "$URAID" examine "$1" | sed -n "s/ *$2 : \([0-9]*\) sectors.*/\1/p"; }
# corrupt FILE MEMBER-SECTOR: 4 KiB of junk there (relative to the data offset)
corrupt() {
    local off; off=$(field "$1" "Data Offset")
    head -c 4096 /dev/urandom | dd of="$1" bs=512 seek=$((off + $2)) conv=notrunc status=none
}

# ---- check counts, repair fixes, a second check finds 0 ----
# case NAME LEVEL N LAYOUT
for c in "r1a 1 2 -" "r1b 1 3 -" "n2 10 4 n2" "f2 10 4 f2" "o2 10 4 o2"; do
    set -- $c
    name=$1 level=$2 n=$3 layout=$4
    members "$name" "$n" 24
    opts=(--level="$level" --raid-devices="$n" --assume-clean --name="$name")
    [ "$layout" != - ] && opts+=(--layout="$layout" --chunk=64)
    "$URAID" create "${opts[@]}" "${m[@]}" >/dev/null
    serve "$name" "${m[@]}"
    uri="nbd+unix:///?socket=$work/$name.sock"
    size=$(nbdinfo --size "$uri")
    pattern "$work/data" "$size"
    nbdcopy "$work/data" "$uri"
    out=$("$URAID" check --wait "$name"); rc=$?
    check "$name: a fresh check finds 0 mismatches ($out)" \
        bash -c "[ $rc -eq 0 ] && grep -q 'mismatch_cnt 0\$' <<<\"\$0\"" "$out"
    # RAID 10 checks run over the array's sectors (as md's), RAID 1 over a member's
    unit="per member"; [ "$level" = 10 ] && unit="of the array"
    check "$name: its size is counted $unit" grep -q "MiB $unit," <<<"$out"
    stop "$name"
    # Pages of copies other than the first, in distinct 64 KiB blocks (md
    # counts each block once per copy that differs there): RAID 1 and n2
    # slot 1 (always the second copy); o2 odd chunk rows of slot 1 (the
    # shifted copies); f2 the end of slot 1 (the far half).
    used=$(field "${m[1]}" "Avail Dev Size")
    case $layout in
        f2) at=$((used - 128 * 2 + 16)) ; step=-$((128 * 3)) ;;
        o2) at=$((128 + 40)) ; step=256 ;;
        *)  at=1000 ; step=$((128 * 5)) ;;
    esac
    expect=0
    for i in 0 1 2; do corrupt "${m[1]}" $((at + i * step)); expect=$((expect + 128)); done
    if [ "$n" = 3 ]; then corrupt "${m[2]}" "$at"; expect=$((expect + 128)); fi
    serve "$name" "${m[@]}"
    out=$("$URAID" check --wait "$name"); rc=$?
    check "$name: check counts $expect mismatched sectors and exits 1 ($out)" \
        bash -c "[ $rc -eq 1 ] && grep -q 'mismatch_cnt $expect\$' <<<\"\$0\"" "$out"
    check "$name: repair completes" bash -c "'$URAID' repair --wait $name >/dev/null"
    out=$("$URAID" check --wait "$name"); rc=$?
    check "$name: a second check finds 0 mismatches ($out)" \
        bash -c "[ $rc -eq 0 ] && grep -q 'mismatch_cnt 0\$' <<<\"\$0\"" "$out"
    check "$name: the data reads back as written" qemu-img compare -q -f raw -F raw "$work/data" "$uri"
    check "$name: stopped with status 0" stop "$name"
done

# ---- a member fails under fio, uraid add brings a spare, the rebuild completes ----
for c in "rb1 1 2 -" "rb10 10 4 n2" "rbf 10 4 f2"; do
    set -- $c
    name=$1 level=$2 n=$3 layout=$4
    members "$name" $((n + 1)) 24
    spare=${m[$n]}
    m=("${m[@]:0:$n}")
    opts=(--level="$level" --raid-devices="$n" --assume-clean --name="$name")
    [ "$layout" != - ] && opts+=(--layout="$layout" --chunk=64)
    "$URAID" create "${opts[@]}" "${m[@]}" >/dev/null
    serve "$name" --speed-min=3000 --speed-max=4000 "${m[@]}"
    uri="nbd+unix:///?socket=$work/$name.sock"
    size=$(nbdinfo --size "$uri")
    w0=$(writes_of "$name")
    (cd "$work" && fio --ioengine=nbd --uri="$uri" --rw=randrw --bssplit=4k/50:64k/50 \
        --iodepth=16 --verify=crc32c --verify_fatal=1 --verify_state_save=0 \
        --randseed="$SEED" --size=$((size / 1048576))M --name=during --output="$work/fio.$name" \
        >/dev/null 2>&1) &
    fpid=$!
    status_until "$name" 60 "sum(m['writes'] for m in d['members']) > $w0"   # fio is writing
    "$URAID" fail "${m[1]}" >/dev/null
    "$URAID" remove "${m[1]}" >/dev/null
    check "$name: uraid add of a new device" bash -c "'$URAID' add $name '$spare' >/dev/null"
    status_until "$name" 30 'd["background"] and d["background"][0]["kind"] == "recovery"'
    check "$name: the rebuild runs onto it" \
        bash -c "'$URAID' status $name | grep -q 'recovery \['"
    check "$name: status shows the spare rebuilding slot 1" \
        bash -c "'$URAID' status $name | grep -qE '^ +1  rebuilding .*$name.$n'"
    wait $fpid
    check "$name: fio verify through NBD while the rebuild runs" grep -q "err= 0" "$work/fio.$name"
    if [ "$name" = rb10 ]; then
        # stop mid-rebuild (fio is over: the rebuild now runs at the maximum, 4 MiB/s)
        if grep -q "recovery done" "$work/$name.err"; then
            echo "skip: the rebuild was over before the restart"
        else
            check "$name: stopped during the rebuild" stop $name
            off=$(field "$spare" "Recovery Offset")
            check "$name: the spare keeps recovery_offset in member sectors ($off)" \
                bash -c "[ -n '$off' ] && [ '$off' -gt 0 ] && [ '$off' -lt 49152 ]"
            serve $name "${m[0]}" "${m[2]}" "${m[3]}" "$spare"
            check "$name: after a restart the rebuild goes on from there" \
                log_more $name "rebuilding slot 1 onto it, from member sector [1-9]" 0
        fi
    fi
    for _ in $(seq 300); do grep -q "recovery done" "$work/$name.err" && break; sleep 0.1; done
    check "$name: the rebuild completes" grep -q "recovery done" "$work/$name.err"
    out=$("$URAID" check --wait $name); rc=$?
    check "$name: then a check finds 0 mismatches ($out)" test $rc -eq 0
    check "$name: stopped" stop $name
    check "$name: the new device holds slot 1" \
        bash -c "'$URAID' examine '$spare' | grep -q 'Device Role : Active device 1'"
done

# ---- resync: by itself after an unclean stop; continued from resync_offset ----
members uc 2 24
"$URAID" create --level=1 --raid-devices=2 --assume-clean --name=uc "${m[@]}" >/dev/null
serve uc "${m[@]}"
uri="nbd+unix:///?socket=$work/uc.sock"
pattern "$work/data" "$(nbdinfo --size "$uri")"
nbdcopy "$work/data" "$uri"
kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
corrupt "${m[1]}" 5000     # what a write in flight at the crash may leave
check "uc: killed while active: the superblock says active" \
    bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : active'"
serve uc "${m[@]}"
for _ in $(seq 100); do grep -q "resync done" "$work/uc.err" && break; sleep 0.1; done
check "uc: a resync runs by itself at start and completes" grep -q "resync done" "$work/uc.err"
out=$("$URAID" check --wait uc); rc=$?
check "uc: then a check finds 0 mismatches ($out)" test $rc -eq 0
check "uc: the data reads back as written" qemu-img compare -q -f raw -F raw "$work/data" "$uri"
check "uc: stopped" stop uc
check "uc: and the array is clean" bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : clean'"

# random contents (zeroed members would be born clean): the copies differ
m=()
for i in 0 1 2 3; do pattern "$work/rs.$i" $((24 << 20)); m+=("$work/rs.$i"); SEED=$((SEED + 1)); done
"$URAID" create --level=10 --layout=n2 --chunk=64 --raid-devices=4 --name=rs "${m[@]}" >/dev/null
check "rs: created dirty (resync needed)" bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : active'"
serve rs --speed-max=4000 "${m[@]}"
# under way (a fixed 1.5 s can find it not started on a loaded machine)
status_until rs 30 'd["background"] and d["background"][0]["done_bytes"]'
check "rs: the resync runs by itself" bash -c "'$URAID' status rs | grep -q 'resync \['"
check "rs: its progress is counted of the array" \
    bash -c "'$URAID' status rs | grep -q 'resync \[.* MiB of the array)'"
js=$("$URAID" status --json rs)
check "rs: JSON: per_member false; a rate is null (not measured yet) or above 0, with its ETA" \
    python3 -c '
import json, sys
b = json.loads(sys.argv[1])["background"][0]
assert b["per_member"] is False, b
r, e = b["rate_bytes_per_s"], b["eta_s"]
assert (r is None and e is None) or (r > 0 and e is not None and (e > 0 or b["done_bytes"] >= b["total_bytes"])), b' "$js"
check "rs: stopped half-way with status 0" stop rs
off=$(field "${m[0]}" "Resync Offset")
asz=$(( $(field "${m[0]}" "Avail Dev Size") * 2 ))
check "rs: resync_offset kept, in array sectors ($off of $asz)" \
    bash -c "[ -n '$off' ] && [ '$off' -gt 0 ] && [ '$off' -lt '$asz' ]"
starts=$(grep -c "resync started at" "$work/rs.err")
serve rs "${m[@]}"
check "rs: after a restart the resync goes on from there" \
    eval 'log_more rs "resync started at" $starts &&
          grep "resync started at" "$work/rs.err" | tail -1 | grep -q "started at [1-9]"' 
for _ in $(seq 300); do grep -q "resync done" "$work/rs.err" && break; sleep 0.1; done
check "rs: the resync completes" grep -q "resync done" "$work/rs.err"
out=$("$URAID" check --wait rs); rc=$?
check "rs: then a check finds 0 mismatches ($out)" test $rc -eq 0
check "rs: stopped" stop rs
check "rs: and the array is clean" bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : clean'"

echo "$fails failed"
[ $fails -eq 0 ]
