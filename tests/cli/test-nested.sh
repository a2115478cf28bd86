#!/bin/bash
# Nested RAID 50 (2 groups of 3) and 60 (2 groups of 4): uraid create
# --level=50|60 --groups=2 (refusals first), serve of the member list, fio
# verify=crc32c through NBD; a member failed in one group (60: then one in
# the other group too), fio's data read back; a spare added rebuilds the
# degraded group; a restart, and everything read back again; status shows
# the stack and health follows the inner arrays; grow of the RAID 0 is
# refused and changes nothing.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need fio nbdinfo python3
work_dir nested
SEED=${SEED:-20261202}
echo "seed $SEED, work in $work"
fails=0

fio_run() {   # fio_run NAME extra...: seeded random writes verified with crc32c
    (cd "$work" && fio --ioengine=nbd --uri="nbd+unix:///?socket=$work/$1.sock" --rw=randwrite \
        --bssplit=4k/50:64k/30:256k/20 --iodepth=16 --verify=crc32c --verify_fatal=1 \
        --randseed="$SEED" --size=100% --io_size=24M --name=r "${@:2}" >"$work/fio.out" 2>&1)
}
refused() { [ "$1" -ne 0 ] && grep -q -- "$2" <<<"$3"; }   # refused RC PATTERN OUTPUT
health() { "$URAID" status --test "$1" >/dev/null 2>&1; echo $?; }

# refusals: nothing written
for i in 0 1 2 3 4 5 6 7 8; do truncate -s 48M "$work/m$i"; done
m=("$work"/m{0..8})
out=$("$URAID" create --level=50 --groups=2 --chunk=64K "${m[@]:0:5}" 2>&1); rc=$?
check "5 members in 2 groups refused" refused $rc 'do not split' "$out"
out=$("$URAID" create --level=60 --groups=2 --chunk=64K "${m[@]:0:6}" 2>&1); rc=$?
check "RAID 60 groups of 3 refused" refused $rc 'needs at least' "$out"
out=$("$URAID" create --level=50 --chunk=64K "${m[@]:0:6}" 2>&1); rc=$?
check "RAID 50 without --groups refused" refused $rc '--groups' "$out"
check "nothing was written by the refusals" bash -c "! '$URAID' examine '${m[0]}' >/dev/null 2>&1"
out=$("$URAID" create --level=50 --groups=2 --chunk=64K --name=d --dry-run "${m[@]:0:6}")
check "dry run shows inner and outer sizes" refused 1 'outer: Would create raid0 .* usable' "$out"
check "and writes nothing" bash -c "! '$URAID' examine '${m[0]}' >/dev/null 2>&1"

for spec in "5 6" "6 8"; do
    read -r level n <<<"$spec"
    name=r${level}0
    per=$((n / 2))
    for i in $(seq 0 $n); do truncate -s 48M "$work/$name.$i"; done
    m=()
    for i in $(seq 0 $n); do m+=("$work/$name.$i"); done
    spare=${m[$n]}
    check "$name: created" bash -c "'$URAID' create --level=${level}0 --groups=2 --chunk=64K \
        --name=$name ${m[*]:0:$n} >/dev/null"
    check "$name: the inner arrays are $name-0 and $name-1" \
        bash -c "'$URAID' examine '${m[0]}' | grep -q 'Name : .*$name-0' &&
                 '$URAID' examine '${m[$per]}' | grep -q 'Name : .*$name-1'"
    if [ $level = 5 ]; then
        # a stray disk of another array among the members: not nested, plain
        # assembly's message (not a failed look for a RAID 0 on its data)
        truncate -s 48M "$work/stray0" "$work/stray1"
        "$URAID" create --level=1 --raid-devices=2 --name=stray --assume-clean \
            "$work/stray0" "$work/stray1" >/dev/null 2>&1
        out=$(timeout 60 "$URAID" serve --socket="$work/stray.sock" \
            "${m[@]:0:$n}" "$work/stray0" 2>&1); rc=$?
        check "$name: a stray disk among its members: plain assembly's refusal" \
            refused $rc 'belongs to another array' "$out"
    fi
    serve_bg "$work" $name "${m[@]:0:$n}" || { echo "FAIL: $name: serve"; fails=$((fails + 1)); continue; }
    size=$(nbdinfo --size "nbd+unix:///?socket=$work/$name.sock")
    check "$name: exported as the RAID 0 over the inner arrays ($size bytes)" \
        bash -c "'$URAID' status $name | grep -q 'Raid Level : raid0'"
    fio_run $name
    check "$name: fio wrote and verified" grep -q "err= 0" "$work/fio.out"
    st=$("$URAID" status $name)
    check "$name: status shows the stack" \
        bash -c "grep -c 'Inner array' <<<'$st' | grep -qx 2 && grep -q 'Raid Level : raid$level' <<<'$st'"
    # the RAID 0's members are arrays: no grow of it (a reshape writes members directly)
    out=$("$URAID" grow $name --chunk=128K 2>&1); rc=$?
    check "$name: grow --chunk of the RAID 0 refused" refused $rc 'nested' "$out"
    out=$("$URAID" grow $name --level=5 2>&1); rc=$?
    check "$name: grow --level of the RAID 0 refused" refused $rc 'nested' "$out"
    check "$name: still a RAID 0 of 2" \
        bash -c "'$URAID' status $name | grep -q 'Raid Level : raid0'"
    fio_run $name --verify_only
    check "$name: fio's data unchanged by the refused grows" grep -q "err= 0" "$work/fio.out"

    "$URAID" fail "${m[1]}" >/dev/null
    check "$name: a member failed in group 0: health degraded" test "$(health $name)" = 1
    fio_run $name --verify_only
    check "$name: fio's data reads back with group 0 degraded" grep -q "err= 0" "$work/fio.out"
    if [ $level = 6 ]; then
        "$URAID" fail "${m[$((per + 2))]}" >/dev/null
        "$URAID" fail "${m[0]}" >/dev/null
        fio_run $name --verify_only
        check "$name: and with two failed in group 0 and one in group 1" grep -q "err= 0" "$work/fio.out"
    fi
    "$URAID" add $name "$spare" >/dev/null
    # group 0 rebuilt: RAID 50 whole again; RAID 60 with one slot of each group missing
    want=0; [ $level = 6 ] && want=1
    for _ in $(seq 600); do
        [ "$("$URAID" status $name | grep -c "Degraded : $want of $per")" = 2 ] && break
        sleep 0.1
    done
    if [ $level = 5 ]; then
        check "$name: the spare rebuilt group 0, health ok" test "$(health $name)" = 0
    else
        check "$name: the spare rebuilt one slot of group 0" \
            bash -c "'$URAID' status $name | grep -q 'Degraded : 1 of $per'"
    fi
    fio_run $name --verify_only
    check "$name: fio's data reads back after the rebuild" grep -q "err= 0" "$work/fio.out"
    check "$name: stopped" stop_served $name
    serve_bg "$work" $name "${m[@]}" || { echo "FAIL: $name: restart"; fails=$((fails + 1)); continue; }
    fio_run $name --verify_only
    check "$name: after a restart fio's data reads back" grep -q "err= 0" "$work/fio.out"
    check "$name: stopped again" stop_served $name
done
echo "$fails failed"
[ $fails -eq 0 ]
