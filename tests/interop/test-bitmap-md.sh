#!/bin/bash
# Referee for the write-intent bitmap, both ways, in one boot of the real md
# driver (reference/md-format.md §2.5):
#  F  uraid serves a RAID 5 with a bitmap (zeroed members, in sync, bits
#     clear), fio writes a quarter of it and uraid is killed with SIGKILL:
#     the bits it set are on the members; md assembles the dirty array,
#     resyncs from the bitmap, and its check finds mismatch_cnt 0;
#  G  md creates a RAID 5 with a bitmap, writes data into a few chunks and
#     the guest is reset without stopping the array (sysrq b): uraid
#     assembles it dirty, its resync visits only the chunks md's bits name,
#     its check finds 0 mismatches, and the data md wrote reads back;
#  H  a member of a uraid RAID 5 with a bitmap leaves, data is written, it
#     is re-added (feature 0x80) and uraid stops half-way through the
#     bitmap-guided rebuild: md takes it up from recovery_offset, and the
#     array is whole, consistent and holds the data;
#  I  the same with a RAID 10 (n2, 4 members).
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_serving 20261129
need fio nbdinfo nbdcopy qemu-io
dirty_bits() { "$URAID" examine "$1" | sed -n 's/.*Bitmap : .*, \([0-9]*\) dirty.*/\1/p'; }

# F: uraid is killed in the middle of writes
F=()
for i in 0 1 2 3; do truncate -s 40M "$tmp/f$i"; F+=("$tmp/f$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --bitmap=internal --bitmap-chunk=256 \
    --assume-clean --name=f "${F[@]}" >/dev/null
serve f "${F[@]}"
size_f=$(( $(nbdinfo --size "nbd+unix:///?socket=$tmp/f.sock") / 4 ))
(cd "$tmp" && fio --ioengine=nbd --uri="nbd+unix:///?socket=$tmp/f.sock" --rw=randwrite \
    --bssplit=4k/50:16k/25:64k/25 --iodepth=16 --randseed="$SEED" --size="$size_f" \
    --time_based --runtime=30 --name=f >"$tmp/fio.out" 2>&1) &
fpid=$!
# fio's writes have set bits and marked the array active on disk (a fixed
# 2 s can pass before fio writes on a loaded machine)
status_until f 60 'not d["clean"] and d["bitmap"]["dirty_bits"] > 0'
kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
wait $fpid
bits_f=$(dirty_bits "${F[0]}")
check "F: uraid was killed with $bits_f bitmap bits set, the array dirty" \
    bash -c "[ '${bits_f:-0}' -gt 0 ] && '$URAID' examine '${F[0]}' | grep -q 'State : active'"

# H, I: re-add, rebuild stopped half-way. readd LABEL NAME SEED LO HI
# CREATE-ARGS...: 4 members (in $M), member 2 leaves, 8 MiB are written at
# 8 MiB, it is re-added, and uraid is stopped half-way through the rebuild,
# whose recovery_offset must lie in LO..HI (the members' part of the write)
readd() {
    local label=$1 name=$2 seed=$3 lo=$4 hi=$5 uri size out off
    shift 5
    M=()
    for i in 0 1 2 3; do truncate -s 24M "$tmp/$name$i"; M+=("$tmp/$name$i"); done
    "$URAID" create "$@" --raid-devices=4 --chunk=64 --bitmap=internal --bitmap-chunk=256 \
        --delay=1 --assume-clean --name="$name" "${M[@]}" >/dev/null
    serve "$name" --speed-max=1000 "${M[@]}"
    uri="nbd+unix:///?socket=$tmp/$name.sock"
    size=$(nbdinfo --size "$uri")
    randfile "$seed" "$size" "$tmp/$name.data"
    nbdcopy "$tmp/$name.data" "$uri"
    # two sweeps (--delay=1) and the bits of the full write are clear
    for _ in $(seq 200); do
        "$URAID" status --json "$name" | grep -q '"dirty_bits": 0' && break
        sleep 0.1
    done
    "$URAID" fail "${M[2]}" >/dev/null && "$URAID" remove "${M[2]}" >/dev/null
    # rebuilt at 1000 KiB/s (what the bitmap leaves out costs no time): once
    # it has rebuilt anything it is inside the chunks written (2.7 s of them)
    randfile $((seed + 1)) $((8 << 20)) "$tmp/$name.patch"
    qemu-io -f raw -c "write -q -s $tmp/$name.patch $((8 << 20)) $((8 << 20))" "$uri" >/dev/null
    check "$label: 8 MiB written while the member was away" test $? -eq 0
    dd if="$tmp/$name.patch" of="$tmp/$name.data" bs=1M seek=8 conv=notrunc status=none
    out=$("$URAID" add "$name" "${M[2]}")
    check "$label: the member is re-added ($out)" grep -q "re-added" <<<"$out"
    status_until "$name" 30 'd["background"] and
        d["background"][0]["done_bytes"] > d["background"][0]["skipped_bytes"]'
    stop "$name"
    off=$("$URAID" examine "${M[2]}" | sed -n 's/ *Recovery Offset : \([0-9]*\) sectors/\1/p')
    check "$label: uraid stopped the re-add rebuild at recovery_offset $off, in the chunks written" \
        bash -c "[ -n '$off' ] && [ '$off' -gt $lo ] && [ '$off' -lt $hi ]"
}
# RAID 5: 8 MiB at 8 MiB are 2.7 MiB of each member from 2.7 MiB on
readd H h $((SEED + 8)) 4096 12288 --level=5
H=("${M[@]}")
# RAID 10 n2: each member holds half of it, 4 MiB from 4 MiB on
readd I i $((SEED + 10)) 8192 16384 --level=10 --layout=n2
I=("${M[@]}")

# G: md's disks, zeroed; the data md writes, from the seed
G=()
for i in 0 1 2 3; do truncate -s 40M "$tmp/g$i"; G+=("$tmp/g$i"); done
randfile $((SEED + 7)) $((4 << 20)) "$tmp/g.data"

cat >"$tmp/guest.sh" <<'GUEST'
rc=0
wait_idle() { while [ "$(cat /sys/block/$1/md/sync_action)" != idle ]; do sleep 0.2; done; }
echo 200000 >/proc/sys/dev/raid/speed_limit_max
echo "F examine $(mdadm -X /dev/vda | grep -o '[0-9]* dirty')"
mdadm --assemble --run /dev/md0 /dev/vda /dev/vdb /dev/vdc /dev/vdd >/dev/null 2>&1 || { echo "F: assemble failed"; rc=1; }
sleep 0.5; wait_idle md0
echo check >/sys/block/md0/md/sync_action
sleep 0.5; wait_idle md0
echo "F mismatch_cnt=$(cat /sys/block/md0/md/mismatch_cnt)"
mdadm --stop /dev/md0 >/dev/null 2>&1
# H, I: md goes on with the re-added member's rebuild
readd() {   # readd LABEL MD DEVICES...
    local label=$1 md=$2
    shift 2
    mdadm --assemble --run /dev/$md "$@" >/dev/null 2>&1 || { echo "$label: assemble failed"; rc=1; }
    sleep 0.5; wait_idle $md
    echo "$label degraded=$(cat /sys/block/$md/md/degraded)"
    echo check >/sys/block/$md/md/sync_action
    sleep 0.5; wait_idle $md
    echo "$label mismatch_cnt=$(cat /sys/block/$md/md/mismatch_cnt)"
    echo "$label sha=$(sha256sum </dev/$md | cut -d' ' -f1)"
    mdadm --stop /dev/$md >/dev/null 2>&1
}
readd H md2 /dev/vdi /dev/vdj /dev/vdk /dev/vdl
readd I md3 /dev/vdm /dev/vdn /dev/vdo /dev/vdp
# G: an array with a bitmap of 256 KiB chunks, data in 4 MiB at 8 MiB, then
# a reset while it is active (safe_mode_delay keeps it so after the writes)
mdadm --create /dev/md1 --run --assume-clean --level=5 --raid-devices=4 --chunk=64 --metadata=1.2 \
    --bitmap=internal --bitmap-chunk=256 /dev/vde /dev/vdf /dev/vdg /dev/vdh >/dev/null 2>&1 ||
    { echo "G: create failed"; rc=1; }
echo 100 >/sys/block/md1/md/safe_mode_delay
# mdadm sets every bit at create; md's daemon clears them (sweeps 1 s apart
# here), then back to 5 s so that the bits of the write below stay
echo 1 >/sys/block/md1/md/bitmap/time_base
i=0
while ! mdadm -X /dev/vde | grep -q ' 0 dirty' && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
echo 5 >/sys/block/md1/md/bitmap/time_base
echo "G created $(mdadm -X /dev/vde | grep -o '[0-9]* dirty')"
dd if=/host/g.data of=/dev/md1 bs=1M seek=8 conv=fsync 2>/dev/null || { echo "G: write failed"; rc=1; }
echo "G state=$(cat /sys/block/md1/md/array_state)"
echo "G examine $(mdadm -X /dev/vde | grep -o '[0-9]* dirty')"
echo "@@URAID-EXIT $rc 0@@"
sleep 1
echo b >/proc/sysrq-trigger
GUEST

out=$(interop_run -f "$tmp/g.data" "$tmp/guest.sh" "${F[@]}" "${G[@]}" "${H[@]}" "${I[@]}")
rc=$?
echo "$out"
check "guest script ran (exit $rc)" test $rc -eq 0
check "F: md's bitmap reader sees the $bits_f bits uraid set" grep -q "^F examine $bits_f dirty$" <<<"$out"
check "F: md resynced the array uraid left dirty; its check finds 0 mismatches" \
    grep -q "^F mismatch_cnt=0$" <<<"$out"

for l in H I; do
    n=$(tr H-I h-i <<<"$l")
    check "$l: md finished the rebuild uraid began: whole, 0 mismatches, the data" \
        bash -c "grep -q '^$l degraded=0$' <<<\"\$0\" && grep -q '^$l mismatch_cnt=0$' <<<\"\$0\" &&
                 grep -q '^$l sha=$(sha256sum <"$tmp/$n.data" | cut -d' ' -f1)$' <<<\"\$0\"" "$out"
done
check "G: md cleared mdadm's initial bits before the write" grep -q "^G created 0 dirty$" <<<"$out"
check "G: md was active at the reset" grep -q "^G state=active$" <<<"$out"
bits_g=$(dirty_bits "${G[0]}")
check "G: md left the array dirty with $bits_g bits set" \
    bash -c "[ '${bits_g:-0}' -gt 0 ] && '$URAID' examine '${G[0]}' | grep -q 'State : active'"
serve g --name=g "${G[@]}"
for _ in $(seq 300); do grep -q "resync done" "$tmp/g.err" && break; sleep 0.1; done
check "G: uraid resynced it" grep -q "resync done" "$tmp/g.err"
js=$("$URAID" status --json g)
check "G: the resync visited only the chunks md's bits name" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); lb = d["last_background"]; bits = int(sys.argv[2])
print("  resync: %d of %d bytes per member skipped; %d bits of 256 KiB set" % (lb["skipped_bytes"], lb["done_bytes"], bits))
assert lb["kind"] == "resync" and lb["result"] == "completed", lb
assert 0 < bits < 20, bits
assert lb["done_bytes"] - lb["skipped_bytes"] <= bits * 262144, lb' "$js" "$bits_g"
"$URAID" check --wait g >/dev/null
check "G: uraid's check then finds 0 mismatches" test $? -eq 0
nbdcopy "nbd+unix:///?socket=$tmp/g.sock" "$tmp/g.read"
check "G: the data md wrote reads back" \
    cmp -s <(dd if="$tmp/g.read" bs=1M skip=8 count=4 status=none) "$tmp/g.data"
stop g
exit $fails
