#!/bin/bash
# Referee for reshapes md started (issue 18), md -> uraid, in two boots:
#  A  RAID 5 3 -> 4 members (chunk 512K; md moves the data offset 4096 -> 1024)
#  B  RAID 6 4 -> 5 members (chunk 128K)
#  C  RAID 5 4 -> 5 members (chunk 64K, left-asymmetric)
# Boot 1: md creates each array over 48 MiB images, fills it with a numbered
# pattern (16-byte lines: a wrong sector says where it came from), starts the
# grow throttled and is stopped (mdadm --stop)
# once its superblocks hold a reshape position past 0. On the host: the raw
# superblocks show the reshape, tests/interop/md_read.py (an independent
# reader) finds the data intact in the stopped images, then `uraid serve`
# continues the reshape from md's checkpoint and finishes it: the export holds
# the data, has the new size, uraid's check finds 0, the superblocks hold the
# new geometry. Boot 2: md assembles what uraid finished, its check finds 0 and
# it reads the same bytes.
# Not here: restripes that keep the member count (chunk, layout, RAID 5 -> 6).
# Stopped by mdadm --stop, md 6.1 leaves data of the new layout over old data
# it still needs just past its checkpoint (measured: 3584 sectors per member
# with 1024 of room), and its own resume then returns wrong data: no one can
# continue those.
# Exit 0 pass, 77 skip, else fail.
# URAID_GROW_MD_ONLY=1: only boot 1 and the checks of md's own stopped state
# (the referee's half, which needs no uraid).
. "$(dirname "$0")/lib.sh"
if [ -z "$URAID_GROW_MD_ONLY" ] && ! "$BUILD/uraid" grow --help >/dev/null 2>&1; then
    echo "SKIP: uraid grow not built"; exit 77
fi
interop_prepare || exit $?
interop_serving 20261202
need nbdinfo nbdcopy python3
MD_SB="python3 $INTEROP_DIR/md_sb.py"
MD_READ="python3 $INTEROP_DIR/md_read.py"

A=() B=() C=()
for i in 0 1 2 3; do truncate -s 48M "$tmp/a$i"; A+=("$tmp/a$i"); done
for i in 0 1 2 3 4; do truncate -s 48M "$tmp/b$i" "$tmp/c$i"; B+=("$tmp/b$i"); C+=("$tmp/c$i"); done
# 16-byte numbered lines, more than the largest array holds; attached as the
# last disk (read-only), which costs the boot less than a copy in the initramfs
seq -f '%015.0f' 0 $((150 * 1024 * 1024 / 16 - 1)) >"$tmp/pattern"

cat >"$tmp/guest1.sh" <<'GUEST'
# md starts each grow and is stopped part-way: LABEL sha=... bytes=... pos=...
export MDADM_NO_SYSTEMCTL=1
rc=0
fail() { echo "$*"; rc=1; }
# grow_stopped LABEL MD CREATE-ARGS -- ADD-DEV -- GROW-ARGS
grow_stopped() {
    label=$1 md=$2; shift 2
    create="" add="" grow=""
    while [ "$1" != -- ]; do create="$create $1"; shift; done; shift
    while [ "$1" != -- ]; do add="$add $1"; shift; done; shift
    grow="$*"
    echo 200000 >/proc/sys/dev/raid/speed_limit_max
    mdadm --create /dev/$md --run --assume-clean --metadata=1.2 --bitmap=none $create \
        >/tmp/err 2>&1 || { fail "$label: create failed: $(cat /tmp/err)"; return; }
    bytes=$(blockdev --getsize64 /dev/$md)
    head -c $bytes /dev/vdo >/dev/$md; sync
    echo 3 >/proc/sys/vm/drop_caches
    echo "$label sha=$(sha256sum </dev/$md | cut -d' ' -f1) bytes=$bytes"
    echo 100 >/proc/sys/dev/raid/speed_limit_min
    echo 2000 >/proc/sys/dev/raid/speed_limit_max
    [ -n "$add" ] && { mdadm /dev/$md --add $add >/tmp/err 2>&1 || fail "$label: add failed: $(cat /tmp/err)"; }
    mdadm --grow /dev/$md $grow >/tmp/err 2>&1 || { fail "$label: grow failed: $(cat /tmp/err)"; return; }
    # md's checkpoint (sysfs reshape_position = the superblocks' value) past 0
    for _ in $(seq 120); do
        p=$(cat /sys/block/$md/md/reshape_position)
        [ "$p" != 0 ] && [ "$p" != none ] && break
        sleep 0.5
    done
    mdadm --stop /dev/$md >/dev/null 2>&1 || fail "$label: stop failed"
    echo "$label pos=$p"
}
grow_stopped A md0 --level=5 --raid-devices=3 /dev/vda /dev/vdb /dev/vdc -- /dev/vdd -- --raid-devices=4
grow_stopped B md1 --level=6 --raid-devices=4 --chunk=128 /dev/vde /dev/vdf /dev/vdg /dev/vdh -- /dev/vdi -- \
    --raid-devices=5
grow_stopped C md2 --level=5 --raid-devices=4 --chunk=64 --layout=left-asymmetric /dev/vdj /dev/vdk /dev/vdl \
    /dev/vdm -- /dev/vdn -- --raid-devices=5
exit $rc
GUEST
out=$(interop_run "$tmp/guest1.sh" "${A[@]}" "${B[@]}" "${C[@]}" "ro:$tmp/pattern")
rc=$?
echo "$out"
check "boot 1: md created, started and stopped the three grows (exit $rc)" test $rc -eq 0 || exit 1

# value LABEL KEY: KEY=... from the guest's line for LABEL
value() { sed -n "s/^$1 .*\b$2=\([^ ]*\).*/\1/p" <<<"$out" | tail -n 1; }

# same_data FILE BYTES: FILE's first BYTES are the pattern's; else say where not
same_data() {
    local where
    where=$(cmp <(head -c "$2" "$1") <(head -c "$2" "$tmp/pattern") 2>&1) && return 0
    echo "    $where"
    return 1
}
# md_mid LABEL MEMBERS...: what md left on the members (reshape active, its
# position, the data intact when read with the two geometries split there)
md_mid() {
    local label=$1; shift
    local fm pos want
    fm=$($MD_SB "$1" feature_map) pos=$($MD_SB "$1" reshape_position)
    echo "$label: md left: $($MD_SB "$1")"
    # mdadm --stop writes md's latest position, at or past the one seen before it
    check "$label: md's superblocks hold a reshape at $pos (guest saw $(value "$label" pos) before the stop)" \
        bash -c "(( ($fm & 0x4) != 0 )) && [ '$pos' -ge '$(value "$label" pos)' ] && [ '$pos' -gt 0 ]"
    $MD_READ "$tmp/$label.mid" "$@" >/dev/null &&
        check "$label: md_read.py finds md's stopped state consistent (the data at the checkpoint)" \
            same_data "$tmp/$label.mid" "$(value "$label" bytes)"
    rm -f "$tmp/$label.mid"
}
md_mid A "${A[@]}"
md_mid B "${B[@]}"
md_mid C "${C[@]}"
[ -n "$URAID_GROW_MD_ONLY" ] && exit $fails

# uraid_finishes LABEL NAME NEW-BYTES LEVEL LAYOUT CHUNK DISKS MEMBERS...
uraid_finishes() {
    local label=$1 name=$2 new_bytes=$3 level=$4 layout=$5 chunk=$6 disks=$7
    shift 7
    local uri="nbd+unix:///?socket=$tmp/$name.sock" bytes want off0 new0 size
    bytes=$(value "$label" bytes) want=$(value "$label" sha)
    off0=$($MD_SB "$1" data_offset) new0=$($MD_SB "$1" new_offset)
    if ! serve "$name" --name="$name" "$@"; then
        check "$label: uraid serves md's array in mid-reshape" false; return
    fi
    for _ in $(seq 1200); do grep -q "reshape done" "$tmp/$name.err" && break; sleep 0.25; done
    check "$label: uraid continued md's reshape and finished it" grep -q "reshape done" "$tmp/$name.err" ||
        cat "$tmp/$name.err"
    size=$(nbdinfo --size "$uri")
    check "$label: the export has the new size ($size, want $new_bytes)" test "$size" = "$new_bytes"
    nbdcopy "$uri" "$tmp/$name.export"
    check "$label: it holds the data md had before the grow" same_data "$tmp/$name.export" "$bytes"
    rm -f "$tmp/$name.export"
    "$URAID" check --wait "$name" >/dev/null
    check "$label: uraid's check finds 0 mismatches" test $? -eq 0
    stop "$name"
    echo "$label: uraid left: $($MD_SB "$1")"
    check "$label: superblocks: no reshape, RAID $level layout $layout chunk $chunk, $disks members, data at $((off0 + new0))" \
        test "$($MD_SB "$1" feature_map level layout chunksize raid_disks data_offset | tr '\n' ' ')" = \
             "0x0 $level $layout $chunk $disks $((off0 + new0)) "
}
uraid_finishes A a $(($(value A bytes) * 3 / 2)) 5 2 1024 4 "${A[@]}"
uraid_finishes B b $(($(value B bytes) * 3 / 2)) 6 2 256 5 "${B[@]}"
uraid_finishes C c $(($(value C bytes) * 4 / 3)) 5 0 128 5 "${C[@]}"

cat >"$tmp/guest2.sh" <<'GUEST'
# md assembles what uraid finished: LABEL level=... sha=... mismatch_cnt=...
rc=0
echo 200000 >/proc/sys/dev/raid/speed_limit_max
judge() {   # judge LABEL MD BYTES DEVICES...
    label=$1 md=$2 bytes=$3; shift 3
    mdadm --assemble --run /dev/$md "$@" >/tmp/err 2>&1 || { echo "$label: assemble failed: $(cat /tmp/err)"; rc=1; return; }
    d=/sys/block/$md/md
    echo "$label level=$(cat $d/level) layout=$(cat $d/layout) chunk=$(cat $d/chunk_size) raid_disks=$(cat $d/raid_disks) degraded=$(cat $d/degraded) action=$(cat $d/sync_action) bytes_now=$(blockdev --getsize64 /dev/$md)"
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1)"
    echo check >$d/sync_action; sleep 0.5
    while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.2; done
    echo "$label mismatch_cnt=$(cat $d/mismatch_cnt)"
    mdadm --stop /dev/$md >/dev/null 2>&1
}
GUEST
echo "judge A md0 $(value A bytes) /dev/vda /dev/vdb /dev/vdc /dev/vdd" >>"$tmp/guest2.sh"
echo "judge B md1 $(value B bytes) /dev/vde /dev/vdf /dev/vdg /dev/vdh /dev/vdi" >>"$tmp/guest2.sh"
echo "judge C md2 $(value C bytes) /dev/vdj /dev/vdk /dev/vdl /dev/vdm /dev/vdn" >>"$tmp/guest2.sh"
echo 'exit $rc' >>"$tmp/guest2.sh"
out2=$(interop_run "$tmp/guest2.sh" "${A[@]}" "${B[@]}" "${C[@]}")
rc=$?
echo "$out2"
check "boot 2: md assembled the three arrays (exit $rc)" test $rc -eq 0
# md_judges LABEL LEVEL LAYOUT CHUNK-BYTES DISKS NEW-BYTES
md_judges() {
    local l=$1
    check "$l: md runs it as raid$2 layout $3 chunk $4, $5 members, whole, $6 bytes, idle" \
        grep -q "^$l level=raid$2 layout=$3 chunk=$4 raid_disks=$5 degraded=0 action=idle bytes_now=$6$" <<<"$out2"
    check "$l: md reads the data of before the grow" grep -q "^$l sha=$(value "$l" sha)$" <<<"$out2"
    check "$l: md's check finds 0 mismatches" grep -q "^$l mismatch_cnt=0$" <<<"$out2"
}
md_judges A 5 2 524288 4 $(($(value A bytes) * 3 / 2))
md_judges B 6 2 131072 5 $(($(value B bytes) * 3 / 2))
md_judges C 5 0 65536 5 $(($(value C bytes) * 4 / 3))
exit $fails
