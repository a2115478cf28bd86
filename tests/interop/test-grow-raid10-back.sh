#!/bin/bash
# Referee for backwards RAID 10 reshapes (issue 18), both ways, in two boots.
# The members are 40 MiB images used for 24 MiB each (--size), so that there
# is more room after the data than before it: mdadm then moves the data
# offset up for the same count (feature 0x20); fewer members always move it
# up (delta_disks < 0, no 0x20), by mdadm's least move (the chunk: +128
# sectors for 64 KiB).
#  uraid -> md (before boot 1):
#   E  uraid takes a served near=2 RAID 10 from 5 to 4 members (`uraid grow
#      --array-size`, refused before it, then `--raid-devices=4`,
#      throttled) and is killed -9 part-way;
#   H  uraid restripes a served near=2 RAID 10 of 4 from chunk 64K to 32K
#      (backwards, as mdadm picks it here) and is stopped part-way;
#   in boot 1 md assembles both, finishes them, its check finds 0 and it
#   reads the data, with the size uraid had.
#  md -> uraid:
#   F  md takes a near=2 RAID 10 from 5 to 4 members (mdadm --grow
#      --array-size, then --raid-devices=4), and
#   G  md restripes a near=2 RAID 10 of 4 from chunk 64K to 32K (mdadm moves
#      the data offset up), each stopped part-way in boot 1 (throttled,
#      mdadm --stop); on the host `uraid serve` finishes each (md's new data
#      offset; F's member that went away a spare with the others' data
#      offset, as md's md_finish_reshape), uraid's check finds 0; in boot 2
#      md assembles what uraid finished, its check finds 0 and it reads the
#      same bytes.
#  Without room after the data (whole members), both ways:
#   Q  md takes a near=2 RAID 10 of 5 to 4 (mdadm --grow --array-size, then
#      --raid-devices=4: mdadm makes the used size one chunk smaller first),
#      stopped part-way in boot 1 and finished by uraid as F;
#   P  uraid does the same on its own array of the same members: it asks
#      for the --array-size mdadm took and writes md's fields (the used
#      size, new_offset, delta_disks), is stopped part-way, and md
#      finishes it in boot 2.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
if ! "$BUILD/uraid" grow --help >/dev/null 2>&1; then
    echo "SKIP: uraid grow not built"; exit 77
fi
interop_prepare || exit $?
interop_serving 20261203
need nbdinfo nbdcopy python3
MD_SB="python3 $INTEROP_DIR/md_sb.py"

members() { M=(); for ((i = 0; i < $2; i++)); do truncate -s 40M "$tmp/$1$i"; M+=("$tmp/$1$i"); done; }
uri() { echo "nbd+unix:///?socket=$tmp/$1.sock"; }
fill() {
    randfile "$2" "$(nbdinfo --size "$(uri "$1")")" "$tmp/$1.data"
    nbdcopy "$tmp/$1.data" "$(uri "$1")"
}
sha() { sha256sum <"$1" | cut -d' ' -f1; }
grow() {
    local name=$1; shift
    "$URAID" grow "$name" "$@" >"$tmp/grow.out" 2>&1
    check "$name: uraid grow $* (exit $?)" test $? -eq 0 || { cat "$tmp/grow.out"; return 1; }
}
# backwards MEMBER: its superblock holds a backwards reshape, by md's rule:
# fewer members (delta_disks < 0), or feature 0x20 at the same count (md
# writes the bit only then)
backwards() {
    local f
    f=($($MD_SB "$1" feature_map delta_disks 2>/dev/null)) || return 1
    (( (f[0] & 0x4) != 0 )) && { (( f[1] < 0 )) || (( f[1] == 0 && (f[0] & 0x20) != 0 )); }
}
# wait_moved MEMBER: until the superblock holds a backwards reshape that has
# moved (its position below the one first seen), at most 60 s
wait_moved() {
    local end=$((SECONDS + 60)) first= p
    while [ $SECONDS -lt $end ]; do
        p=$($MD_SB "$1" feature_map reshape_position 2>/dev/null | tr '\n' ' ')
        set -- "$1" $p
        if [ -n "$3" ] && backwards "$1"; then
            [ -z "$first" ] && first=$3
            [ "$3" -lt "$first" ] && return 0
        fi
        sleep 0.2
    done
    return 1
}
# mid_state LABEL MEMBER: a backwards reshape part-way
mid_state() {
    echo "$1: left: $($MD_SB "$2")"
    check "$1: superblocks hold a backwards reshape (feature_map $($MD_SB "$2" feature_map), delta_disks $($MD_SB "$2" delta_disks), new_offset $($MD_SB "$2" new_offset), position $($MD_SB "$2" reshape_position))" \
        backwards "$2"
}

# E: uraid, near=2 5 -> 4 members, killed
members e 5; E=("${M[@]}")
"$URAID" create --level=10 --layout=n2 --raid-devices=5 --chunk=64 --size=24M --assume-clean \
    --bitmap=none --name=e "${E[@]}" >/dev/null
serve e "${E[@]}"
fill e "$SEED"
e_bytes=$((24 * 1024 * 1024 * 4 / 2))
head -c "$e_bytes" "$tmp/e.data" >"$tmp/e.kept"
"$URAID" tune e --speed-min=200 --speed-max=400 >/dev/null
out=$("$URAID" grow e --raid-devices=4 2>&1)
check "E: fewer members before --array-size is refused with md's reason ($out)" \
    grep -q -- "--array-size" <<<"$out"
if grow e --array-size=$((e_bytes / 1024))K && grow e --raid-devices=4; then
    check "E: the reshape moved within 60 s" wait_moved "${E[0]}"
    kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
    mid_state E "${E[0]}"
    check "E: md's fields: feature_map 0x44, new_offset +128, delta_disks -1" \
        test "$($MD_SB "${E[0]}" feature_map new_offset delta_disks | tr '\n' ' ')" = "0x44 128 -1 "
else
    stop e
fi

# H: uraid, near=2 of 4, chunk 64K -> 32K (backwards: more room after the data)
members h 4; H=("${M[@]}")
"$URAID" create --level=10 --layout=n2 --raid-devices=4 --chunk=64 --size=24M --assume-clean \
    --bitmap=none --name=h "${H[@]}" >/dev/null
serve h "${H[@]}"
fill h $((SEED + 1))
h_bytes=$(stat -c %s "$tmp/h.data")
"$URAID" tune h --speed-min=200 --speed-max=400 >/dev/null
if grow h --chunk=32; then
    check "H: the reshape moved within 60 s" wait_moved "${H[0]}"
    stop h
    mid_state H "${H[0]}"
    check "H: feature 0x20 (RESHAPE_BACKWARDS) at the same count" \
        eval '(( ($($MD_SB "${H[0]}" feature_map) & 0x20) != 0 ))'
else
    stop h
fi

# 16-byte numbered lines for md's arrays, attached read-only as the last disk
seq -f '%015.0f' 0 $((80 * 1024 * 1024 / 16 - 1)) >"$tmp/pattern"
F=() G=() Q=()
for i in 0 1 2 3 4; do truncate -s 40M "$tmp/q$i"; Q+=("$tmp/q$i"); done
for i in 0 1 2 3 4; do truncate -s 40M "$tmp/f$i"; F+=("$tmp/f$i"); done
for i in 0 1 2 3; do truncate -s 40M "$tmp/g$i"; G+=("$tmp/g$i"); done

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
    echo "$label level=$(cat $d/level) layout=$(cat $d/layout) chunk=$(cat $d/chunk_size) raid_disks=$(cat $d/raid_disks) degraded=$(cat $d/degraded) bytes_now=$(blockdev --getsize64 /dev/$md)"
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1)"
    echo check >$d/sync_action; sleep 0.5
    while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.3; done
    echo "$label mismatch_cnt=$(cat $d/mismatch_cnt)"
    mdadm --stop /dev/$md >/dev/null 2>&1
}
# stopped LABEL MD CREATE-ARGS -- SIZE-ARGS -- GROW-ARGS: md starts, is stopped part-way
stopped() {
    label=$1 md=$2; shift 2
    create="" size="" grow=""
    while [ "$1" != -- ]; do create="$create $1"; shift; done; shift
    while [ "$1" != -- ]; do size="$size $1"; shift; done; shift
    grow="$*"
    echo 200000 >/proc/sys/dev/raid/speed_limit_max
    mdadm --create /dev/$md --run --assume-clean --metadata=1.2 --bitmap=none --size=24M $create \
        >/tmp/err 2>&1 || { fail "$label: create failed: $(cat /tmp/err)"; return; }
    bytes=$(blockdev --getsize64 /dev/$md)
    head -c $bytes /dev/$PATTERN >/dev/$md; sync
    echo 3 >/proc/sys/vm/drop_caches
    if [ -n "$size" ]; then
        mdadm --grow /dev/$md $size >/tmp/err 2>&1 || fail "$label: $size failed: $(cat /tmp/err)"
        bytes=$(blockdev --getsize64 /dev/$md)
    fi
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1) bytes=$bytes"
    # 500 KiB/s: md writes reshape_position only at its checkpoints (about
    # every 10 s when the distance allows), and at 2000 KiB/s an idle guest
    # finished the 24 MiB members of D before one was seen (the loop below saw
    # no move, and md ran to the end)
    echo 100 >/proc/sys/dev/raid/speed_limit_min
    echo 500 >/proc/sys/dev/raid/speed_limit_max
    case $grow in
    shrink:*)
        # mdadm itself (its raid10_reshape sets reshape_direction before
        # new_offset); md's own sysfs steps only if it refuses
        n=${grow#shrink:}; n=${n%%:*}
        if mdadm --grow /dev/$md --raid-devices=$n >/tmp/err 2>&1; then
            echo "$label grown by mdadm"
        else
        echo "$label mdadm refused: $(tr '\n' ' ' </tmp/err)"
        d=/sys/block/$md/md
        echo frozen >$d/sync_action
        echo backwards >$d/reshape_direction
        for o in $d/dev-*/offset; do
            echo $(($(cat $o) + ${grow#shrink:*:})) >${o%offset}new_offset ||
                fail "$label: new_offset of ${o%/offset}"
        done
        n=${grow#shrink:}; n=${n%%:*}
        echo $n >$d/raid_disks || fail "$label: raid_disks $n refused"
        echo reshape >$d/sync_action 2>/dev/null   # EBUSY when it started by itself
        fi
        ;;
    *)
        mdadm --grow /dev/$md $grow >/tmp/err 2>&1 || { fail "$label: grow failed: $(cat /tmp/err)"; return; }
        ;;
    esac
    first=
    for _ in $(seq 120); do
        p=$(cat /sys/block/$md/md/reshape_position)
        case $p in none) ;; *) [ -z "$first" ] && first=$p; [ "$p" -lt "$first" ] && break ;; esac
        sleep 0.5
    done
    mdadm --stop /dev/$md >/dev/null 2>&1 || fail "$label: stop failed"
    echo "$label pos=$p first=$first"
}
# shrunk_full LABEL MD DEVICES...: near=2 5 -> 4 on whole members (no room
# after the data: mdadm makes the used size one chunk smaller), stopped
# part-way
shrunk_full() {
    label=$1 md=$2; shift 2
    echo 200000 >/proc/sys/dev/raid/speed_limit_max
    mdadm --create /dev/$md --run --assume-clean --metadata=1.2 --bitmap=none --level=10 \
        --layout=n2 --chunk=64 --raid-devices=5 "$@" >/tmp/err 2>&1 ||
        { fail "$label: create failed: $(cat /tmp/err)"; return; }
    cs=$(cat /sys/block/$md/md/component_size)
    new=$(( (cs - 64) * 4 / 2 ))
    bytes=$((new * 1024))
    head -c $bytes /dev/$PATTERN >/dev/$md; sync
    echo 3 >/proc/sys/vm/drop_caches
    mdadm --grow /dev/$md --array-size=$new >/tmp/err 2>&1 || fail "$label: --array-size=$new failed: $(cat /tmp/err)"
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1) bytes=$bytes component_size=$cs"
    echo 100 >/proc/sys/dev/raid/speed_limit_min
    echo 500 >/proc/sys/dev/raid/speed_limit_max
    mdadm --grow /dev/$md --raid-devices=4 >/tmp/err 2>&1 || { fail "$label: grow failed: $(cat /tmp/err)"; return; }
    echo "$label component_size_now=$(cat /sys/block/$md/md/component_size)"
    first=
    for _ in $(seq 120); do
        p=$(cat /sys/block/$md/md/reshape_position)
        case $p in none) ;; *) [ -z "$first" ] && first=$p; [ "$p" -lt "$first" ] && break ;; esac
        sleep 0.5
    done
    mdadm --stop /dev/$md >/dev/null 2>&1 || fail "$label: stop failed"
    echo "$label pos=$p first=$first"
}
GUEST
{
    echo "judge E md0 $e_bytes /dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde"
    echo "judge H md1 $h_bytes /dev/vdf /dev/vdg /dev/vdh /dev/vdi"
    echo "PATTERN=vdx"
    echo "stopped F md2 --level=10 --layout=n2 --raid-devices=5 --chunk=64 /dev/vdj /dev/vdk /dev/vdl /dev/vdm /dev/vdn -- --array-size=$((e_bytes / 1024)) -- shrink:4:128"
    echo "stopped G md3 --level=10 --layout=n2 --raid-devices=4 --chunk=64 /dev/vdo /dev/vdp /dev/vdq /dev/vdr -- -- --chunk=32"
    echo "shrunk_full Q md4 /dev/vds /dev/vdt /dev/vdu /dev/vdv /dev/vdw"
    echo 'exit $rc'
} >>"$tmp/guest1.sh"
out=$(interop_run "$tmp/guest1.sh" "${E[@]}" "${H[@]}" "${F[@]}" "${G[@]}" "${Q[@]}" "ro:$tmp/pattern")
rc=$?
echo "$out"
check "boot 1: md finished E and H, started and stopped F and G (exit $rc)" test $rc -eq 0
value() { sed -n "s/^$1 .*\b$2=\([^ ]*\).*/\1/p" <<<"$out" | tail -n 1; }
# judged LABEL STATE DATA-FILE
judged() {
    check "$1: md runs what uraid left as $2" grep -q "^$1 $2$" <<<"$out"
    check "$1: md reads the data" grep -q "^$1 sha=$(sha "$3")$" <<<"$out"
    check "$1: md's check finds 0 mismatches" grep -q "^$1 mismatch_cnt=0$" <<<"$out"
}
judged E "level=raid10 layout=258 chunk=65536 raid_disks=4 degraded=0 bytes_now=$e_bytes" "$tmp/e.kept"
judged H "level=raid10 layout=258 chunk=32768 raid_disks=4 degraded=0 bytes_now=$h_bytes" "$tmp/h.data"
e_off=$($MD_SB "${E[0]}" data_offset) e_spare=$($MD_SB "${E[4]}" data_offset)
echo "E: md left the spare at data_offset $e_spare, the members at $e_off"

# md's stopped state, then uraid finishes it
same_data() { cmp -n "$2" "$1" "$tmp/pattern"; }
# uraid_finishes LABEL NAME CHUNK DISKS MEMBERS...
uraid_finishes() {
    local label=$1 name=$2 chunk=$3 disks=$4; shift 4
    local u bytes off0 new0 size
    u=$(uri "$name") bytes=$(value "$label" bytes)
    mid_state "$label" "$1"
    off0=$($MD_SB "$1" data_offset) new0=$($MD_SB "$1" new_offset)
    check "$label: md moved the data offset up (new_offset $new0)" test "$new0" -gt 0
    if ! serve "$name" --name="$name" "$@"; then
        check "$label: uraid serves md's array in mid-reshape" false; return
    fi
    for _ in $(seq 1200); do grep -q "reshape done" "$tmp/$name.err" && break; sleep 0.25; done
    check "$label: uraid continued md's backwards reshape and finished it" \
        grep -q "reshape done" "$tmp/$name.err" || cat "$tmp/$name.err"
    size=$(nbdinfo --size "$u")
    check "$label: the export has md's size ($size, want $bytes)" test "$size" = "$bytes"
    nbdcopy "$u" "$tmp/$name.export"
    check "$label: it holds the data md had" same_data "$tmp/$name.export" "$bytes"
    rm -f "$tmp/$name.export"
    "$URAID" check --wait "$name" >/dev/null
    check "$label: uraid's check finds 0 mismatches" test $? -eq 0
    stop "$name"
    echo "$label: uraid left: $($MD_SB "$1")"
    check "$label: superblocks: no reshape, chunk $chunk, $disks members, data at $((off0 + new0))" \
        test "$($MD_SB "$1" feature_map chunksize raid_disks data_offset | tr '\n' ' ')" = \
             "0x0 $chunk $disks $((off0 + new0)) "
}
uraid_finishes F f 128 4 "${F[@]}"
uraid_finishes G g 64 4 "${G[@]}"
f_role=$(cut -d, -f$(($($MD_SB "${F[4]}" dev_number) + 1)) <<<"$($MD_SB "${F[4]}" roles)")
check "F: the member that went away is a spare (role $f_role)" test "${f_role:-ffff}" = ffff
f_off=$($MD_SB "${F[0]}" data_offset) f_spare=$($MD_SB "${F[4]}" data_offset)
check "F: uraid moved the spare's data offset as md does ($f_spare, want $f_off)" \
    test "$f_spare" = "$f_off"

# Q: md's shrink without room after the data, then P: uraid's of the same
echo "Q: md left: $($MD_SB "${Q[0]}")"
q_cs=$(value Q component_size) q_now=$(value Q component_size_now)
echo "Q: component_size $q_cs KiB, $q_now KiB once mdadm started the shrink"
check "Q: mdadm made the used size one chunk smaller ($q_cs -> $q_now KiB)" \
    test "${q_now:-0}" -eq $(( ${q_cs:-0} - 64 ))
q_fields=$($MD_SB "${Q[0]}" feature_map size data_offset new_offset delta_disks | tr '\n' ' ')
members p 5; P=("${M[@]}")
"$URAID" create --level=10 --layout=n2 --raid-devices=5 --chunk=64 --assume-clean \
    --bitmap=none --name=p "${P[@]}" >/dev/null
serve p "${P[@]}"
fill p $((SEED + 2))
q_bytes=$(value Q bytes)
p_out=$("$URAID" grow p --raid-devices=4 2>&1)
p_kib=$(grep -o 'array-size=[0-9]*K' <<<"$p_out" | head -1 | tr -dc 0-9)
check "P: uraid asks for the --array-size mdadm took (${p_kib:-?} KiB, mdadm $(( ${q_bytes:-0} / 1024 )))" \
    test "${p_kib:-0}" -eq $(( ${q_bytes:-0} / 1024 ))
p_bytes=$(( ${p_kib:-0} * 1024 ))
head -c "$p_bytes" "$tmp/p.data" >"$tmp/p.kept"
"$URAID" tune p --speed-min=200 --speed-max=400 >/dev/null
if grow p --array-size="${p_kib:-0}K" && grow p --raid-devices=4; then
    check "P: the reshape moved within 60 s" wait_moved "${P[0]}"
    stop p
    mid_state P "${P[0]}"
    p_fields=$($MD_SB "${P[0]}" feature_map size data_offset new_offset delta_disks | tr '\n' ' ')
    check "P: md's fields as md wrote them for Q (feature_map size data_offset new_offset delta_disks: $p_fields; md: $q_fields)" \
        test "$p_fields" = "$q_fields"
else
    stop p
fi
uraid_finishes Q q 128 4 "${Q[@]}"

cat >"$tmp/guest2.sh" <<'GUEST'
rc=0
echo 200000 >/proc/sys/dev/raid/speed_limit_max
judge() {
    label=$1 md=$2 bytes=$3; shift 3
    mdadm --assemble --run /dev/$md "$@" >/tmp/err 2>&1 || { echo "$label: assemble failed: $(cat /tmp/err)"; rc=1; return; }
    d=/sys/block/$md/md
    # WAIT set: md finishes a reshape first (P)
    if [ -n "${WAIT:-}" ]; then
        sleep 0.5
        while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.3; done
    fi
    echo "$label level=$(cat $d/level) layout=$(cat $d/layout) chunk=$(cat $d/chunk_size) raid_disks=$(cat $d/raid_disks) degraded=$(cat $d/degraded) action=$(cat $d/sync_action) bytes_now=$(blockdev --getsize64 /dev/$md)"
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1)"
    echo check >$d/sync_action; sleep 0.5
    while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.2; done
    echo "$label mismatch_cnt=$(cat $d/mismatch_cnt)"
    mdadm --stop /dev/$md >/dev/null 2>&1
}
GUEST
{
    echo "judge F md0 $(value F bytes) /dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde"
    echo "judge G md1 $(value G bytes) /dev/vdf /dev/vdg /dev/vdh /dev/vdi"
    echo "WAIT=1 judge P md2 $p_bytes /dev/vdj /dev/vdk /dev/vdl /dev/vdm /dev/vdn"
    echo "judge Q md3 $(value Q bytes) /dev/vdo /dev/vdp /dev/vdq /dev/vdr /dev/vds"
    echo 'exit $rc'
} >>"$tmp/guest2.sh"
out2=$(interop_run "$tmp/guest2.sh" "${F[@]}" "${G[@]}" "${P[@]}" "${Q[@]}")
rc=$?
echo "$out2"
check "boot 2: md assembled F and G (exit $rc)" test $rc -eq 0
check "F: md runs it as near=2 chunk 64K on 4, whole, idle, uraid's size" \
    grep -q "^F level=raid10 layout=258 chunk=65536 raid_disks=4 degraded=0 action=idle bytes_now=$(value F bytes)$" <<<"$out2"
check "G: md runs it as near=2 chunk 32K on 4, whole, idle, uraid's size" \
    grep -q "^G level=raid10 layout=258 chunk=32768 raid_disks=4 degraded=0 action=idle bytes_now=$(value G bytes)$" <<<"$out2"
check "P: md finished uraid's shrink: near=2 chunk 64K on 4, whole, idle" \
    grep -q "^P level=raid10 layout=258 chunk=65536 raid_disks=4 degraded=0 action=idle bytes_now=$p_bytes$" <<<"$out2"
check "P: md reads the data" grep -q "^P sha=$(sha "$tmp/p.kept")$" <<<"$out2"
check "P: md's check finds 0 mismatches" grep -q "^P mismatch_cnt=0$" <<<"$out2"
check "Q: md runs what uraid finished as near=2 chunk 64K on 4, whole, idle, uraid's size" \
    grep -q "^Q level=raid10 layout=258 chunk=65536 raid_disks=4 degraded=0 action=idle bytes_now=$(value Q bytes)$" <<<"$out2"
for l in F G Q; do
    check "$l: md reads the data of before the reshape" grep -q "^$l sha=$(value "$l" sha)$" <<<"$out2"
    check "$l: md's check finds 0 mismatches" grep -q "^$l mismatch_cnt=0$" <<<"$out2"
done
exit $fails
