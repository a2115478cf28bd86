#!/bin/bash
# Referee for uraid replace (md's replacement, feature 0x10), in one boot:
#  R  uraid replaced a RAID 5 member and the old one was removed: md runs the
#     array with the new member in its slot (0 mismatches, the data);
#  S  uraid stopped a replacement half-way (the new member holds the slot as
#     a replacement with recovery_offset): md goes on from there, ends with
#     the new member active in the slot and the old one faulty, 0
#     mismatches, the data.
#  T  the same with a RAID 1 (2 members): md goes on with the replacement
#     uraid stopped half-way and ends with the new member active in its slot.
#  U  the same with a RAID 10 (n2, 4 members).
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_serving 20261130
need nbdinfo nbdcopy

# R: a finished replacement
R=()
for i in 0 1 2 3 4; do truncate -s 24M "$tmp/r$i"; R+=("$tmp/r$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --name=r "${R[@]:0:4}" >/dev/null
serve r "${R[@]:0:4}"
size=$(nbdinfo --size "nbd+unix:///?socket=$tmp/r.sock")
randfile "$SEED" "$size" "$tmp/r.data"
nbdcopy "$tmp/r.data" "nbd+unix:///?socket=$tmp/r.sock"
"$URAID" replace --wait "${R[1]}" "${R[4]}" >/dev/null
check "R: uraid replaced member 1" test $? -eq 0
"$URAID" remove "${R[1]}" >/dev/null
stop r

# S: a replacement stopped half-way
S=()
for i in 0 1 2 3 4; do truncate -s 24M "$tmp/s$i"; S+=("$tmp/s$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --name=s "${S[@]:0:4}" >/dev/null
serve s --speed-max=5000 "${S[@]:0:4}"
randfile $((SEED + 1)) "$size" "$tmp/s.data"
nbdcopy "$tmp/s.data" "nbd+unix:///?socket=$tmp/s.sock"
"$URAID" replace "${S[2]}" "${S[4]}" >/dev/null
sleep 1.5
stop s
off_s=$("$URAID" examine "${S[4]}" | sed -n 's/ *Recovery Offset : \([0-9]*\) sectors/\1/p')
check "S: uraid left the replacement at recovery_offset $off_s, part-way" \
    bash -c "[ -n '$off_s' ] && [ '$off_s' -gt 0 ] && [ '$off_s' -lt 48000 ]"

# T, U: a replacement of member 1 stopped half-way, written to on both sides
# of it first. halfway LABEL NAME N SEED CREATE-ARGS...: members in $H, the
# data in $tmp/NAME.data, the replacement's recovery_offset in $off
halfway() {
    local label=$1 name=$2 n=$3 seed=$4 uri size
    shift 4
    H=()
    for i in $(seq 0 "$n"); do truncate -s 24M "$tmp/$name$i"; H+=("$tmp/$name$i"); done
    "$URAID" create "$@" --raid-devices="$n" --assume-clean --name="$name" "${H[@]:0:$n}" >/dev/null
    serve "$name" --speed-max=2500 "${H[@]:0:$n}"
    uri="nbd+unix:///?socket=$tmp/$name.sock"
    size=$(nbdinfo --size "$uri")
    randfile "$seed" "$size" "$tmp/$name.data"
    nbdcopy "$tmp/$name.data" "$uri"
    "$URAID" replace "${H[1]}" "${H[$n]}" >/dev/null
    sleep 1.5
    randfile $((seed + 1)) "$size" "$tmp/$name.data"
    nbdcopy "$tmp/$name.data" "$uri"
    stop "$name"
    off=$("$URAID" examine "${H[$n]}" | sed -n 's/ *Recovery Offset : \([0-9]*\) sectors/\1/p')
    check "$label: uraid left the replacement at recovery_offset $off, part-way" \
        bash -c "[ -n '$off' ] && [ '$off' -gt 0 ] && [ '$off' -lt 45000 ] &&
                 '$URAID' examine '${H[$n]}' | grep -q 'Feature Map : 0x12'"
}
halfway "T (RAID 1)" t 2 $((SEED + 2)) --level=1
T=("${H[@]}") off_t=$off
halfway "U (RAID 10)" u 4 $((SEED + 4)) --level=10 --layout=n2 --chunk=64
U=("${H[@]}") off_u=$off

cat >"$tmp/guest.sh" <<'GUEST'
rc=0
wait_idle() { while [ -e /sys/block/$1/md/sync_action ] && [ "$(cat /sys/block/$1/md/sync_action)" != idle ]; do sleep 0.2; done; }
md_check() {
    echo check >/sys/block/$1/md/sync_action
    sleep 0.5; wait_idle $1
    echo "$2 mismatch_cnt=$(cat /sys/block/$1/md/mismatch_cnt)"
}
# halfway LABEL MD NEW OLD DEVICES...: md goes on with the replacement
halfway() {
    local label=$1 md=$2 new=$3 old=$4
    shift 4
    echo 1000 >/proc/sys/dev/raid/speed_limit_max
    mdadm --assemble --run /dev/$md "$@" 2>/tmp/err >/dev/null || { echo "$label: assemble failed: $(cat /tmp/err)"; rc=1; }
    sleep 0.5
    echo "$label first_completed=$(cat /sys/block/$md/md/sync_completed | cut -d' ' -f1)"
    echo "$label action=$(cat /sys/block/$md/md/sync_action)"
    echo 200000 >/proc/sys/dev/raid/speed_limit_max
    wait_idle $md
    sleep 1
    echo "$label new=$(cat /sys/block/$md/md/dev-$new/state) slot=$(cat /sys/block/$md/md/dev-$new/slot)"
    echo "$label old=$(cat /sys/block/$md/md/dev-$old/state)"
    echo "$label degraded=$(cat /sys/block/$md/md/degraded)"
    md_check $md $label
    echo "$label sha=$(sha256sum </dev/$md | cut -d' ' -f1)"
    mdadm --stop /dev/$md >/dev/null 2>&1
}
echo 200000 >/proc/sys/dev/raid/speed_limit_max
mdadm --assemble --run /dev/md0 /dev/vda /dev/vdb /dev/vdc /dev/vdd 2>/tmp/err >/dev/null || { echo "R: assemble failed: $(cat /tmp/err)"; rc=1; }
echo "R degraded=$(cat /sys/block/md0/md/degraded)"
echo "R role=$(cat /sys/block/md0/md/dev-vdd/slot)"
md_check md0 R
echo "R sha=$(sha256sum </dev/md0 | cut -d' ' -f1)"
mdadm --stop /dev/md0 >/dev/null 2>&1
halfway S md1 vdi vdg /dev/vde /dev/vdf /dev/vdg /dev/vdh /dev/vdi
halfway T md2 vdl vdk /dev/vdj /dev/vdk /dev/vdl
halfway U md3 vdq vdn /dev/vdm /dev/vdn /dev/vdo /dev/vdp /dev/vdq
exit $rc
GUEST

R_MD=("${R[0]}" "${R[2]}" "${R[3]}" "${R[4]}")
out=$(interop_run "$tmp/guest.sh" "${R_MD[@]}" "${S[@]}" "${T[@]}" "${U[@]}")
rc=$?
echo "$out"
check "guest script ran (exit $rc)" test $rc -eq 0
check "R: md runs the array with the new member in slot 1: whole, 0 mismatches, the data" \
    bash -c "grep -q '^R degraded=0$' <<<\"\$0\" && grep -q '^R role=1$' <<<\"\$0\" &&
             grep -q '^R mismatch_cnt=0$' <<<\"\$0\" &&
             grep -q '^R sha=$(sha256sum <"$tmp/r.data" | cut -d' ' -f1)$' <<<\"\$0\"" "$out"
# halfway_checks LABEL NAME WHAT SLOT OFFSET: what md did with a replacement stopped half-way
halfway_checks() {
    local l=$1 name=$2 what=$3 slot=$4 from=$5 first
    first=$(sed -n "s/^$l first_completed=\([0-9]*\)$/\1/p" <<<"$out")
    check "$l: md went on with the $what replacement from uraid's recovery_offset (first seen at $first)" \
        bash -c "[ -n '$first' ] && [ '$first' -ge '$from' ]"
    check "$l: md finished it: the new member in slot $slot, the old one faulty" \
        bash -c "grep -q '^$l new=in_sync slot=$slot$' <<<\"\$0\" && grep -q '^$l old=faulty' <<<\"\$0\" &&
                 grep -q '^$l degraded=0$' <<<\"\$0\"" "$out"
    check "$l: 0 mismatches and the data" \
        bash -c "grep -q '^$l mismatch_cnt=0$' <<<\"\$0\" &&
                 grep -q '^$l sha=$(sha256sum <"$tmp/$name.data" | cut -d' ' -f1)$' <<<\"\$0\"" "$out"
}
halfway_checks S s "RAID 5" 2 "$off_s"
halfway_checks T t "RAID 1" 1 "$off_t"
halfway_checks U u "RAID 10" 1 "$off_u"
exit $fails
