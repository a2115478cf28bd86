#!/bin/bash
# Referee for background work, both ways, in one boot of the real md driver:
#  A  parity uraid repaired (RAID 5 assembled over random data with
#     --assume-clean): md's check finds mismatch_cnt 0;
#  B  a resync uraid stopped half-way (RAID 6, resync_offset in the
#     superblocks): md picks it up, finishes, and its check finds 0;
#  C  a resync md stopped half-way (RAID 5 md created, resync throttled,
#     mdadm --stop): uraid continues from md's resync_offset, and uraid's
#     check finds 0;
#  D  a rebuild onto a spare uraid stopped half-way (recovery_offset in the
#     spare's superblock): md resumes it there, finishes, its check finds 0
#     and it reads the data uraid served;
#  E  a member failed, removed, and a new device added with `uraid add` and
#     rebuilt: md runs the array with it (in sync, 0 mismatches, the data);
#  F  a rebuild md stopped half-way (RAID 5 uraid left degraded, a new device
#     added with mdadm --add, rebuild throttled, mdadm --stop): uraid
#     continues it from md's recovery_offset, finishes, its check finds 0
#     and it serves the data written before.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_serving 20261129

# A: uraid repairs, md checks
A=()
for i in 0 1 2 3; do randfile $((SEED + i)) $((24 << 20)) "$tmp/a$i"; A+=("$tmp/a$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --name=a "${A[@]}" >/dev/null
serve a "${A[@]}"
"$URAID" repair --wait a >/dev/null
check "A: uraid repair completed" test $? -eq 0
stop a

# B: uraid stops a resync half-way, md finishes it
B=()
for i in 0 1 2 3; do randfile $((SEED + 10 + i)) $((24 << 20)) "$tmp/b$i"; B+=("$tmp/b$i"); done
"$URAID" create --level=6 --raid-devices=4 --chunk=64 --name=b "${B[@]}" >/dev/null
serve b --speed-max=6000 "${B[@]}"
sleep 1.5
stop b
off_b=$("$URAID" examine "${B[0]}" | sed -n 's/ *Resync Offset : \([0-9]*\) sectors/\1/p')
check "B: uraid left resync_offset $off_b, part-way" bash -c "[ -n '$off_b' ] && [ '$off_b' -gt 0 ]"

# D: uraid rebuilds a failed member onto a spare and stops half-way; md goes on
D=()
for i in 0 1 2 3 4; do truncate -s 24M "$tmp/d$i"; D+=("$tmp/d$i"); done
"$URAID" create --level=5 --raid-devices=4 --spare-devices=1 --chunk=64 --name=d "${D[@]}" >/dev/null
serve d --speed-max=6000 "${D[@]}"
randfile $((SEED + 30)) $((69 << 20)) "$tmp/d.data"
nbdcopy "$tmp/d.data" "nbd+unix:///?socket=$tmp/d.sock"
"$URAID" fail "${D[2]}" >/dev/null
sleep 1.5
stop d
off_d=$("$URAID" examine "${D[4]}" | sed -n 's/ *Recovery Offset : \([0-9]*\) sectors/\1/p')
check "D: uraid left the spare with recovery_offset $off_d, part-way" \
    bash -c "[ -n '$off_d' ] && [ '$off_d' -gt 0 ]"
D_MD=("${D[0]}" "${D[1]}" "${D[3]}" "${D[4]}")   # without the failed member

# E: uraid fails and removes a member, a new device is added (uraid add) and
# rebuilt; md assembles the array with the added member
E=()
for i in 0 1 2 3 4; do truncate -s 24M "$tmp/e$i"; E+=("$tmp/e$i"); done
"$URAID" create --level=6 --raid-devices=4 --chunk=64 --name=e "${E[@]:0:4}" >/dev/null
serve e "${E[@]:0:4}"
size_e=$(nbdinfo --size "nbd+unix:///?socket=$tmp/e.sock")
head -c "$size_e" "$tmp/d.data" >"$tmp/e.data"
nbdcopy "$tmp/e.data" "nbd+unix:///?socket=$tmp/e.sock"
"$URAID" fail "${E[2]}" >/dev/null && "$URAID" remove "${E[2]}" >/dev/null &&
    "$URAID" add e "${E[4]}" >/dev/null
check "E: uraid add of a new device" test $? -eq 0
for _ in $(seq 300); do grep -q "recovery done" "$tmp/e.err" && break; sleep 0.1; done
check "E: rebuilt onto the added device" grep -q "recovery done" "$tmp/e.err"
stop e
E_MD=("${E[0]}" "${E[1]}" "${E[3]}" "${E[4]}")

# F: uraid leaves a RAID 5 degraded (a member failed and removed); md adds
# a new device and rebuilds it part-way
F=()
for i in 0 1 2 3 4; do truncate -s 24M "$tmp/f$i"; F+=("$tmp/f$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --name=f "${F[@]:0:4}" >/dev/null
serve f "${F[@]:0:4}"
size_f=$(nbdinfo --size "nbd+unix:///?socket=$tmp/f.sock")
randfile $((SEED + 40)) "$size_f" "$tmp/f.data"
nbdcopy "$tmp/f.data" "nbd+unix:///?socket=$tmp/f.sock"
"$URAID" fail "${F[2]}" >/dev/null && "$URAID" remove "${F[2]}" >/dev/null
check "F: uraid left the array degraded" test $? -eq 0
stop f
F_MD=("${F[0]}" "${F[1]}" "${F[3]}" "${F[4]}")   # the last one blank, for md to add

# C: md's disks (empty; md writes them)
C=()
for i in 0 1 2 3; do randfile $((SEED + 20 + i)) $((24 << 20)) "$tmp/c$i"; C+=("$tmp/c$i"); done

cat >"$tmp/guest.sh" <<'GUEST'
rc=0
wait_idle() { while [ "$(cat /sys/block/$1/md/sync_action)" != idle ]; do sleep 0.2; done; }
md_check() {   # md_check MD: check, print mismatch_cnt
    echo check >/sys/block/$1/md/sync_action
    sleep 0.5; wait_idle $1
    echo "$2 mismatch_cnt=$(cat /sys/block/$1/md/mismatch_cnt)"
}
echo 200000 >/proc/sys/dev/raid/speed_limit_max
mdadm --assemble --run /dev/md0 /dev/vda /dev/vdb /dev/vdc /dev/vdd >/dev/null 2>&1 || { echo "A: assemble failed"; rc=1; }
md_check md0 A
mdadm --stop /dev/md0 >/dev/null 2>&1
# slowly at first, to see where md's resync starts (sync_completed: "done / total")
echo 1000 >/proc/sys/dev/raid/speed_limit_min
echo 1000 >/proc/sys/dev/raid/speed_limit_max
mdadm --assemble --run /dev/md1 /dev/vde /dev/vdf /dev/vdg /dev/vdh >/dev/null 2>&1 || { echo "B: assemble failed"; rc=1; }
sleep 0.5
echo "B first_completed=$(cat /sys/block/md1/md/sync_completed | cut -d' ' -f1)"
echo 200000 >/proc/sys/dev/raid/speed_limit_max
wait_idle md1
md_check md1 B
mdadm --stop /dev/md1 >/dev/null 2>&1
# D: md continues the rebuild uraid left (slowly at first to see where it starts)
echo 1000 >/proc/sys/dev/raid/speed_limit_max
mdadm --assemble --run /dev/md3 /dev/vdm /dev/vdn /dev/vdo /dev/vdp >/dev/null 2>&1 || { echo "D: assemble failed"; rc=1; }
sleep 0.5
echo "D first_completed=$(cat /sys/block/md3/md/sync_completed | cut -d' ' -f1)"
echo 200000 >/proc/sys/dev/raid/speed_limit_max
wait_idle md3
echo "D degraded=$(cat /sys/block/md3/md/degraded)"
md_check md3 D
echo "D sha=$(head -c 72351744 /dev/md3 | sha256sum | cut -d' ' -f1)"
mdadm --stop /dev/md3 >/dev/null 2>&1
# E: the array with the member uraid added
mdadm --assemble --run /dev/md4 /dev/vdq /dev/vdr /dev/vds /dev/vdt >/dev/null 2>&1 || { echo "E: assemble failed"; rc=1; }
echo "E degraded=$(cat /sys/block/md4/md/degraded)"
md_check md4 E
echo "E sha=$(sha256sum </dev/md4 | cut -d' ' -f1)"
mdadm --stop /dev/md4 >/dev/null 2>&1
# C: md creates a RAID 5 (--force: a resync, not mdadm's spare-recovery
# trick), resyncs slowly, is stopped half-way
echo 4000 >/proc/sys/dev/raid/speed_limit_max
echo 1000 >/proc/sys/dev/raid/speed_limit_min
mdadm --create /dev/md2 --run --force --level=5 --raid-devices=4 --chunk=64 --metadata=1.2 --bitmap=none \
    /dev/vdi /dev/vdj /dev/vdk /dev/vdl >/dev/null 2>&1 || { echo "C: create failed"; rc=1; }
sleep 3
echo "C sync_completed=$(cat /sys/block/md2/md/sync_completed)"
mdadm --stop /dev/md2 >/dev/null 2>&1
# F: a new device added to the degraded array, rebuilt slowly, stopped half-way
mdadm --assemble --run /dev/md5 /dev/vdu /dev/vdv /dev/vdw >/dev/null 2>&1 || { echo "F: assemble failed"; rc=1; }
mdadm /dev/md5 --add /dev/vdx >/dev/null 2>&1 || { echo "F: add failed"; rc=1; }
sleep 3
echo "F sync_action=$(cat /sys/block/md5/md/sync_action) sync_completed=$(cat /sys/block/md5/md/sync_completed)"
mdadm --stop /dev/md5 >/dev/null 2>&1
exit $rc
GUEST

out=$(interop_run "$tmp/guest.sh" "${A[@]}" "${B[@]}" "${C[@]}" "${D_MD[@]}" "${E_MD[@]}" "${F_MD[@]}")
rc=$?
echo "$out"
check "guest script ran (exit $rc)" test $rc -eq 0
check "A: md's check of the parity uraid repaired finds 0 mismatches" grep -q "^A mismatch_cnt=0$" <<<"$out"
check "B: md finished the resync uraid stopped, then its check finds 0" grep -q "^B mismatch_cnt=0$" <<<"$out"
first=$(sed -n 's/^B first_completed=\([0-9]*\)$/\1/p' <<<"$out")
check "B: md resumed at uraid's checkpoint, not at 0 (first seen at sector $first)" \
    bash -c "[ -n '$first' ] && [ '$first' -ge '$off_b' ]"

first=$(sed -n 's/^D first_completed=\([0-9]*\)$/\1/p' <<<"$out")
check "D: md resumed uraid's rebuild at its recovery_offset (first seen at $first)" \
    bash -c "[ -n '$first' ] && [ '$first' -ge '$off_d' ]"
check "D: md finished it: not degraded, check finds 0 mismatches" \
    bash -c "grep -q '^D degraded=0$' <<<\"\$0\" && grep -q '^D mismatch_cnt=0$' <<<\"\$0\"" "$out"
check "D: md reads the data uraid served before the failure" \
    grep -q "^D sha=$(head -c 72351744 "$tmp/d.data" | sha256sum | cut -d' ' -f1)$" <<<"$out"

check "E: md runs the array with the added member: in sync, 0 mismatches, the data" \
    bash -c "grep -q '^E degraded=0$' <<<\"\$0\" && grep -q '^E mismatch_cnt=0$' <<<\"\$0\" &&
             grep -q '^E sha=$(sha256sum <"$tmp/e.data" | cut -d' ' -f1)$' <<<\"\$0\"" "$out"

off_c=$("$URAID" examine "${C[0]}" | sed -n 's/ *Resync Offset : \([0-9]*\) sectors/\1/p')
check "C: md left resync_offset $off_c, part-way" bash -c "[ -n '$off_c' ] && [ '$off_c' -gt 0 ]"
serve c --name=c "${C[@]}"   # md named it after its device
for _ in $(seq 300); do grep -q "resync done" "$tmp/c.err" && break; sleep 0.1; done
check "C: uraid continued md's resync from its offset" grep -q "resync started at [1-9]" "$tmp/c.err"
check "C: and finished it" grep -q "resync done" "$tmp/c.err"
"$URAID" check --wait c >/dev/null
check "C: uraid's check then finds 0 mismatches" test $? -eq 0
stop c

off_f=$("$URAID" examine "${F[4]}" | sed -n 's/ *Recovery Offset : \([0-9]*\) sectors/\1/p')
check "F: md left the added device with recovery_offset $off_f, part-way" \
    bash -c "[ -n '$off_f' ] && [ '$off_f' -gt 0 ]"
serve f "${F_MD[@]}"
for _ in $(seq 300); do grep -q "recovery done" "$tmp/f.err" && break; sleep 0.1; done
check "F: uraid continued md's rebuild from its recovery_offset" \
    grep -q "recovery started at [1-9]" "$tmp/f.err"
check "F: and finished it" grep -q "recovery done" "$tmp/f.err"
"$URAID" check --wait f >/dev/null
check "F: uraid's check then finds 0 mismatches" test $? -eq 0
check "F: the array serves the data written before" \
    bash -c "nbdcopy 'nbd+unix:///?socket=$tmp/f.sock' - | cmp -s - '$tmp/f.data'"
check "F: every slot in sync" bash -c "'$URAID' status --json f | grep -q '\"degraded\": 0'"
stop f
exit $fails
