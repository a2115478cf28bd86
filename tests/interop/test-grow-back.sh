#!/bin/bash
# Referee for backwards reshapes of RAID 5 (issue 18), both ways, in two boots.
# The members are 40 MiB images used for 24 MiB each (--size), so that there
# is more room after the data than before it: mdadm then moves the data
# offset up and md runs the reshape from the end to the start (feature 0x20
# at the same member count; fewer members are backwards by delta_disks < 0,
# and md writes no 0x20 for them).
#  uraid -> md (before boot 1):
#   E  uraid restripes a served RAID 5 of 4 from chunk 512K to 64K (`uraid
#      grow --chunk=64`, throttled) and is stopped part-way (`uraid stop`);
#   F  uraid takes a served RAID 5 from 5 to 4 members (`uraid grow
#      --array-size`, then `--raid-devices=4`) and is killed -9 part-way;
#   tests/interop/md_read.py (an independent reader) finds the data at
#   uraid's checkpoint; in boot 1 md assembles both, finishes them, its
#   check finds 0 and it reads the data.
#  md -> uraid:
#   D  md restripes a RAID 5 of 4 from chunk 512K to 64K, and
#   G  md takes a RAID 5 from 5 to 4 members (mdadm --grow --array-size,
#      then md's sysfs: reshape_direction backwards, each member's
#      new_offset up by mdadm's distance, raid_disks 4, sync_action reshape:
#      mdadm 4.2 itself sets new_offset before raid_disks, which kernel 6.1
#      refuses for a shrink without a backup file), each stopped part-way in boot 1 (throttled,
#      mdadm --stop); on the host md_read.py finds the data at md's
#      checkpoint, `uraid serve` finishes each (the same new data offset md
#      chose, the member that went away a spare), uraid's check finds 0;
#      in boot 2 md assembles what uraid finished, its check finds 0 and
#      it reads the same bytes.
#  The member a shrink frees becomes a spare with the new data offset of
#  the others (md's md_finish_reshape moves every member's): md's in F,
#  uraid's in G.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
if ! "$BUILD/uraid" grow --help >/dev/null 2>&1; then
    echo "SKIP: uraid grow not built"; exit 77
fi
interop_prepare || exit $?
interop_serving 20261204
need nbdinfo nbdcopy python3
MD_SB="python3 $INTEROP_DIR/md_sb.py"
MD_READ="python3 $INTEROP_DIR/md_read.py"

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
# mid_state LABEL DATA BYTES MEMBERS...: a backwards reshape part-way, and
# md_read.py reads the first BYTES of DATA
mid_state() {
    local label=$1 data=$2 bytes=$3; shift 3
    echo "$label: left: $($MD_SB "$1")"
    check "$label: superblocks hold a backwards reshape (feature_map $($MD_SB "$1" feature_map), delta_disks $($MD_SB "$1" delta_disks), position $($MD_SB "$1" reshape_position))" \
        backwards "$1"
    $MD_READ "$tmp/$label.mid" "$@" >/dev/null &&
        check "$label: md_read.py finds the data at the checkpoint" \
            cmp -n "$bytes" "$tmp/$label.mid" "$data"
    rm -f "$tmp/$label.mid"
}

# E: uraid, RAID 5 of 4, chunk 512K -> 64K, stopped
members e 4; E=("${M[@]}")
"$URAID" create --level=5 --raid-devices=4 --chunk=512 --size=24M --assume-clean --bitmap=none \
    --name=e "${E[@]}" >/dev/null
serve e "${E[@]}"
fill e "$SEED"
e_bytes=$(stat -c %s "$tmp/e.data")
"$URAID" tune e --speed-min=200 --speed-max=400 >/dev/null
if grow e --chunk=64; then
    check "E: the reshape moved within 60 s" wait_moved "${E[0]}"
    stop e
    mid_state E "$tmp/e.data" "$e_bytes" "${E[@]}"
else
    stop e
fi

# F: uraid, RAID 5 5 -> 4 members, killed
members f 5; F=("${M[@]}")
"$URAID" create --level=5 --raid-devices=5 --chunk=64 --size=24M --assume-clean --bitmap=none \
    --name=f "${F[@]}" >/dev/null
serve f "${F[@]}"
fill f $((SEED + 1))
f_bytes=$((24 * 1024 * 1024 * 3))
"$URAID" tune f --speed-min=200 --speed-max=400 >/dev/null
out=$("$URAID" grow f --raid-devices=4 2>&1)
check "F: fewer members before --array-size is refused with md's reason ($out)" \
    grep -q -- "--array-size" <<<"$out"
if grow f --array-size=$((f_bytes / 1024))K && grow f --raid-devices=4; then
    check "F: the reshape moved within 60 s" wait_moved "${F[0]}"
    kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
    mid_state F "$tmp/f.data" "$f_bytes" "${F[@]}"
else
    stop f
fi
head -c "$f_bytes" "$tmp/f.data" >"$tmp/f.kept"

# 16-byte numbered lines for md's arrays, attached read-only as the last disk
seq -f '%015.0f' 0 $((80 * 1024 * 1024 / 16 - 1)) >"$tmp/pattern"
D=() G=()
for i in 0 1 2 3; do truncate -s 40M "$tmp/d$i"; D+=("$tmp/d$i"); done
for i in 0 1 2 3 4; do truncate -s 40M "$tmp/g$i"; G+=("$tmp/g$i"); done

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
        # mdadm 4.2 sets new_offset before raid_disks, which the kernel
        # refuses for a shrink (the direction is still forwards then):
        # md's own sysfs steps, in the order the kernel takes them
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
GUEST
devs=(vd{a..z})
{
    echo "judge E md0 $e_bytes /dev/vda /dev/vdb /dev/vdc /dev/vdd"
    echo "judge F md1 $f_bytes /dev/vde /dev/vdf /dev/vdg /dev/vdh /dev/vdi"
    echo "PATTERN=vdt"
    echo "stopped D md2 --level=5 --raid-devices=4 --chunk=512 /dev/vdj /dev/vdk /dev/vdl /dev/vdm -- -- --chunk=64"
    # 5 -> 4, 64K: mdadm's distance, lcm(4, 3) rows of 128 sectors / 4 = 384
    echo "stopped G md3 --level=5 --raid-devices=5 --chunk=64 /dev/vdn /dev/vdo /dev/vdp /dev/vdq /dev/vdr -- --array-size=$((f_bytes / 1024)) -- shrink:4:384"
    echo 'exit $rc'
} >>"$tmp/guest1.sh"
# vds: a spare letter so that the pattern is vdt whatever is added above
truncate -s 1M "$tmp/pad"
out=$(interop_run "$tmp/guest1.sh" "${E[@]}" "${F[@]}" "${D[@]}" "${G[@]}" "$tmp/pad" "ro:$tmp/pattern")
rc=$?
echo "$out"
check "boot 1: md finished E and F, started and stopped D and G (exit $rc)" test $rc -eq 0
value() { sed -n "s/^$1 .*\b$2=\([^ ]*\).*/\1/p" <<<"$out" | tail -n 1; }
# judged LABEL STATE DATA-FILE
judged() {
    check "$1: md runs what uraid left as $2" grep -q "^$1 $2$" <<<"$out"
    check "$1: md reads the data" grep -q "^$1 sha=$(sha "$3")$" <<<"$out"
    check "$1: md's check finds 0 mismatches" grep -q "^$1 mismatch_cnt=0$" <<<"$out"
}
judged E "level=raid5 layout=2 chunk=65536 raid_disks=4 degraded=0 bytes_now=$e_bytes" "$tmp/e.data"
judged F "level=raid5 layout=2 chunk=65536 raid_disks=4 degraded=0 bytes_now=$f_bytes" "$tmp/f.kept"
# md moves the data offset of every member at the end (md_finish_reshape),
# the one that became a spare too: uraid does the same (case G below)
f_off=$($MD_SB "${F[0]}" data_offset) f_spare=$($MD_SB "${F[4]}" data_offset)
echo "F: md left the spare at data_offset $f_spare, the members at $f_off"
check "F: md moved the spare's data offset as the members' ($f_spare, want $f_off)" \
    test "$f_spare" = "$f_off"

# md's stopped state, then uraid finishes it
same_data() { cmp -n "$2" "$1" "$tmp/pattern"; }
# uraid_finishes LABEL NAME CHUNK DISKS MEMBERS...
uraid_finishes() {
    local label=$1 name=$2 chunk=$3 disks=$4; shift 4
    local u bytes off0 new0 size
    u=$(uri "$name") bytes=$(value "$label" bytes)
    mid_state "$label" "$tmp/pattern" "$bytes" "$@"
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
uraid_finishes D d 128 4 "${D[@]}"
uraid_finishes G g 128 4 "${G[@]}"
g_role=$(cut -d, -f$(($($MD_SB "${G[4]}" dev_number) + 1)) <<<"$($MD_SB "${G[4]}" roles)")
check "G: the member that went away is a spare (role $g_role)" test "${g_role:-ffff}" = ffff
g_off=$($MD_SB "${G[0]}" data_offset) g_spare=$($MD_SB "${G[4]}" data_offset)
check "G: uraid moved the spare's data offset as md does ($g_spare, want $g_off)" \
    test "$g_spare" = "$g_off"

cat >"$tmp/guest2.sh" <<'GUEST'
rc=0
echo 200000 >/proc/sys/dev/raid/speed_limit_max
judge() {
    label=$1 md=$2 bytes=$3; shift 3
    mdadm --assemble --run /dev/$md "$@" >/tmp/err 2>&1 || { echo "$label: assemble failed: $(cat /tmp/err)"; rc=1; return; }
    d=/sys/block/$md/md
    echo "$label level=$(cat $d/level) layout=$(cat $d/layout) chunk=$(cat $d/chunk_size) raid_disks=$(cat $d/raid_disks) degraded=$(cat $d/degraded) action=$(cat $d/sync_action)"
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1)"
    echo check >$d/sync_action; sleep 0.5
    while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.2; done
    echo "$label mismatch_cnt=$(cat $d/mismatch_cnt)"
    mdadm --stop /dev/$md >/dev/null 2>&1
}
GUEST
{
    echo "judge D md0 $(value D bytes) /dev/vda /dev/vdb /dev/vdc /dev/vdd"
    echo "judge G md1 $(value G bytes) /dev/vde /dev/vdf /dev/vdg /dev/vdh /dev/vdi"
    echo 'exit $rc'
} >>"$tmp/guest2.sh"
out2=$(interop_run "$tmp/guest2.sh" "${D[@]}" "${G[@]}")
rc=$?
echo "$out2"
check "boot 2: md assembled D and G (exit $rc)" test $rc -eq 0
for l in D G; do
    check "$l: md runs it as raid5 chunk 64K, 4 members, whole, idle" \
        grep -q "^$l level=raid5 layout=2 chunk=65536 raid_disks=4 degraded=0 action=idle$" <<<"$out2"
    check "$l: md reads the data of before the grow" grep -q "^$l sha=$(value "$l" sha)$" <<<"$out2"
    check "$l: md's check finds 0 mismatches" grep -q "^$l mismatch_cnt=0$" <<<"$out2"
done
exit $fails
