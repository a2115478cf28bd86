#!/bin/bash
# Referee for RAID 10 reshapes (issue 18), both ways, in two boots. Members
# are 40 MiB images used for 24 MiB each (--size); reshapes go forwards,
# the data offset down, as mdadm 4.2 moves it when members are added.
#  uraid -> md (before boot 1):
#   A  uraid grows a served near=2 RAID 10 from 4 to 6 members (`uraid grow
#      --raid-devices=6 --add`, throttled) and is stopped part-way (`uraid
#      stop`); in boot 1 md assembles it, finishes the reshape, its check
#      finds 0 and it reads the data uraid was given.
#  md -> uraid:
#   C  md grows a near=2 RAID 10 from 4 to 6 members, and
#   D  md grows an offset=2 RAID 10 from 4 to 5 members, each stopped
#      part-way in boot 1 (throttled with sync_speed_max, mdadm --stop);
#      on the host `uraid serve` assembles each in mid-reshape, finishes it
#      (the data offsets md chose), serves the data md had, and its check
#      finds 0; in boot 2 md assembles what uraid finished, its check finds
#      0, it reads the same bytes and has uraid's size.
#  md -> uraid -> md, degraded with a recovering member:
#   E  md grows a near=2 RAID 10 of 4 missing slot 1 to 5 members with two
#      spares (md's raid10_start_reshape puts one in slot 1, recovering from
#      0, the other in the new slot) and is stopped part-way in boot 1; on
#      the host `uraid serve` (throttled) moves the reshape on and is stopped
#      mid-way: the recovering member keeps its own new data offset (md's
#      raid10_run counts every member in a slot and refuses a least move
#      below a chunk); in boot 2 md assembles it, finishes the reshape,
#      rebuilds the member, reads the data and its check finds 0.
#  uraid -> md, degraded:
#   F  uraid grows a near=2 RAID 10 of 4 missing slot 1 to 5 members: a spare
#      rebuilding slot 1 (throttled) is stopped and stays there, recovering
#      from 0, as mdadm's freeze and md's raid10_start_reshape leave it, the
#      spare given with --add takes slot 4; stopped part-way (`uraid stop`);
#      in boot 2 md assembles it, finishes the reshape, rebuilds slot 1,
#      reads the data uraid was given and its check finds 0.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
if ! "$BUILD/uraid" grow --help >/dev/null 2>&1; then
    echo "SKIP: uraid grow not built"; exit 77
fi
interop_prepare || exit $?
interop_serving 20261218
need nbdinfo nbdcopy python3
MD_SB="python3 $INTEROP_DIR/md_sb.py"

members() { M=(); for ((i = 0; i < $2; i++)); do truncate -s 40M "$tmp/$1$i"; M+=("$tmp/$1$i"); done; }
uri() { echo "nbd+unix:///?socket=$tmp/$1.sock"; }
sha() { sha256sum <"$1" | cut -d' ' -f1; }
# active MEMBER: its superblock holds a reshape (feature 0x4)
active() { local f; f=$($MD_SB "$1" feature_map 2>/dev/null) && (( (f & 0x4) != 0 )); }
# wait_moved MEMBER: until a forward reshape's position passed the first
# one seen, at most 60 s
wait_moved() {
    local end=$((SECONDS + 60)) first= p
    while [ $SECONDS -lt $end ]; do
        p=$($MD_SB "$1" reshape_position 2>/dev/null)
        if [ -n "$p" ] && active "$1"; then
            [ -z "$first" ] && first=$p
            [ "$p" -gt "$first" ] && return 0
        fi
        sleep 0.2
    done
    return 1
}

# A: uraid, near=2 4 -> 6, stopped part-way
members a 6; A=("${M[@]}")
"$URAID" create --level=10 --layout=n2 --raid-devices=4 --chunk=64 --size=24M --assume-clean \
    --bitmap=none --name=a "${A[@]:0:4}" >/dev/null
serve a "${A[@]:0:4}"
a_bytes=$(nbdinfo --size "$(uri a)")
randfile "$SEED" "$a_bytes" "$tmp/a.data"
nbdcopy "$tmp/a.data" "$(uri a)"
"$URAID" tune a --speed-min=200 --speed-max=400 >/dev/null
if "$URAID" grow a --raid-devices=6 --add "${A[4]}" "${A[5]}" >"$tmp/grow.out" 2>&1; then
    check "A: uraid grow --raid-devices=6 started" true
    check "A: the reshape moved within 60 s" wait_moved "${A[0]}"
    stop a
    echo "A: left: $($MD_SB "${A[0]}")"
    check "A: superblocks hold a reshape (feature_map $($MD_SB "${A[0]}" feature_map), new_offset $($MD_SB "${A[0]}" new_offset))" \
        test "$($MD_SB "${A[0]}" feature_map new_offset delta_disks | tr '\n' ' ')" = "0x44 -128 2 "
else
    check "A: uraid grow --raid-devices=6 ($(cat "$tmp/grow.out"))" false
    stop a
fi

# 16-byte numbered lines for md's arrays, attached read-only as the last disk
seq -f '%015.0f' 0 $((80 * 1024 * 1024 / 16 - 1)) >"$tmp/pattern"
C=() D=()
for i in 0 1 2 3 4 5; do truncate -s 40M "$tmp/c$i"; C+=("$tmp/c$i"); done
for i in 0 1 2 3 4; do truncate -s 40M "$tmp/d$i"; D+=("$tmp/d$i"); done
E=()
for i in 0 1 2 3 4; do truncate -s 40M "$tmp/e$i"; E+=("$tmp/e$i"); done

cat >"$tmp/guest1.sh" <<'GUEST'
export MDADM_NO_SYSTEMCTL=1
rc=0
fail() { echo "$*"; rc=1; }
# judge LABEL MD BYTES DEVICES...: md finishes what uraid started
judge() {
    label=$1 md=$2 bytes=$3; shift 3
    mdadm --assemble --run /dev/$md "$@" >/tmp/err 2>&1 || { fail "$label: assemble failed: $(cat /tmp/err)"; return; }
    d=/sys/block/$md/md
    sleep 0.5
    while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.3; done
    echo "$label level=$(cat $d/level) layout=$(cat $d/layout) chunk=$(cat $d/chunk_size) raid_disks=$(cat $d/raid_disks) degraded=$(cat $d/degraded)"
    echo "$label bytes_now=$(blockdev --getsize64 /dev/$md)"
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1)"
    echo check >$d/sync_action; sleep 0.5
    while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.3; done
    echo "$label mismatch_cnt=$(cat $d/mismatch_cnt)"
    mdadm --stop /dev/$md >/dev/null 2>&1
}
# stopped LABEL MD N CREATE-ARGS -- SPARES -- GROW-ARGS: md starts, is stopped part-way
stopped() {
    label=$1 md=$2; shift 2
    create="" spares="" grow=""
    while [ "$1" != -- ]; do create="$create $1"; shift; done; shift
    while [ "$1" != -- ]; do spares="$spares $1"; shift; done; shift
    grow="$*"
    echo 200000 >/proc/sys/dev/raid/speed_limit_max
    mdadm --create /dev/$md --run --assume-clean --metadata=1.2 --bitmap=none --size=24M $create \
        >/tmp/err 2>&1 || { fail "$label: create failed: $(cat /tmp/err)"; return; }
    bytes=$(blockdev --getsize64 /dev/$md)
    head -c $bytes /dev/$PATTERN >/dev/$md; sync
    echo 3 >/proc/sys/vm/drop_caches
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1) bytes=$bytes"
    mdadm /dev/$md --add $spares >/tmp/err 2>&1 || fail "$label: add failed: $(cat /tmp/err)"
    echo 100 >/proc/sys/dev/raid/speed_limit_min
    echo 500 >/proc/sys/dev/raid/speed_limit_max
    mdadm --grow /dev/$md $grow >/tmp/err 2>&1 || { fail "$label: grow failed: $(cat /tmp/err)"; return; }
    first=
    for _ in $(seq 120); do
        p=$(cat /sys/block/$md/md/reshape_position)
        case $p in none) ;; *) [ -z "$first" ] && first=$p; [ "$p" -gt "$first" ] && break ;; esac
        sleep 0.5
    done
    mdadm --stop /dev/$md >/dev/null 2>&1 || fail "$label: stop failed"
    echo "$label pos=$p first=$first"
}
# degraded LABEL MD D0 D2 D3 S1 S2: near=2 on 4 without slot 1, frozen (no
# recovery), grown to 5 with the spares S1 S2, stopped part-way
degraded() {
    label=$1 md=$2
    echo 200000 >/proc/sys/dev/raid/speed_limit_max
    mdadm --create /dev/$md --run --assume-clean --metadata=1.2 --bitmap=none --size=24M \
        --level=10 --layout=n2 --chunk=64 --raid-devices=4 $3 missing $4 $5 >/tmp/err 2>&1 ||
        { fail "$label: create failed: $(cat /tmp/err)"; return; }
    bytes=$(blockdev --getsize64 /dev/$md)
    head -c $bytes /dev/$PATTERN >/dev/$md; sync
    echo 3 >/proc/sys/vm/drop_caches
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1) bytes=$bytes"
    echo frozen >/sys/block/$md/md/sync_action
    mdadm /dev/$md --add $6 $7 >/tmp/err 2>&1 || fail "$label: add failed: $(cat /tmp/err)"
    echo 100 >/proc/sys/dev/raid/speed_limit_min
    echo 500 >/proc/sys/dev/raid/speed_limit_max
    mdadm --grow /dev/$md --raid-devices=5 >/tmp/err 2>&1 ||
        mdadm --grow /dev/$md --raid-devices=5 --force >>/tmp/err 2>&1 ||
        { fail "$label: grow failed: $(cat /tmp/err)"; return; }
    first=
    for _ in $(seq 120); do
        p=$(cat /sys/block/$md/md/reshape_position)
        case $p in none) ;; *) [ -z "$first" ] && first=$p; [ "$p" -gt "$first" ] && break ;; esac
        sleep 0.5
    done
    echo "$label degraded=$(cat /sys/block/$md/md/degraded) roles:$(for r in /sys/block/$md/md/dev-*; do echo -n " ${r##*/}=$(cat $r/slot)/$(cat $r/state)"; done)"
    mdadm --stop /dev/$md >/dev/null 2>&1 || fail "$label: stop failed"
    echo "$label pos=$p first=$first"
}
GUEST
{
    echo "judge A md0 $a_bytes /dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde /dev/vdf"
    echo "PATTERN=vdr"
    echo "stopped C md1 --level=10 --layout=n2 --chunk=64 --raid-devices=4 /dev/vdg /dev/vdh /dev/vdi /dev/vdj -- /dev/vdk /dev/vdl -- --raid-devices=6"
    echo "stopped D md2 --level=10 --layout=o2 --chunk=64 --raid-devices=4 /dev/vdm /dev/vdn /dev/vdo /dev/vdp -- /dev/vdq -- --raid-devices=5"
    echo "degraded E md3 /dev/vds /dev/vdt /dev/vdu /dev/vdv /dev/vdw"
    echo 'exit $rc'
} >>"$tmp/guest1.sh"
out=$(interop_run "$tmp/guest1.sh" "${A[@]}" "${C[@]}" "${D[@]}" "ro:$tmp/pattern" "${E[@]}")
rc=$?
echo "$out"
check "boot 1: md finished A, started and stopped C and D (exit $rc)" test $rc -eq 0
value() { sed -n "s/^$1 .*\b$2=\([^ ]*\).*/\1/p" <<<"$out" | tail -n 1; }
check "A: md runs what uraid left as near=2 on 6" \
    grep -q "^A level=raid10 layout=258 chunk=65536 raid_disks=6 degraded=0$" <<<"$out"
check "A: md reads the data" grep -q "^A sha=$(sha "$tmp/a.data")$" <<<"$out"
check "A: md's check finds 0 mismatches" grep -q "^A mismatch_cnt=0$" <<<"$out"
echo "A: md's size at the end: $(value A bytes_now) (was $a_bytes)"

same_data() { cmp -n "$2" "$1" "$tmp/pattern"; }
# uraid_finishes LABEL NAME LAYOUT DISKS MEMBERS...
uraid_finishes() {
    local label=$1 name=$2 layout=$3 disks=$4; shift 4
    local u bytes off0 new0 size
    u=$(uri "$name") bytes=$(value "$label" bytes)
    echo "$label: md left: $($MD_SB "$1")"
    off0=$($MD_SB "$1" data_offset) new0=$($MD_SB "$1" new_offset)
    check "$label: md left a reshape, the data offset moving down (new_offset $new0)" \
        eval "active '$1' && [ $new0 -lt 0 ]"
    if ! serve "$name" --name="$name" "$@"; then
        check "$label: uraid serves md's array in mid-reshape" false; return
    fi
    for _ in $(seq 1200); do grep -q "reshape done" "$tmp/$name.err" && break; sleep 0.25; done
    check "$label: uraid continued md's reshape and finished it" \
        grep -q "reshape done" "$tmp/$name.err" || cat "$tmp/$name.err"
    size=$(nbdinfo --size "$u")
    eval "${name}_size=$size"
    check "$label: the export grew ($bytes -> $size)" test "$size" -gt "$bytes"
    nbdcopy "$u" "$tmp/$name.export"
    check "$label: it holds the data md had" same_data "$tmp/$name.export" "$bytes"
    rm -f "$tmp/$name.export"
    "$URAID" check --wait "$name" >/dev/null
    check "$label: uraid's check finds 0 mismatches" test $? -eq 0
    stop "$name"
    echo "$label: uraid left: $($MD_SB "$1")"
    check "$label: superblocks: no reshape, layout $layout, $disks members, data at $((off0 + new0))" \
        test "$($MD_SB "$1" feature_map layout raid_disks data_offset | tr '\n' ' ')" = \
             "0x0 $layout $disks $((off0 + new0)) "
}
uraid_finishes C c 258 6 "${C[@]}"
uraid_finishes D d 66049 5 "${D[@]}"

# E: uraid moves md's degraded reshape on, throttled, and is stopped mid-way
# recovering: the member md put in slot 1 (feature 0x2)
recovering() { local m f; for m in "${E[@]}"; do f=$($MD_SB "$m" feature_map 2>/dev/null) &&
    (( (f & 0x2) != 0 )) && { echo "$m"; return 0; }; done; return 1; }
e_rec=$(recovering) || e_rec=
for m in "${E[@]}"; do echo "E: md left $m: $($MD_SB "$m")"; done
check "E: md left a reshape with a recovering member (${e_rec:-none})" \
    eval "[ -n '$e_rec' ] && active '${E[0]}'"
e_pos0=$($MD_SB "${E[0]}" reshape_position 2>/dev/null)
if [ -n "$e_rec" ] && serve e --name=e --speed-min=100 --speed-max=200 "${E[@]}"; then
    check "E: uraid moved md's reshape on within 60 s" wait_moved "${E[0]}"
    stop e
    for m in "${E[@]}"; do echo "E: uraid left $m: $($MD_SB "$m")"; done
    e_new=$($MD_SB "${E[0]}" new_offset)
    check "E: still mid-reshape, moved on ($e_pos0 -> $($MD_SB "${E[0]}" reshape_position))" \
        eval "active '${E[0]}' && [ $($MD_SB "${E[0]}" reshape_position) -gt ${e_pos0:-0} ]"
    check "E: the recovering member keeps its new offset ($e_new) and recovery_offset 0" \
        test "$($MD_SB "$e_rec" new_offset recovery_offset | tr '\n' ' ')" = "$e_new 0 "
    e_flags=$(( $($MD_SB "$e_rec" feature_map) & 0x46 ))
    check "E: the recovering member: features 0x2, 0x4, 0x40 ($e_flags)" test "$e_flags" -eq $((0x46))
else
    check "E: uraid serves md's degraded RAID 10 in mid-reshape" false
fi

# F: uraid starts the reshape on a degraded near=2 RAID 10 and is stopped mid-way
F=()
for i in 0 1 2 3 4; do truncate -s 40M "$tmp/f$i"; F+=("$tmp/f$i"); done
"$URAID" create --level=10 --layout=n2 --raid-devices=4 --chunk=64 --size=24M --assume-clean \
    --bitmap=none --name=f "${F[0]}" missing "${F[2]}" "${F[3]}" >/dev/null
serve f "${F[0]}" "${F[2]}" "${F[3]}"
f_bytes=$(nbdinfo --size "$(uri f)")
randfile "$((SEED + 5))" "$f_bytes" "$tmp/f.data"
nbdcopy "$tmp/f.data" "$(uri f)"
"$URAID" tune f --speed-min=200 --speed-max=400 >/dev/null
"$URAID" add f "${F[1]}" >/dev/null
sleep 1
if "$URAID" grow f --raid-devices=5 --add "${F[4]}" >"$tmp/grow.out" 2>&1; then
    check "F: uraid grow --raid-devices=5 on the degraded array started" true
    check "F: the reshape moved within 60 s" wait_moved "${F[0]}"
    stop f
    for m in "${F[@]}"; do echo "F: uraid left $m: $($MD_SB "$m")"; done
    f_new=$($MD_SB "${F[0]}" new_offset)
    check "F: superblocks hold the reshape (0x44, new_offset $f_new, delta 1)" \
        test "$($MD_SB "${F[4]}" feature_map new_offset delta_disks | tr '\n' ' ')" = "0x44 $f_new 1 "
    check "F: the member of slot 1 recovers from 0, with the same new offset" \
        test "$($MD_SB "${F[1]}" feature_map new_offset recovery_offset | tr '\n' ' ')" = "0x46 $f_new 0 "
else
    check "F: uraid grow --raid-devices=5 ($(cat "$tmp/grow.out"))" false
    stop f
fi

cat >"$tmp/guest2.sh" <<'GUEST'
rc=0
echo 200000 >/proc/sys/dev/raid/speed_limit_max
judge() {
    label=$1 md=$2 bytes=$3; shift 3
    mdadm --assemble --run /dev/$md "$@" >/tmp/err 2>&1 || { echo "$label: assemble failed: $(cat /tmp/err)"; rc=1; return; }
    d=/sys/block/$md/md
    if [ -n "$WAIT" ]; then
        # md finishes the reshape, then rebuilds: until whole and idle, 120 s at most
        for _ in $(seq 400); do
            [ "$(cat $d/degraded)" = 0 ] && [ "$(cat $d/sync_action)" = idle ] && break
            sleep 0.3
        done
    fi
    echo "$label level=$(cat $d/level) layout=$(cat $d/layout) chunk=$(cat $d/chunk_size) raid_disks=$(cat $d/raid_disks) degraded=$(cat $d/degraded) action=$(cat $d/sync_action)"
    echo "$label bytes_now=$(blockdev --getsize64 /dev/$md)"
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1)"
    echo check >$d/sync_action; sleep 0.5
    while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.2; done
    echo "$label mismatch_cnt=$(cat $d/mismatch_cnt)"
    mdadm --stop /dev/$md >/dev/null 2>&1
}
GUEST
{
    echo "judge C md0 $(value C bytes) /dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde /dev/vdf"
    echo "judge D md1 $(value D bytes) /dev/vdg /dev/vdh /dev/vdi /dev/vdj /dev/vdk"
    echo "WAIT=1; judge E md2 $(value E bytes) /dev/vdl /dev/vdm /dev/vdn /dev/vdo /dev/vdp"
    echo "WAIT=1; judge F md3 $f_bytes /dev/vdq /dev/vdr /dev/vds /dev/vdt /dev/vdu"
    echo 'exit $rc'
} >>"$tmp/guest2.sh"
out2=$(interop_run "$tmp/guest2.sh" "${C[@]}" "${D[@]}" "${E[@]}" "${F[@]}")
rc=$?
echo "$out2"
check "boot 2: md assembled C and D (exit $rc)" test $rc -eq 0
check "C: md runs it as near=2 on 6, whole, idle" \
    grep -q "^C level=raid10 layout=258 chunk=65536 raid_disks=6 degraded=0 action=idle$" <<<"$out2"
check "D: md runs it as offset=2 on 5, whole, idle" \
    grep -q "^D level=raid10 layout=66049 chunk=65536 raid_disks=5 degraded=0 action=idle$" <<<"$out2"
for l in C D; do
    check "$l: md reads the data of before the grow" grep -q "^$l sha=$(value "$l" sha)$" <<<"$out2"
    check "$l: md's check finds 0 mismatches" grep -q "^$l mismatch_cnt=0$" <<<"$out2"
done
check "E: md finished the reshape and rebuilt the recovering member: near=2 on 5, whole, idle" \
    grep -q "^E level=raid10 layout=258 chunk=65536 raid_disks=5 degraded=0 action=idle$" <<<"$out2"
check "E: md reads the data of before the grow" grep -q "^E sha=$(value E sha)$" <<<"$out2"
check "E: md's check finds 0 mismatches" grep -q "^E mismatch_cnt=0$" <<<"$out2"
check "F: md finished uraid's degraded reshape and rebuilt slot 1: near=2 on 5, whole, idle" \
    grep -q "^F level=raid10 layout=258 chunk=65536 raid_disks=5 degraded=0 action=idle$" <<<"$out2"
check "F: md reads the data uraid was given" grep -q "^F sha=$(sha "$tmp/f.data")$" <<<"$out2"
check "F: md's check finds 0 mismatches" grep -q "^F mismatch_cnt=0$" <<<"$out2"
check "C: md's size is uraid's (${c_size:-?})" grep -q "^C bytes_now=${c_size:-x}$" <<<"$out2"
check "D: md's size is uraid's (${d_size:-?})" grep -q "^D bytes_now=${d_size:-x}$" <<<"$out2"
exit $fails
