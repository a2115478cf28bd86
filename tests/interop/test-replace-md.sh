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
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_tmpdir || exit 1
tmp=$INTEROP_TMP
URAID=$BUILD/uraid
export URAID_RUN_DIR=$tmp/run
SEED=${URAID_SEED:-20261130}
echo "seed $SEED"
. "$INTEROP_DIR/../cli/lib/common.sh"
need nbdinfo nbdcopy
spid=
trap '[ -n "$spid" ] && kill $spid 2>/dev/null; wait; rm -rf "${INTEROP_TMPDIRS[@]}"' EXIT
serve() { serve_bg "$tmp" "$@"; }   # serve NAME ARGS...
stop() { stop_served "$1"; }

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

# T: a RAID 1 replacement stopped half-way (written to on both sides of it first)
T=()
for i in 0 1 2; do truncate -s 24M "$tmp/t$i"; T+=("$tmp/t$i"); done
"$URAID" create --level=1 --raid-devices=2 --assume-clean --name=t "${T[@]:0:2}" >/dev/null
serve t --speed-max=5000 "${T[@]:0:2}"
tsize=$(nbdinfo --size "nbd+unix:///?socket=$tmp/t.sock")
randfile $((SEED + 2)) "$tsize" "$tmp/t.data"
nbdcopy "$tmp/t.data" "nbd+unix:///?socket=$tmp/t.sock"
"$URAID" replace "${T[1]}" "${T[2]}" >/dev/null
sleep 1.5
randfile $((SEED + 3)) "$tsize" "$tmp/t.data"
nbdcopy "$tmp/t.data" "nbd+unix:///?socket=$tmp/t.sock"
stop t
off_t=$("$URAID" examine "${T[2]}" | sed -n 's/ *Recovery Offset : \([0-9]*\) sectors/\1/p')
check "T: uraid left the RAID 1 replacement at recovery_offset $off_t, part-way" \
    bash -c "[ -n '$off_t' ] && [ '$off_t' -gt 0 ] && [ '$off_t' -lt 45000 ] &&
             '$URAID' examine '${T[2]}' | grep -q 'Feature Map : 0x12'"

cat >"$tmp/guest.sh" <<'GUEST'
rc=0
wait_idle() { while [ -e /sys/block/$1/md/sync_action ] && [ "$(cat /sys/block/$1/md/sync_action)" != idle ]; do sleep 0.2; done; }
md_check() {
    echo check >/sys/block/$1/md/sync_action
    sleep 0.5; wait_idle $1
    echo "$2 mismatch_cnt=$(cat /sys/block/$1/md/mismatch_cnt)"
}
echo 200000 >/proc/sys/dev/raid/speed_limit_max
mdadm --assemble --run /dev/md0 /dev/vda /dev/vdb /dev/vdc /dev/vdd 2>/tmp/err >/dev/null || { echo "R: assemble failed: $(cat /tmp/err)"; rc=1; }
echo "R degraded=$(cat /sys/block/md0/md/degraded)"
echo "R role=$(cat /sys/block/md0/md/dev-vdd/slot)"
md_check md0 R
echo "R sha=$(sha256sum </dev/md0 | cut -d' ' -f1)"
mdadm --stop /dev/md0 >/dev/null 2>&1
echo 1000 >/proc/sys/dev/raid/speed_limit_max
mdadm --assemble --run /dev/md1 /dev/vde /dev/vdf /dev/vdg /dev/vdh /dev/vdi 2>/tmp/err >/dev/null || { echo "S: assemble failed: $(cat /tmp/err)"; rc=1; }
sleep 0.5
echo "S first_completed=$(cat /sys/block/md1/md/sync_completed | cut -d' ' -f1)"
echo "S action=$(cat /sys/block/md1/md/sync_action)"
echo 200000 >/proc/sys/dev/raid/speed_limit_max
wait_idle md1
sleep 1
echo "S new=$(cat /sys/block/md1/md/dev-vdi/state) slot=$(cat /sys/block/md1/md/dev-vdi/slot)"
echo "S old=$(cat /sys/block/md1/md/dev-vdg/state)"
echo "S degraded=$(cat /sys/block/md1/md/degraded)"
md_check md1 S
echo "S sha=$(sha256sum </dev/md1 | cut -d' ' -f1)"
mdadm --stop /dev/md1 >/dev/null 2>&1
echo 1000 >/proc/sys/dev/raid/speed_limit_max
mdadm --assemble --run /dev/md2 /dev/vdj /dev/vdk /dev/vdl 2>/tmp/err >/dev/null || { echo "T: assemble failed: $(cat /tmp/err)"; rc=1; }
sleep 0.5
echo "T first_completed=$(cat /sys/block/md2/md/sync_completed | cut -d' ' -f1)"
echo "T action=$(cat /sys/block/md2/md/sync_action)"
echo 200000 >/proc/sys/dev/raid/speed_limit_max
wait_idle md2
sleep 1
echo "T new=$(cat /sys/block/md2/md/dev-vdl/state) slot=$(cat /sys/block/md2/md/dev-vdl/slot)"
echo "T old=$(cat /sys/block/md2/md/dev-vdk/state)"
echo "T degraded=$(cat /sys/block/md2/md/degraded)"
md_check md2 T
echo "T sha=$(sha256sum </dev/md2 | cut -d' ' -f1)"
mdadm --stop /dev/md2 >/dev/null 2>&1
exit $rc
GUEST

R_MD=("${R[0]}" "${R[2]}" "${R[3]}" "${R[4]}")
out=$(interop_run "$tmp/guest.sh" "${R_MD[@]}" "${S[@]}" "${T[@]}")
rc=$?
echo "$out"
check "guest script ran (exit $rc)" test $rc -eq 0
check "R: md runs the array with the new member in slot 1: whole, 0 mismatches, the data" \
    bash -c "grep -q '^R degraded=0$' <<<\"\$0\" && grep -q '^R role=1$' <<<\"\$0\" &&
             grep -q '^R mismatch_cnt=0$' <<<\"\$0\" &&
             grep -q '^R sha=$(sha256sum <"$tmp/r.data" | cut -d' ' -f1)$' <<<\"\$0\"" "$out"
first=$(sed -n 's/^S first_completed=\([0-9]*\)$/\1/p' <<<"$out")
check "S: md went on with the replacement from uraid's recovery_offset (first seen at $first)" \
    bash -c "[ -n '$first' ] && [ '$first' -ge '$off_s' ]"
check "S: md finished it: the new member in slot 2, the old one faulty" \
    bash -c "grep -q '^S new=in_sync slot=2$' <<<\"\$0\" && grep -q '^S old=faulty' <<<\"\$0\" &&
             grep -q '^S degraded=0$' <<<\"\$0\"" "$out"
check "S: 0 mismatches and the data" \
    bash -c "grep -q '^S mismatch_cnt=0$' <<<\"\$0\" &&
             grep -q '^S sha=$(sha256sum <"$tmp/s.data" | cut -d' ' -f1)$' <<<\"\$0\"" "$out"
first=$(sed -n 's/^T first_completed=\([0-9]*\)$/\1/p' <<<"$out")
check "T: md went on with the RAID 1 replacement from uraid's recovery_offset (first seen at $first)" \
    bash -c "[ -n '$first' ] && [ '$first' -ge '$off_t' ]"
check "T: md finished it: the new member in slot 1, the old one faulty" \
    bash -c "grep -q '^T new=in_sync slot=1$' <<<\"\$0\" && grep -q '^T old=faulty' <<<\"\$0\" &&
             grep -q '^T degraded=0$' <<<\"\$0\"" "$out"
check "T: 0 mismatches and the data" \
    bash -c "grep -q '^T mismatch_cnt=0$' <<<\"\$0\" &&
             grep -q '^T sha=$(sha256sum <"$tmp/t.data" | cut -d' ' -f1)$' <<<\"\$0\"" "$out"
exit $fails
