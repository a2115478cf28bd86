#!/bin/bash
# Referee for the NBD export: uraid serve fills arrays with random data
# (nbdcopy), then serves them read-only while the guest gets both the member
# images (virtio disks, assembled read-only by the real md driver) and each
# export as a qemu NBD drive (file=nbd:unix:...). The guest reads every byte
# of each md array and of each export: the checksums must agree, with each
# other and with the data written. Levels: RAID 5, RAID 6 degraded (one
# member left out), RAID 10. One boot. Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_tmpdir || exit 1
tmp=$INTEROP_TMP
URAID=$BUILD/uraid
command -v nbdcopy >/dev/null || { echo "nbdcopy missing (make deps)"; exit 77; }
export URAID_RUN_DIR=$tmp/run
SEED=${URAID_SEED:-20261129}
echo "seed $SEED (random data from the seeded generator below)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait; rm -rf "${INTEROP_TMPDIRS[@]}"' EXIT

# serve NAME RW|RO MEMBERS...: start and wait until ready
serve() {
    local name=$1 mode=$2; shift 2
    local ro=()
    [ "$mode" = RO ] && ro=(--read-only)
    # --run: the arrays with MISSING > 0 are started degraded on purpose
    "$URAID" serve --socket="$tmp/$name.sock" --threads=1 --run "${ro[@]}" --pid-file="$tmp/$name.pid" \
        "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pids+=($!)
    for _ in $(seq 100); do [ -s "$tmp/$name.pid" ] && return 0; sleep 0.1; done
    cat "$tmp/$name.err"; return 1
}
stop() { kill -TERM "$(cat "$tmp/$1.pid")"; while [ -e "$tmp/$1.pid" ]; do sleep 0.1; done; }

# name level n missing [create args]
arrays=("r5 5 4 0 --chunk=64" "r6 6 5 1 --chunk=64 --layout=left-symmetric" "r10 10 4 0 --chunk=64 --layout=n2")
disks=() nbds=() mddevs=() names=() want=()
letters=({a..z})
k=0
for spec in "${arrays[@]}"; do
    set -- $spec
    name=$1 level=$2 n=$3 missing=$4; shift 4
    members=()
    for i in $(seq 0 $((n - 1))); do truncate -s 24M "$tmp/$name.$i"; members+=("$tmp/$name.$i"); done
    "$URAID" create --level="$level" --raid-devices="$n" --name="$name" "$@" "${members[@]}" \
        >/dev/null || exit 1
    given=("${members[@]:$missing}")
    serve "$name" RW "${given[@]}" || exit 1
    size=$(nbdinfo --size "nbd+unix:///?socket=$tmp/$name.sock")
    python3 -c '
import random, sys
r = random.Random(int(sys.argv[1]) + int(sys.argv[3]))
open(sys.argv[2], "wb").write(r.randbytes(int(sys.argv[4])))' "$SEED" "$tmp/$name.data" "$k" "$size"
    nbdcopy "$tmp/$name.data" "nbd+unix:///?socket=$tmp/$name.sock" || exit 1
    stop "$name"
    want+=("$name=$(sha256sum <"$tmp/$name.data" | cut -d' ' -f1)")
    serve "$name" RO "${given[@]}" || exit 1
    # guest devices: members first (in order), the exports after all members
    devs=""
    for m in "${given[@]}"; do
        devs="$devs /dev/vd${letters[${#disks[@]}]}"
        disks+=("$m")
    done
    mddevs+=("$devs")
    names+=("$name")
    nbds+=("ro:nbd:unix:$tmp/$name.sock")
    k=$((k + 1))
done
# one line per array: name, its md members, its NBD drive
for k in "${!names[@]}"; do
    echo "${names[$k]}:${mddevs[$k]}:/dev/vd${letters[$((${#disks[@]} + k))]}"
done >"$tmp/mdlist"

cat >"$tmp/guest.sh" <<GUEST
i=0; rc=0
while IFS=: read -r name devs nbd; do
    mdadm --assemble --readonly --run /dev/md\$i \$devs >/dev/null 2>&1 ||
        { echo "\$name: md refused to assemble"; rc=1; i=\$((i + 1)); continue; }
    a=\$(sha256sum </dev/md\$i | cut -d' ' -f1)
    b=\$(sha256sum <\$nbd | cut -d' ' -f1)
    echo "\$name md=\$a nbd=\$b size_md=\$(blockdev --getsize64 /dev/md\$i) size_nbd=\$(blockdev --getsize64 \$nbd)"
    mdadm --stop /dev/md\$i >/dev/null 2>&1
    i=\$((i + 1))
done </host/mdlist
exit \$rc
GUEST

out=$(interop_run -f "$tmp/mdlist" "$tmp/guest.sh" "${disks[@]}" "${nbds[@]}")
rc=$?
echo "$out"
fails=0
[ $rc -eq 0 ] || { echo "FAIL: guest script exit $rc"; fails=1; }
for w in "${want[@]}"; do
    name=${w%%=*} sum=${w#*=}
    line=$(grep "^$name " <<<"$out")
    if [ -n "$line" ] && grep -q "md=$sum nbd=$sum" <<<"$line" &&
       [ "$(sed 's/.*size_md=\([0-9]*\).*/\1/' <<<"$line")" = "$(sed 's/.*size_nbd=\([0-9]*\).*/\1/' <<<"$line")" ]; then
        echo "ok: $name: md and the NBD drive read the same $(sed 's/.*size_md=\([0-9]*\).*/\1/' <<<"$line") bytes, the data uraid serve wrote"
    else
        echo "FAIL: $name: expected md=nbd=$sum"; fails=$((fails + 1))
    fi
done
for spec in "${arrays[@]}"; do stop "${spec%% *}"; done
exit $fails
