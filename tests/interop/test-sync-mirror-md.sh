#!/bin/bash
# Referee for background work on RAID 1 and RAID 10, in one boot of the real
# md driver:
#  A  copies uraid repaired (RAID 1 with 2 members, RAID 10 n2 and f2 on 4,
#     assembled over random data with --assume-clean, so every copy differed):
#     md's check finds mismatch_cnt 0;
#  B  a RAID 10 resync uraid stopped half-way (resync_offset, which md keeps
#     in array sectors for RAID 10): md resumes there, finishes, and its check
#     finds 0 (had uraid's offset meant anything else, md would skip rows that
#     were never made consistent, and count them);
#  C  a few 4 KiB pages of the second copy corrupted on a member file (RAID
#     1, RAID 10 n2): md's check counts the same mismatch_cnt as uraid's;
#  D  rebuilds onto a spare uraid stopped half-way (RAID 10 f2 and RAID 1;
#     recovery_offset in member sectors in the spare's superblock): md resumes
#     each at its offset, finishes, its check finds 0, and it reads the data
#     uraid served.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_serving 20261130
offset() { "$URAID" examine "$1" | sed -n "s/ *$2 Offset : \([0-9]*\) sectors/\1/p"; }   # offset DEV Data|Resync|Recovery

# A: uraid repairs, md checks (random members: every copy differs at first)
repair_case() {   # repair_case NAME N CREATE-ARGS...; members in $M
    local name=$1 n=$2; shift 2
    M=()
    for i in $(seq 0 $((n - 1))); do
        randfile $((SEED + ${#name} * 10 + i)) $((24 << 20)) "$tmp/$name$i"; M+=("$tmp/$name$i")
    done
    "$URAID" create "$@" --raid-devices="$n" --assume-clean --name="$name" "${M[@]}" >/dev/null
    serve "$name" "${M[@]}"
    out=$("$URAID" check --wait "$name")
    check "A $name: uraid's check finds the copies differ ($out)" \
        bash -c "! grep -q 'mismatch_cnt 0\$' <<<\"\$0\"" "$out"
    "$URAID" repair --wait "$name" >/dev/null
    check "A $name: uraid repair completed" test $? -eq 0
    stop "$name"
}
repair_case r1 2 --level=1
A1=("${M[@]}")
repair_case n2 4 --level=10 --layout=n2 --chunk=64
A2=("${M[@]}")
repair_case f2x 4 --level=10 --layout=f2 --chunk=64
A3=("${M[@]}")

# B: uraid stops a RAID 10 resync half-way, md finishes it
B=()
for i in 0 1 2 3; do randfile $((SEED + 40 + i)) $((24 << 20)) "$tmp/b$i"; B+=("$tmp/b$i"); done
"$URAID" create --level=10 --layout=n2 --raid-devices=4 --chunk=64 --name=b "${B[@]}" >/dev/null
serve b --speed-max=6000 "${B[@]}"
sleep 1.5
stop b
off_b=$(offset "${B[0]}" Resync)
check "B: uraid left resync_offset $off_b, part-way" bash -c "[ -n '$off_b' ] && [ '$off_b' -gt 0 ]"

# D: uraid rebuilds a failed member onto a spare and stops half-way; md goes on
rebuild_case() {  # rebuild_case NAME N CREATE-ARGS...; md's members in $M, data in $tmp/NAME.data
    local name=$1 n=$2; shift 2
    local d=()
    for i in $(seq 0 "$n"); do truncate -s 24M "$tmp/$name$i"; d+=("$tmp/$name$i"); done
    "$URAID" create "$@" --raid-devices="$n" --spare-devices=1 --name="$name" "${d[@]}" >/dev/null
    serve "$name" --speed-max=5000 "${d[@]}"
    local uri="nbd+unix:///?socket=$tmp/$name.sock"
    randfile $((SEED + 50 + n)) "$(nbdinfo --size "$uri")" "$tmp/$name.data"
    nbdcopy "$tmp/$name.data" "$uri"
    "$URAID" fail "${d[1]}" >/dev/null
    sleep 1.5
    stop "$name"
    off=$(offset "${d[$n]}" Recovery)
    check "D $name: uraid left the spare with recovery_offset $off, part-way" \
        bash -c "[ -n '$off' ] && [ '$off' -gt 0 ]"
    M=("${d[0]}" "${d[@]:2}")      # without the failed member, the spare last
}
rebuild_case df2 4 --level=10 --layout=f2 --chunk=64
D1=("${M[@]}") off_d1=$off
rebuild_case dr1 2 --level=1
D2=("${M[@]}") off_d2=$off

# C: uraid and md count the same mismatches
count_case() {   # count_case NAME N CREATE-ARGS...; members in $M, uraid's count in $count
    local name=$1 n=$2; shift 2
    M=()
    for i in $(seq 0 $((n - 1))); do truncate -s 24M "$tmp/$name$i"; M+=("$tmp/$name$i"); done
    "$URAID" create "$@" --raid-devices="$n" --assume-clean --name="$name" "${M[@]}" >/dev/null
    serve "$name" "${M[@]}"
    local uri="nbd+unix:///?socket=$tmp/$name.sock"
    randfile $((SEED + 60 + n)) "$(nbdinfo --size "$uri")" "$tmp/$name.data"
    nbdcopy "$tmp/$name.data" "$uri"
    stop "$name"
    # slot 1 holds the second copy of everything in RAID 1 and RAID 10 n2 on 4
    local off; off=$(offset "${M[1]}" Data)
    for at in 1000 1640 2280 9000; do
        head -c 4096 /dev/urandom | dd of="${M[1]}" bs=512 seek=$((off + at)) conv=notrunc status=none
    done
    serve "$name" "${M[@]}"
    count=$("$URAID" check --wait "$name" | sed -n 's/.*mismatch_cnt \([0-9]*\)$/\1/p')
    stop "$name"
}
count_case c1 2 --level=1
C1=("${M[@]}") count_c1=$count
count_case c2 4 --level=10 --layout=n2 --chunk=64
C2=("${M[@]}") count_c2=$count

cat >"$tmp/guest.sh" <<'GUEST'
rc=0
wait_idle() { while [ "$(cat /sys/block/$1/md/sync_action)" != idle ]; do sleep 0.2; done; }
md_check() {   # md_check MD NAME: check, print mismatch_cnt
    echo check >/sys/block/$1/md/sync_action
    sleep 0.5; wait_idle $1
    echo "$2 mismatch_cnt=$(cat /sys/block/$1/md/mismatch_cnt)"
}
assemble() {   # assemble MD NAME DEV...
    local md=$1 name=$2; shift 2
    mdadm --assemble --run /dev/$md "$@" >/dev/null 2>&1 || { echo "$name: assemble failed"; rc=1; }
}
echo 200000 >/proc/sys/dev/raid/speed_limit_max
assemble md0 A1 /dev/vda /dev/vdb
md_check md0 A1
mdadm --stop /dev/md0 >/dev/null 2>&1
assemble md1 A2 /dev/vdc /dev/vdd /dev/vde /dev/vdf
md_check md1 A2
mdadm --stop /dev/md1 >/dev/null 2>&1
assemble md2 A3 /dev/vdg /dev/vdh /dev/vdi /dev/vdj
md_check md2 A3
mdadm --stop /dev/md2 >/dev/null 2>&1
# slowly at first, to see where md's work starts (sync_completed: "done / total")
echo 1000 >/proc/sys/dev/raid/speed_limit_min
echo 1000 >/proc/sys/dev/raid/speed_limit_max
assemble md3 B /dev/vdk /dev/vdl /dev/vdm /dev/vdn
sleep 0.5
echo "B first_completed=$(cut -d' ' -f1 /sys/block/md3/md/sync_completed)"
echo 200000 >/proc/sys/dev/raid/speed_limit_max
wait_idle md3
md_check md3 B
mdadm --stop /dev/md3 >/dev/null 2>&1
n=4
for set in "md4 D1 /dev/vdo /dev/vdp /dev/vdq /dev/vdr" "md5 D2 /dev/vds /dev/vdt"; do
    set -- $set
    md=$1 name=$2; shift 2
    echo 1000 >/proc/sys/dev/raid/speed_limit_max
    assemble $md $name "$@"
    sleep 0.5
    echo "$name first_completed=$(cut -d' ' -f1 /sys/block/$md/md/sync_completed)"
    echo 200000 >/proc/sys/dev/raid/speed_limit_max
    wait_idle $md
    echo "$name degraded=$(cat /sys/block/$md/md/degraded)"
    md_check $md $name
    echo "$name sha=$(sha256sum </dev/$md | cut -d' ' -f1)"
    mdadm --stop /dev/$md >/dev/null 2>&1
done
assemble md6 C1 /dev/vdu /dev/vdv
md_check md6 C1
mdadm --stop /dev/md6 >/dev/null 2>&1
assemble md7 C2 /dev/vdw /dev/vdx /dev/vdy /dev/vdz
md_check md7 C2
mdadm --stop /dev/md7 >/dev/null 2>&1
exit $rc
GUEST

out=$(interop_run "$tmp/guest.sh" "${A1[@]}" "${A2[@]}" "${A3[@]}" "${B[@]}" "${D1[@]}" "${D2[@]}" "${C1[@]}" "${C2[@]}")
rc=$?
echo "$out"
check "guest script ran (exit $rc)" test $rc -eq 0
for a in A1 A2 A3; do
    check "$a: md's check of the copies uraid repaired finds 0 mismatches" \
        grep -q "^$a mismatch_cnt=0$" <<<"$out"
done
check "B: md finished the RAID 10 resync uraid stopped, then its check finds 0" \
    grep -q "^B mismatch_cnt=0$" <<<"$out"
first=$(sed -n 's/^B first_completed=\([0-9]*\)$/\1/p' <<<"$out")
check "B: md resumed at uraid's checkpoint, not at 0 (first seen at sector $first)" \
    bash -c "[ -n '$first' ] && [ '$first' -ge '$off_b' ]"
for d in D1 D2; do
    var=off_${d,,}; off=${!var}
    data=$tmp/$([ $d = D1 ] && echo df2 || echo dr1).data
    first=$(sed -n "s/^$d first_completed=\([0-9]*\)$/\1/p" <<<"$out")
    check "$d: md resumed uraid's rebuild at its recovery_offset $off (first seen at $first)" \
        bash -c "[ -n '$first' ] && [ '$first' -ge '$off' ]"
    check "$d: md finished it: not degraded, check finds 0 mismatches" \
        bash -c "grep -q '^$d degraded=0$' <<<\"\$0\" && grep -q '^$d mismatch_cnt=0$' <<<\"\$0\"" "$out"
    check "$d: md reads the data uraid served before the failure" \
        grep -q "^$d sha=$(sha256sum <"$data" | cut -d' ' -f1)$" <<<"$out"
done
for c in C1 C2; do
    var=count_${c,,}; want=${!var}
    check "$c: md's check counts what uraid's counted ($want sectors)" \
        bash -c "[ -n '$want' ] && [ '$want' -gt 0 ] && grep -q '^$c mismatch_cnt=$want$' <<<\"\$0\"" "$out"
done
exit $fails
