#!/bin/bash
# uraid replace (md's replacement, feature 0x10) on served RAID 5, 6, 1 (2 and
# 3 members) and 10 (n2, f2): the new member gets a copy of the old one's slot
# while fio writes and verifies through NBD; then it holds the slot and the
# old one is faulty. That the new member holds the right data is shown by
# failing other members (for RAID 1/10 every other copy of its data) and
# reading everything back (fio's verify pass, and the part fio did not write
# compared with what was written before). A replace stopped half-way goes on
# after a restart from its recovery_offset (RAID 5, 1, 10 f2); failing the new
# member stops it with the array whole; refusals change nothing.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need fio nbdcopy nbdinfo qemu-io qemu-img python3
work_dir replace
SEED=${SEED:-20261130}
echo "seed $SEED, work in $work"
serve() { serve_bg "$work" "$@"; }   # serve NAME ARGS...
stop() { stop_served "$1"; }
member_state() {   # member_state ARRAY PATH-SUFFIX: state and slot from status --json
    "$URAID" status --json "$1" | python3 -c '
import json, sys
for m in json.load(sys.stdin)["members"]:
    if m["device"].endswith(sys.argv[1]):
        print(m["state"], m["slot"])' "$2"
}
export -f member_state
# copied NAME BYTES: the background job (a replace) has copied BYTES per
# member (a fixed sleep found no progress on a loaded machine)
copied() { status_until "$1" 60 "d['background'] and d['background'][0]['done_bytes'] >= $2"; }
export URAID
fio_half() {   # fio_half NAME extra...: writes (and verifies) the first half, seeded
    (cd "$work" && fio --ioengine=nbd --uri="nbd+unix:///?socket=$work/$1.sock" --rw=randwrite \
        --bssplit=4k/50:64k/50 --iodepth=16 --verify=crc32c --verify_fatal=1 \
        --randseed="$SEED" --size="$half" --name=r "${@:2}" >"$work/fio.out" 2>&1)
}

# served_array NAME LEVEL DEVICES LAYOUT(-: the default) SPEED-MAX SEED [ARGS]:
# DEVICES + 1 files of 48 MiB in $m, the first DEVICES an array NAME served
# (background work at most SPEED-MAX KiB/s; ARGS to uraid serve) holding
# $work/NAME.data (seeded, $size bytes); $what names it in messages
served_array() {
    local name=$1 level=$2 ndev=$3 layout=$4 lay=()
    [ "$layout" != - ] && lay=(--layout="$layout")
    [ "$level" != 1 ] && lay+=(--chunk=64)
    what="raid$level${layout#-}/$ndev"
    m=()
    for i in $(seq 0 "$ndev"); do truncate -s 48M "$work/$name.$i"; m+=("$work/$name.$i"); done
    "$URAID" create --level="$level" --raid-devices="$ndev" "${lay[@]}" --assume-clean \
        --name="$name" "${m[@]:0:$ndev}" >/dev/null
    serve "$name" --speed-max="$5" "${@:7}" "${m[@]:0:$ndev}"
    size=$(nbdinfo --size "nbd+unix:///?socket=$work/$name.sock")
    randfile "$6" "$size" "$work/$name.data"
    nbdcopy "$work/$name.data" "nbd+unix:///?socket=$work/$name.sock"
}

# LEVEL DEVICES LAYOUT SLOTS-FAILED-AFTER: slot 1 is replaced by member DEVICES;
# then slot 1's old member is removed and the slots listed are failed, which
# for RAID 1/10 leaves the new member as the only copy of its slot's data.
for spec in "5 4 - 0" "6 4 - 0" "1 2 - 0" "1 3 - 0,2" "10 4 n2 0,2" "10 4 f2 0,2"; do
    read -r level ndev layout failed <<<"$spec"
    name=r$level${layout#-}x$ndev
    served_array $name $level $ndev $layout 15000 $((SEED + level + ndev))
    half=$((size / 2))
    fio_half $name --io_size=$((half * 2)) &
    fpid=$!
    out=$("$URAID" replace --wait "${m[1]}" "${m[$ndev]}"); rc=$?
    echo "  $out"
    check "$what: replace under fio load completes" test $rc -eq 0
    wait $fpid
    check "$what: fio verified its writes during the replace" grep -q "err= 0" "$work/fio.out"
    check "$what: the new member holds slot 1, the old one is faulty" \
        bash -c "[ \"\$(member_state $name .$ndev)\" = 'in-sync 1' ] && [ \"\$(member_state $name .1)\" = 'faulty None' ]"
    "$URAID" remove "${m[1]}" >/dev/null
    for f in ${failed//,/ }; do
        # RAID 4/5/6: slot 0 is rebuilt from the others, the new member too;
        # RAID 1/10: the new member is the last copy of what slot 1 holds
        "$URAID" fail "${m[$f]}" >/dev/null || echo "  could not fail ${m[$f]}"
    done
    fio_half $name --verify_only
    check "$what: with slots $failed failed, fio's data reads back through the new member" \
        grep -q "err= 0" "$work/fio.out"
    nbdcopy "nbd+unix:///?socket=$work/$name.sock" "$work/$name.read"
    check "$what: the half fio did not write is as it was" \
        cmp -s <(tail -c "$half" "$work/$name.read") <(tail -c "$half" "$work/$name.data")
    check "$what: stopped" stop $name
done

# a replace stopped half-way goes on after a restart, from its recovery_offset
# (LEVEL DEVICES LAYOUT SLOTS-FAILED-AFTER; slot 2 is replaced, or 1 with 2 members;
# writes land on both sides of the copy's position before the stop)
for spec in "5 4 - 3" "1 2 - 0" "10 4 f2 1,3"; do
    read -r level ndev layout failed <<<"$spec"
    h=h$level${layout#-}
    old=$((ndev > 2 ? 2 : 1))
    # slow enough to be part-way at the stop: the whole array is written
    # meanwhile (23 s at load 12: the copy went 20 MiB at 1000 KiB/s)
    served_array $h $level $ndev $layout 500 $((SEED + 9 + level)) --speed-min=200
    "$URAID" replace "${m[$old]}" "${m[$ndev]}" >/dev/null
    copied $h $((2 << 20))
    randfile $((SEED + 19 + level)) "$size" "$work/$h.data"
    nbdcopy "$work/$h.data" "nbd+unix:///?socket=$work/$h.sock"
    stop $h
    off=$("$URAID" examine "${m[$ndev]}" | sed -n 's/ *Recovery Offset : \([0-9]*\) sectors/\1/p')
    check "$what: the stopped replacement kept recovery_offset $off, part-way" \
        bash -c "[ -n '$off' ] && [ '$off' -gt 0 ] && [ '$off' -lt 98304 ] &&
                 '$URAID' examine '${m[$ndev]}' | grep -q 'Feature Map : 0x12'"
    serve $h "${m[@]:0:$((ndev + 1))}"
    for _ in $(seq 300); do grep -q "replace done" "$work/$h.err" && break; sleep 0.1; done
    check "$what: after the restart it went on from there" \
        grep -q "replacing .* in slot $old, from member sector $off" "$work/$h.err"
    check "$what: and finished" grep -q "replace done" "$work/$h.err"
    check "$what: a check then finds 0 mismatches" bash -c "'$URAID' check --wait $h >/dev/null"
    "$URAID" remove "${m[$old]}" >/dev/null
    for f in ${failed//,/ }; do "$URAID" fail "${m[$f]}" >/dev/null || echo "  could not fail ${m[$f]}"; done
    nbdcopy "nbd+unix:///?socket=$work/$h.sock" "$work/$h.read"
    check "$what: with slots $failed failed the data reads back through the new member" \
        cmp -s "$work/$h.read" "$work/$h.data"
    stop $h
done

# the old member fails during the copy (RAID 5): the new one becomes the slot's
# rebuild from where its copy got, while writes go on; and a replacement whose
# old member is gone at a restart is rebuilt the same way
m=()
for i in 0 1 2 3 4 5; do truncate -s 48M "$work/t.$i"; m+=("$work/t.$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --name=t "${m[@]:0:4}" >/dev/null
serve t --speed-max=6000 "${m[@]:0:4}"
size=$(nbdinfo --size "nbd+unix:///?socket=$work/t.sock")
randfile $((SEED + 11)) "$size" "$work/t.data"
nbdcopy "$work/t.data" "nbd+unix:///?socket=$work/t.sock"
"$URAID" replace "${m[1]}" "${m[4]}" >/dev/null
copied t $((4 << 20))     # the writes at 2 MiB below where the copy got
"$URAID" fail "${m[1]}" >/dev/null
randfile $((SEED + 12)) 4194304 "$work/t.patch"
for at in 2 30 100; do    # MiB: below and above where the copy got
    qemu-io -f raw -c "write -q -s $work/t.patch $((at << 20)) 4194304" \
        "nbd+unix:///?socket=$work/t.sock" >/dev/null
    dd if="$work/t.patch" of="$work/t.data" bs=1M seek=$at conv=notrunc status=none
done
for _ in $(seq 300); do grep -q "recovery done" "$work/t.err" && break; sleep 0.1; done
check "the old member failed mid-copy: the new one was rebuilt from where it got" \
    bash -c "grep -q 'lost its member: the rest is rebuilt onto it from member sector [1-9]' '$work/t.err' &&
             grep -q 'recovery done' '$work/t.err' && [ \"\$(member_state t .4)\" = 'in-sync 1' ]"
"$URAID" fail "${m[0]}" >/dev/null
check "with slot 0 failed too the data, the writes since included, reads back" \
    qemu-img compare -q -f raw -F raw "$work/t.data" "nbd+unix:///?socket=$work/t.sock"
stop t
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --force --name=u \
    "${m[@]:0:4}" >/dev/null 2>&1
serve u --speed-max=6000 "${m[@]:0:4}"
nbdcopy "$work/t.data" "nbd+unix:///?socket=$work/u.sock"
"$URAID" replace "${m[2]}" "${m[5]}" >/dev/null
copied u $((2 << 20))
stop u
# the old member left out on purpose (--run: it is still slot 2's active member)
serve u --run "${m[0]}" "${m[1]}" "${m[3]}" "${m[5]}"
for _ in $(seq 300); do grep -q "recovery done" "$work/u.err" && break; sleep 0.1; done
check "restarted without the old member, the replacement is rebuilt into the slot" \
    bash -c "grep -q 'recovery done' '$work/u.err' && [ \"\$(member_state u .5)\" = 'in-sync 2' ]"
check "and a check finds 0 mismatches" bash -c "'$URAID' check --wait u >/dev/null"
"$URAID" fail "${m[0]}" >/dev/null
check "with slot 0 failed the data reads back through it" \
    qemu-img compare -q -f raw -F raw "$work/t.data" "nbd+unix:///?socket=$work/u.sock"
stop u

# the new member fails during the copy: the replace stops, the array stays whole
m=()
for i in 0 1 2 3 4 5; do truncate -s 48M "$work/f.$i"; m+=("$work/f.$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --name=f "${m[@]:0:4}" >/dev/null
serve f --speed-max=4000 "${m[@]:0:4}"
"$URAID" replace "${m[0]}" "${m[4]}" >/dev/null
copied f $((1 << 20))
"$URAID" fail "${m[4]}" >/dev/null
# (the replace ends a moment after the fail: its state is waited for)
check "failing the new member stops the replace; the old one keeps the slot" \
    status_until f 30 '(lambda s: s.get(".0") == ("in-sync", 0) and s.get(".4") == ("faulty", None))(
        {m["device"][-2:]: (m["state"], m["slot"]) for m in d["members"]}) and d["degraded"] == 0'
# refusals
out=$("$URAID" replace "${m[4]}" "${m[5]}" 2>&1); rc=$?
check "a faulty member is not replaced: a refusal, exit 1 ($out)" test $rc -eq 1
"$URAID" create --level=1 --raid-devices=2 --name=other "$work/o.0" "$work/o.1" >/dev/null 2>&1 ||
    { truncate -s 48M "$work/o.0" "$work/o.1"; "$URAID" create --level=1 --raid-devices=2 --name=other "$work/o.0" "$work/o.1" >/dev/null; }
before=$(md5sum <"$work/o.0")
out=$("$URAID" replace "${m[1]}" "$work/o.0" 2>&1); rc=$?
check "a device of another array is refused without --force ($out)" \
    bash -c "[ $rc -ne 0 ] && [ \"\$(md5sum <'$work/o.0')\" = '$before' ]"
check "the array is untouched: 4 in sync, 0 degraded" \
    bash -c "[ \"\$(member_state f .1)\" = 'in-sync 1' ] && '$URAID' status --json f | grep -q '\"degraded\": 0'"
stop f
echo "$fails failed"
[ $fails -eq 0 ]
