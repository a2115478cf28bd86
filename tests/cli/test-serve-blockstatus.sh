#!/bin/bash
# NBD block status (base:allocation) through uraid serve: sparse image files
# (truncate) as members of RAID 0, 1, 5 and 10 arrays; a few seeded ranges
# written (4 KiB aligned: a member block is written whole or not at all);
# then `nbdinfo --map` and `qemu-img map` show holes exactly outside the
# written ranges, and `nbdcopy` of the export (which skips the holes) gives
# the bytes written and zeroes elsewhere. The RAID 5 array is then served
# without one member: every chunk whose data lived there (read from parity
# now) is data, the rest as before. The protocol's cases on the wire
# (refusals, REQ_ONE, error chunks, structured reads) run against the RAID 5
# (tests/cli/nbd_blockstatus.py).
#   SEED=N to repeat a run (printed).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
need python3 nbdinfo nbdcopy qemu-img
SEED=${SEED:-$((RANDOM * 32768 + RANDOM))}
echo "test-serve-blockstatus: seed $SEED (rerun: SEED=$SEED $0)"
work_dir blockstatus
bs=$here/nbd_blockstatus.py

# maps NAME [DEGRADED-ARGS]: the export's map from nbdinfo and qemu-img
# against the expected one, and its bytes through nbdcopy against the reference
maps() {
    local name=$1; shift
    local sock=$work/$name.sock uri="nbd+unix:///?socket=$work/$name.sock" size
    size=$(nbdinfo --size "$uri")
    python3 "$bs" expect "$size" "$work/$name.spans" "$@" >"$work/$name.want"
    nbdinfo --map "$uri" >"$work/$name.nbdinfo" 2>&1
    python3 "$bs" nbdinfo "$work/$name.nbdinfo" >"$work/$name.got"
    check "$name: nbdinfo --map shows holes exactly outside the written ranges${1:+ (degraded)}" \
        diff "$work/$name.want" "$work/$name.got" || head -20 "$work/$name.nbdinfo"
    qemu-img map --output=json -f raw "$uri" >"$work/$name.qemu" 2>&1
    python3 "$bs" qemu "$work/$name.qemu" >"$work/$name.qgot" 2>&1
    check "$name: qemu-img map agrees" diff "$work/$name.want" "$work/$name.qgot" ||
        head -c 2000 "$work/$name.qemu"
    rm -f "$work/$name.copy"
    nbdcopy "$uri" "$work/$name.copy"
    check "$name: nbdcopy of the export gives the bytes written" \
        cmp "$work/$name.ref" "$work/$name.copy"
    check "$name: holes = $(grep -c hole "$work/$name.want"), data = $(grep -c data \
        "$work/$name.want")" grep -q hole "$work/$name.want"
    rm -f "$work/$name.copy"
}

# run_level NAME LEVEL N CREATE-OPTIONS...
run_level() {
    local name=$1 level=$2 n=$3; shift 3
    local m=() i
    for ((i = 0; i < n; i++)); do truncate -s 8M "$work/$name$i.img"; m+=("$work/$name$i.img"); done
    "$URAID" create --level="$level" --raid-devices="$n" --name="$name" --assume-clean \
        --bitmap=none "$@" "${m[@]}" >/dev/null 2>"$work/$name.create" ||
        { cat "$work/$name.create"; fails=$((fails + 1)); return 1; }
    serve_bg "$work" "$name" "${m[@]}" || { fails=$((fails + 1)); return 1; }
    python3 "$bs" write "$work/$name.sock" "$SEED" 6 262144 4096 "$work/$name.ref" \
        >"$work/$name.spans"
    check "$name: seeded ranges written" test -s "$work/$name.spans"
    maps "$name"
    if [ "$name" = r5 ]; then
        check "r5: the protocol's block status cases" python3 "$bs" wire "$work/$name.sock"
    fi
    check "$name: stopped" stop_served "$name"
    members=("${m[@]}")
}

run_level r0 0 3 --chunk=64
run_level r1 1 2
run_level r10 10 4 --chunk=64
run_level r5 5 3 --chunk=64 --layout=left-symmetric

# RAID 5 without its member in slot 1 (--run: started degraded on purpose):
# its chunks come from parity (data)
serve_bg "$work" r5 --run "${members[0]}" "${members[2]}" || fails=$((fails + 1))
check "r5 degraded: served with 2 of 3 members" \
    bash -c "nbdinfo '$(printf 'nbd+unix:///?socket=%s' "$work/r5.sock")' | grep -q base:allocation"
maps r5 3 65536 1
check "r5 degraded: stopped" stop_served r5

echo "$fails failed"
[ $fails -eq 0 ]
