#!/bin/bash
# Referee for RAID 5 -> RAID 6 done md's way (issue 18), both ways, in two
# boots. md 6.1 / mdadm 4.2 change the level at once (raid6, the layout's -6
# form: one more slot holding only Q, the spare in it), then restripe to the
# RAID 6 layout with the spare in the Q slot not in sync (feature 0x2,
# recovery_offset 0): the restripe writes its rows; at the end it is in sync.
# The members are 40 MiB images used for 24 MiB each (--size), so that there
# is more room after the data than before it and the restripe goes backwards
# (feature map 0x64: reshape, backwards, new offset), as mdadm picks it.
#  uraid -> md (before boot 1):
#   H  uraid grows a served RAID 5 of 4 to RAID 6 (`uraid grow --level=6
#      --add DEV`, throttled) and is stopped part-way (`uraid stop`);
#   K  the same, killed -9 part-way;
#   tests/interop/md_read.py (an independent reader) finds the data at
#   uraid's checkpoint; in boot 1 md assembles both, finishes them, its
#   check finds 0 and it reads the data.
#   S  uraid takes a served RAID 6 of 5 to RAID 5 (`uraid grow --level=5`:
#      a restripe to left-symmetric-6, then the Q member dropped, a spare);
#      md in boot 1 runs it as raid5 of 4, check 0, same data.
#  md -> uraid:
#   J  md grows a RAID 5 of 4 to RAID 6 (mdadm --grow --level=6
#      --raid-devices=5 with a spare added) and is stopped part-way in boot 1
#      (throttled, mdadm --stop); on the host md_read.py finds the data at
#      md's checkpoint, `uraid serve` finishes it (the Q member back in its
#      slot, filled), uraid's check finds 0; in boot 2 md assembles what
#      uraid finished, whole, its check finds 0 and it reads the same bytes.
#  boot 3 (md's fields next to uraid's, same cases):
#   P  uraid grows a served RAID 5 of 3 to RAID 6 of 5 (`--level=6
#      --raid-devices=5 --add` two: the takeover, then one restripe of
#      layout and member count, forwards) and is stopped part-way; Q is md
#      doing the same (mdadm --grow --level=6 --raid-devices=5, two spares)
#      stopped part-way: the superblock fields of both are printed and
#      compared (level, layouts, delta, direction bits, the Q member's
#      0x2, the new member's role); md finishes P (check 0, data), uraid
#      finishes Q (data, check 0, degraded 0 at the end, 1 while it ran);
#   T  uraid takes a RAID 6 of 5 to RAID 5 and is stopped during its
#      restripe to the -6 layout; F is md's mdadm --grow --level=5 stopped
#      the same way: fields compared; md finishes T and uraid F (data).
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
if ! "$BUILD/uraid" grow --help >/dev/null 2>&1; then
    echo "SKIP: uraid grow not built"; exit 77
fi
interop_prepare || exit $?
interop_serving 20261205
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
# role MEMBER: its role in its own superblock (hex, ffff a spare: md_sb.py
# leaves trailing spares out of its list)
role() {
    local r
    r=$(cut -d, -f$(($($MD_SB "$1" dev_number) + 1)) <<<"$($MD_SB "$1" roles),")
    echo "${r:-ffff}"
}
# wait_moved MEMBER [BITS]: until the superblock holds a reshape with BITS
# (default 0x24: backwards at the same member count; 0x4 any) whose
# position has moved, at most 60 s
wait_moved() {
    local end=$((SECONDS + 60)) first= p bits=${2:-0x24}
    while [ $SECONDS -lt $end ]; do
        p=($($MD_SB "$1" feature_map reshape_position 2>/dev/null))
        if [ -n "${p[1]:-}" ] && (( (p[0] & bits) == bits )); then
            [ -z "$first" ] && first=${p[1]}
            [ "${p[1]}" != "$first" ] && return 0
        fi
        sleep 0.2
    done
    return 1
}
# mid_state LABEL DATA BYTES MEMBERS...: a RAID 6 restripe from the -6
# layout part-way, backwards with new offsets (0x64), the last member in the
# Q slot not in sync (0x2, recovery_offset 0), md_read.py reads the data
mid_state() {
    local label=$1 data=$2 bytes=$3; shift 3
    local q=${!#}
    echo "$label: left: $($MD_SB "$1")"
    echo "$label: the Q member: $($MD_SB "$q")"
    check "$label: a raid6 restripe from layout 18 to 2, backwards, new offsets (feature_map $($MD_SB "$1" feature_map))" \
        test "$($MD_SB "$1" level layout new_layout delta_disks | tr '\n' ' ')" = "6 18 2 0 " -a \
        $(( $($MD_SB "$1" feature_map) & 0x64 )) -eq $((0x64))
    check "$label: the Q member in slot 4 (role $(role "$q")), not in sync: feature 0x2, recovery_offset 0" \
        test "$(role "$q")/$(( $($MD_SB "$q" feature_map) & 0x2 ))/$($MD_SB "$q" recovery_offset)" = "4/2/0"
    $MD_READ "$tmp/$label.mid" "$@" >/dev/null &&
        check "$label: md_read.py finds the data at the checkpoint" \
            cmp -n "$bytes" "$tmp/$label.mid" "$data"
    rm -f "$tmp/$label.mid"
}

# H: uraid, RAID 5 of 4 -> RAID 6, stopped
members h 5; H=("${M[@]}")
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --size=24M --assume-clean --bitmap=none \
    --name=h "${H[@]:0:4}" >/dev/null
serve h "${H[@]:0:4}"
fill h "$SEED"
h_bytes=$(stat -c %s "$tmp/h.data")
"$URAID" tune h --speed-min=200 --speed-max=400 >/dev/null
if grow h --level=6 --add "${H[4]}"; then
    check "H: the takeover and the restripe at once" \
        grep -q "restripe RAID 6: layout left-symmetric-6 -> left-symmetric: started" "$tmp/grow.out"
    check "H: the restripe moved within 60 s" wait_moved "${H[0]}"
    stop h
    mid_state H "$tmp/h.data" "$h_bytes" "${H[@]}"
else
    stop h
fi

# K: the same, killed -9
members k 5; K=("${M[@]}")
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --size=24M --assume-clean --bitmap=none \
    --name=k "${K[@]:0:4}" >/dev/null
serve k "${K[@]:0:4}"
fill k $((SEED + 1))
k_bytes=$(stat -c %s "$tmp/k.data")
"$URAID" tune k --speed-min=200 --speed-max=400 >/dev/null
if grow k --level=6 --add "${K[4]}"; then
    check "K: the restripe moved within 60 s" wait_moved "${K[0]}"
    kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
    mid_state K "$tmp/k.data" "$k_bytes" "${K[@]}"
else
    stop k
fi

# S: uraid, RAID 6 of 5 -> RAID 5 (restripe to left-symmetric-6, Q dropped)
members s 5; S=("${M[@]}")
"$URAID" create --level=6 --raid-devices=5 --chunk=64 --size=24M --assume-clean --bitmap=none \
    --name=s "${S[@]}" >/dev/null
serve s "${S[@]}"
fill s $((SEED + 2))
s_bytes=$(stat -c %s "$tmp/s.data")
if grow s --level=5; then
    check "S: restripe to left-symmetric-6, then the takeover waiting" \
        grep -q "then, when the restripe ends: takeover RAID 6 -> RAID 5" "$tmp/grow.out"
    for _ in $(seq 600); do [ "$($MD_SB "${S[0]}" level)" = 5 ] && break; sleep 0.2; done
    check "S: RAID 5 of 4 at the end, the Q member a spare" \
        test "$($MD_SB "${S[0]}" level layout raid_disks feature_map | tr '\n' ' ')/$(role "${S[4]}")" = "5 2 4 0x0 /ffff"
    nbdcopy "$(uri s)" "$tmp/s.export"
    check "S: the export holds the data" cmp "$tmp/s.export" "$tmp/s.data"
    rm -f "$tmp/s.export"
fi
stop s

# 16-byte numbered lines for md's array, attached read-only as the last disk
seq -f '%015.0f' 0 $((80 * 1024 * 1024 / 16 - 1)) >"$tmp/pattern"
J=()
for i in 0 1 2 3 4; do truncate -s 40M "$tmp/j$i"; J+=("$tmp/j$i"); done

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
# stopped LABEL MD SPARE DEVICES...: md grows a RAID 5 of the DEVICES to
# RAID 6 with SPARE and is stopped part-way
stopped() {
    label=$1 md=$2 spare=$3; shift 3
    echo 200000 >/proc/sys/dev/raid/speed_limit_max
    mdadm --create /dev/$md --run --assume-clean --metadata=1.2 --bitmap=none --size=24M \
        --level=5 --raid-devices=$# --chunk=64 "$@" >/tmp/err 2>&1 ||
        { fail "$label: create failed: $(cat /tmp/err)"; return; }
    bytes=$(blockdev --getsize64 /dev/$md)
    head -c $bytes /dev/$PATTERN >/dev/$md; sync
    echo 3 >/proc/sys/vm/drop_caches
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1) bytes=$bytes"
    echo 100 >/proc/sys/dev/raid/speed_limit_min
    echo 500 >/proc/sys/dev/raid/speed_limit_max
    mdadm /dev/$md --add $spare >/tmp/err 2>&1 || fail "$label: add failed: $(cat /tmp/err)"
    mdadm --grow /dev/$md --level=6 --raid-devices=$(($# + 1)) >/tmp/err 2>&1 ||
        { fail "$label: grow failed: $(cat /tmp/err)"; return; }
    d=/sys/block/$md/md
    first=
    for _ in $(seq 120); do
        p=$(cat $d/reshape_position)
        case $p in none) ;; *) [ -z "$first" ] && first=$p; [ "$p" -lt "$first" ] && break ;; esac
        sleep 0.5
    done
    echo "$label level=$(cat $d/level) layout=$(cat $d/layout) action=$(cat $d/sync_action) dir=$(cat $d/reshape_direction)"
    for x in $d/dev-*; do
        echo "$label ${x##*/} slot=$(cat $x/slot) state=$(cat $x/state) recovery_start=$(cat $x/recovery_start)"
    done
    mdadm --stop /dev/$md >/dev/null 2>&1 || fail "$label: stop failed"
    echo "$label pos=$p first=$first"
}
GUEST
{
    echo "judge H md0 $h_bytes /dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde"
    echo "judge K md1 $k_bytes /dev/vdf /dev/vdg /dev/vdh /dev/vdi /dev/vdj"
    echo "judge S md2 $s_bytes /dev/vdk /dev/vdl /dev/vdm /dev/vdn"
    echo "PATTERN=vdu"
    echo "stopped J md3 /dev/vdt /dev/vdp /dev/vdq /dev/vdr /dev/vds"
    echo 'exit $rc'
} >>"$tmp/guest1.sh"
# S's dropped member (a spare) is attached as vdo but not assembled
out=$(interop_run "$tmp/guest1.sh" "${H[@]}" "${K[@]}" "${S[@]}" "${J[@]}" "ro:$tmp/pattern")
rc=$?
echo "$out"
check "boot 1: md finished H and K, ran S, started and stopped J (exit $rc)" test $rc -eq 0
value() { sed -n "s/^$1 .*\b$2=\([^ ]*\).*/\1/p" <<<"$out" | tail -n 1; }
judged() {
    check "$1: md runs what uraid left as $2" grep -q "^$1 $2$" <<<"$out"
    check "$1: md reads the data" grep -q "^$1 sha=$(sha "$3")$" <<<"$out"
    check "$1: md's check finds 0 mismatches" grep -q "^$1 mismatch_cnt=0$" <<<"$out"
}
judged H "level=raid6 layout=2 chunk=65536 raid_disks=5 degraded=0 bytes_now=$h_bytes" "$tmp/h.data"
judged K "level=raid6 layout=2 chunk=65536 raid_disks=5 degraded=0 bytes_now=$k_bytes" "$tmp/k.data"
judged S "level=raid5 layout=2 chunk=65536 raid_disks=4 degraded=0 bytes_now=$s_bytes" "$tmp/s.data"

# md's stopped state (J: vdp..vds the RAID 5, vdt the spare that took the
# Q slot: J[0..4] in slot order), then uraid finishes it
JM=("${J[@]}")
j_bytes=$(value J bytes)
mid_state J "$tmp/pattern" "$j_bytes" "${JM[@]}"
off0=$($MD_SB "${JM[0]}" data_offset) new0=$($MD_SB "${JM[0]}" new_offset)
check "J: md moved the data offset up (new_offset $new0)" test "$new0" -gt 0
if serve j --name=j "${JM[@]}"; then
    for _ in $(seq 1200); do grep -q "reshape done" "$tmp/j.err" && break; sleep 0.25; done
    check "J: uraid continued md's restripe and finished it" grep -q "reshape done" "$tmp/j.err" ||
        cat "$tmp/j.err"
    check "J: the export has md's size" test "$(nbdinfo --size "$(uri j)")" = "$j_bytes"
    nbdcopy "$(uri j)" "$tmp/j.export"
    check "J: it holds the data md had" cmp -n "$j_bytes" "$tmp/j.export" "$tmp/pattern"
    rm -f "$tmp/j.export"
    check "J: no rebuild was needed (Degraded : 0)" grep -q "Degraded : 0 of" <<<"$("$URAID" status j)"
    "$URAID" check --wait j >/dev/null
    check "J: uraid's check finds 0 mismatches" test $? -eq 0
    stop j
    echo "J: uraid left: $($MD_SB "${JM[0]}")"
    check "J: superblocks: raid6 layout 2, 5 members, no reshape, data at $((off0 + new0))" \
        test "$($MD_SB "${JM[0]}" feature_map level layout raid_disks data_offset | tr '\n' ' ')" = \
             "0x0 6 2 5 $((off0 + new0)) "
    check "J: the Q member in slot 4, in sync (no 0x2)" \
        test "$(role "${JM[4]}")/$(( $($MD_SB "${JM[4]}" feature_map) & 0x2 ))" = "4/0"
else
    check "J: uraid serves md's array in mid-restripe" false
fi

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
    echo "judge J md0 $j_bytes /dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde"
    echo 'exit $rc'
} >>"$tmp/guest2.sh"
out2=$(interop_run "$tmp/guest2.sh" "${JM[@]}")
rc=$?
echo "$out2"
check "boot 2: md assembled J (exit $rc)" test $rc -eq 0
check "J: md runs it as raid6 layout 2, 5 members, whole, idle" \
    grep -q "^J level=raid6 layout=2 chunk=65536 raid_disks=5 degraded=0 action=idle$" <<<"$out2"
check "J: md reads the data of before the grow" grep -q "^J sha=$(value J sha)$" <<<"$out2"
check "J: md's check finds 0 mismatches" grep -q "^J mismatch_cnt=0$" <<<"$out2"

# ---- boot 3: md's fields next to uraid's ----
# shape MEMBER: the fields a same case must share between md and uraid
shape() {
    echo "$($MD_SB "$1" level new_level layout new_layout raid_disks delta_disks chunksize new_chunk | tr '\n' ' ')fm=$(( $($MD_SB "$1" feature_map) & 0x64 )) off=$( (( $($MD_SB "$1" new_offset) < 0 )) && echo down || echo up)"
}
# slot_flags ROLE MEMBERS...: the 0x2 bit of the member holding ROLE (md
# and uraid may give the two spares the other way round)
slot_flags() {
    local r=$1 m; shift
    for m in "$@"; do
        [ "$(role "$m")" = "$r" ] && { echo "slot $r recovering=$(( $($MD_SB "$m" feature_map) & 0x2 ))"; return; }
    done
    echo "slot $r: no member"
}

# P: uraid, RAID 5 of 3 -> RAID 6 of 5 in one restripe, stopped
members p 5; P=("${M[@]}")
"$URAID" create --level=5 --raid-devices=3 --chunk=64 --size=24M --assume-clean --bitmap=none \
    --name=p "${P[@]:0:3}" >/dev/null
serve p "${P[@]:0:3}"
fill p $((SEED + 3))
p_bytes=$(stat -c %s "$tmp/p.data")
"$URAID" tune p --speed-min=200 --speed-max=400 >/dev/null
if grow p --level=6 --raid-devices=5 --add "${P[3]}" "${P[4]}"; then
    check "P: the takeover and one restripe of layout and count" \
        grep -q "restripe RAID 6: 4 -> 5 members, layout left-symmetric-6 -> left-symmetric: started" "$tmp/grow.out"
    check "P: the restripe moved within 60 s" wait_moved "${P[0]}" 0x4
    check "P: degraded 1 while it runs (the Q member)" \
        grep -q "Degraded : 1 of 5" <<<"$("$URAID" status p)"
    stop p
    echo "P: uraid left: $($MD_SB "${P[0]}")"
    echo "P: the Q member: $($MD_SB "${P[3]}")"
    p_shape=$(shape "${P[0]}") p_q=$(slot_flags 3 "${P[@]:3}") p_n=$(slot_flags 4 "${P[@]:3}")
    ro=$($MD_SB "${P[3]}" recovery_offset) pos=$($MD_SB "${P[3]}" reshape_position)
    check "P: the Q member's recovery_offset is the position per new data member ($ro, $pos / 3)" \
        test "$ro" -eq $((pos / 3))
else
    stop p
fi

# T: uraid, RAID 6 of 5 -> RAID 5, stopped during the restripe to -6
members t 5; T=("${M[@]}")
"$URAID" create --level=6 --raid-devices=5 --chunk=64 --size=24M --assume-clean --bitmap=none \
    --name=t "${T[@]}" >/dev/null
serve t "${T[@]}"
fill t $((SEED + 4))
t_bytes=$(stat -c %s "$tmp/t.data")
"$URAID" tune t --speed-min=200 --speed-max=400 >/dev/null
if grow t --level=5; then
    check "T: the restripe moved within 60 s" wait_moved "${T[0]}" 0x4
    stop t
    echo "T: uraid left: $($MD_SB "${T[0]}")"
    t_shape=$(shape "${T[0]}")
else
    stop t
fi

Q=() F=()
for i in 0 1 2 3 4; do truncate -s 40M "$tmp/q$i" "$tmp/f$i"; Q+=("$tmp/q$i"); F+=("$tmp/f$i"); done
cat >"$tmp/guest3.sh" <<'GUEST'
export MDADM_NO_SYSTEMCTL=1
rc=0
fail() { echo "$*"; rc=1; }
judge() {
    label=$1 md=$2 bytes=$3; shift 3
    echo 200000 >/proc/sys/dev/raid/speed_limit_max
    mdadm --assemble --run /dev/$md "$@" >/tmp/err 2>&1 || { fail "$label: assemble failed: $(cat /tmp/err)"; return; }
    d=/sys/block/$md/md
    sleep 0.5
    while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.3; done
    echo "$label level=$(cat $d/level) layout=$(cat $d/layout) raid_disks=$(cat $d/raid_disks) degraded=$(cat $d/degraded)"
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1)"
    echo check >$d/sync_action; sleep 0.5
    while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.3; done
    echo "$label mismatch_cnt=$(cat $d/mismatch_cnt)"
    mdadm --stop /dev/$md >/dev/null 2>&1
}
# mdgrow LABEL MD LEVEL N "GROW ARGS" DEVICES...: md makes LEVEL of the
# first N DEVICES (24 MiB used of each), writes the pattern, adds the others
# as spares, grows with GROW ARGS throttled, stops once the position moved
mdgrow() {
    label=$1 md=$2 level=$3 n=$4 args=$5; shift 5
    devs= spares= i=0
    for x in "$@"; do
        if [ $i -lt $n ]; then devs="$devs $x"; else spares="$spares $x"; fi
        i=$((i + 1))
    done
    echo 200000 >/proc/sys/dev/raid/speed_limit_max
    mdadm --create /dev/$md --run --assume-clean --metadata=1.2 --bitmap=none --size=24M \
        --level=$level --raid-devices=$n --chunk=64 $devs >/tmp/err 2>&1 ||
        { fail "$label: create failed: $(cat /tmp/err)"; return; }
    bytes=$(blockdev --getsize64 /dev/$md)
    head -c $bytes /dev/$PATTERN >/dev/$md; sync
    echo 3 >/proc/sys/vm/drop_caches
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1) bytes=$bytes"
    echo 100 >/proc/sys/dev/raid/speed_limit_min
    echo 500 >/proc/sys/dev/raid/speed_limit_max
    [ -n "$spares" ] && { mdadm /dev/$md --add $spares >/tmp/err 2>&1 || fail "$label: add failed: $(cat /tmp/err)"; }
    mdadm --grow /dev/$md $args >/tmp/err 2>&1 || { fail "$label: grow $args failed: $(cat /tmp/err)"; }
    echo "$label grow said: $(tr '\n' ' ' </tmp/err)"
    d=/sys/block/$md/md
    first= p=none
    for _ in $(seq 120); do
        p=$(cat $d/reshape_position)
        case $p in none) ;; *) [ -z "$first" ] && first=$p; [ "$p" != "$first" ] && break ;; esac
        sleep 0.5
    done
    echo "$label level=$(cat $d/level) layout=$(cat $d/layout) raid_disks=$(cat $d/raid_disks) degraded=$(cat $d/degraded) action=$(cat $d/sync_action) dir=$(cat $d/reshape_direction)"
    for x in $d/dev-*; do
        echo "$label ${x##*/} slot=$(cat $x/slot) state=$(cat $x/state) recovery_start=$(cat $x/recovery_start)"
    done
    mdadm --stop /dev/$md >/tmp/err 2>&1 || fail "$label: stop failed: $(cat /tmp/err)"
    echo "$label pos=$p first=$first"
}
GUEST
{
    echo "judge P md0 $p_bytes /dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde"
    echo "judge T md1 $t_bytes /dev/vdf /dev/vdg /dev/vdh /dev/vdi /dev/vdj"
    echo "PATTERN=vdu"
    echo "mdgrow Q md2 5 3 '--level=6 --raid-devices=5' /dev/vdk /dev/vdl /dev/vdm /dev/vdn /dev/vdo"
    echo "mdgrow F md3 6 5 '--level=5' /dev/vdp /dev/vdq /dev/vdr /dev/vds /dev/vdt"
    echo 'exit $rc'
} >>"$tmp/guest3.sh"
out3=$(interop_run "$tmp/guest3.sh" "${P[@]}" "${T[@]}" "${Q[@]}" "${F[@]}" "ro:$tmp/pattern")
rc=$?
echo "$out3"
check "boot 3: md finished P and T, started and stopped Q and F (exit $rc)" test $rc -eq 0
value3() { sed -n "s/^$1 .*\b$2=\([^ ]*\).*/\1/p" <<<"$out3" | tail -n 1; }
check "P: md finishes uraid's 5 of 3 -> 6 of 5" \
    grep -q "^P level=raid6 layout=2 raid_disks=5 degraded=0$" <<<"$out3"
check "P: md reads the data" grep -q "^P sha=$(sha "$tmp/p.data")$" <<<"$out3"
check "P: md's check finds 0" grep -q "^P mismatch_cnt=0$" <<<"$out3"
# md finishes the restripe of T; the takeover to RAID 5 was uraid's next
# step (md's is mdadm's, which --stop ended too): raid6 in the -6 layout
grep "^T level" <<<"$out3"
check "T: md reads the data" grep -q "^T sha=$(sha "$tmp/t.data")$" <<<"$out3"
check "T: md's check finds 0" grep -q "^T mismatch_cnt=0$" <<<"$out3"
check "Q: md showed degraded 1 while its 5 -> 6 ran (uraid's count is md's)" \
    grep -q "^Q level=raid6 .*degraded=1 " <<<"$out3"

# md's fields next to uraid's
echo "Q: md left: $($MD_SB "${Q[0]}")"
echo "Q: md's spares: $($MD_SB "${Q[3]}"); $($MD_SB "${Q[4]}")"
echo "F: md left: $($MD_SB "${F[0]}")"
q_shape=$(shape "${Q[0]}") q_q=$(slot_flags 3 "${Q[@]:3}") q_n=$(slot_flags 4 "${Q[@]:3}")
check "5 of 3 -> 6 of 5: uraid's superblock fields are md's (md: $q_shape; uraid: ${p_shape:-})" \
    test "$q_shape" = "${p_shape:-}"
check "  the Q member: md $q_q, uraid ${p_q:-}" test "$q_q" = "${p_q:-}"
check "  the new member: md $q_n, uraid ${p_n:-}" test "$q_n" = "${p_n:-}"
for m in "${Q[@]:3}"; do
    [ "$(role "$m")" = 3 ] || continue
    ro=$($MD_SB "$m" recovery_offset) pos=$($MD_SB "$m" reshape_position)
    check "  md's Q member: recovery_offset $ro at reshape_position $pos: the position per new data member, as uraid's" \
        test "$ro" -eq $((pos / 3))
done
f_shape=$(shape "${F[0]}")
check "6 -> 5 stopped in its restripe: uraid's fields are md's (md: $f_shape; uraid: ${t_shape:-})" \
    test "$f_shape" = "${t_shape:-}"

# uraid finishes md's Q and F
for L in Q F; do
    declare -n LM=$L
    l=${L,,}
    bytes=$(value3 $L bytes)
    if serve "$l" --name="$l" "${LM[@]}"; then
        [ $L = Q ] && check "Q: uraid serves md's restripe degraded 1 (the Q member)" \
            grep -q "Degraded : 1 of 5" <<<"$("$URAID" status q)"
        for _ in $(seq 1200); do grep -q "reshape done" "$tmp/$l.err" && break; sleep 0.25; done
        check "$L: uraid finished md's restripe" grep -q "reshape done" "$tmp/$l.err" || cat "$tmp/$l.err"
        nbdcopy "$(uri "$l")" "$tmp/$l.export"
        check "$L: it holds md's data" cmp -n "$bytes" "$tmp/$l.export" "$tmp/pattern"
        rm -f "$tmp/$l.export"
        "$URAID" check --wait "$l" >/dev/null
        check "$L: uraid's check finds 0 mismatches" test $? -eq 0
        "$URAID" status "$l" | grep -E "Level|Layout|Devices|Degraded" | sed "s/^/  $L: /"
        stop "$l"
    else
        check "$L: uraid serves md's array in mid-restripe" false
    fi
    unset -n LM
done
exit $fails
