#!/bin/bash
# Referee for `uraid grow` (issue 18), uraid -> md, in one boot:
#  R  uraid restripes a served RAID 5 from 3 to 4 members (`uraid grow
#     --raid-devices=4 --add DEV`, throttled with `uraid tune --speed-max`) and
#     is stopped (`uraid stop`) once its superblocks hold a position past 0;
#  K  the same for a chunk change 128K -> 64K, ended by kill -9;
#  then md assembles each, goes on from uraid's checkpoint, finishes, its
#  check finds 0 and it reads the data written before. Before the boot,
#  tests/interop/md_read.py (an independent reader) checks that the stopped
#  images hold the data at uraid's checkpoint.
# And after each of the changes that move no data, md assembles the result
# with the right level, layout, members and size, its check finds 0 (where
# there is redundancy) and it reads the data:
#  T0 RAID 0 (2) -> RAID 5 (--level=5: md's takeover, parity-last, degraded;
#     md goes on to restripe it to left-symmetric)
#  M  RAID 1 2 -> 3 mirrors (--raid-devices=3 --add DEV, rebuilt)
#  T1 RAID 1 (2) -> RAID 5 (--level=5: same members, left-symmetric)
#  T10 RAID 10 near-2 (4) -> RAID 0 (--level=0 after one member of each pair
#     was failed and removed, as md requires)
#  S  --size=max after the member files grew (the new part resynced)
#  BM --bitmap=internal, then none, then internal again
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
if ! "$BUILD/uraid" grow --help >/dev/null 2>&1; then
    echo "SKIP: uraid grow not built"; exit 77
fi
interop_prepare || exit $?
interop_serving 20261203
need nbdinfo nbdcopy python3
MD_SB="python3 $INTEROP_DIR/md_sb.py"
MD_READ="python3 $INTEROP_DIR/md_read.py"

# members NAME N SIZE: N image files $tmp/NAME0.. in the array M
members() { M=(); for ((i = 0; i < $2; i++)); do truncate -s "$3" "$tmp/$1$i"; M+=("$tmp/$1$i"); done; }
uri() { echo "nbd+unix:///?socket=$tmp/$1.sock"; }
# fill NAME SEED: the export's whole size of seeded bytes, kept in $tmp/NAME.data
fill() {
    randfile "$2" "$(nbdinfo --size "$(uri "$1")")" "$tmp/$1.data"
    nbdcopy "$tmp/$1.data" "$(uri "$1")"
}
sha() { sha256sum <"$1" | cut -d' ' -f1; }
# grow NAME ARGS...: uraid grow, its output shown; check it succeeded
grow() {
    local name=$1; shift
    "$URAID" grow "$name" "$@" >"$tmp/grow.out" 2>&1
    check "$name: uraid grow $* (exit $?)" test $? -eq 0 || { cat "$tmp/grow.out"; return 1; }
}
# wait_log NAME TEXT: until the server's log has TEXT (at most 5 min)
wait_log() { for _ in $(seq 1200); do grep -q "$2" "$tmp/$1.err" && return 0; sleep 0.25; done; return 1; }
# wait_position MEMBER: until the superblock holds a reshape position past 0
# (at most 60 s)
wait_position() {
    local end=$((SECONDS + 60)) p
    while [ $SECONDS -lt $end ]; do
        p=$($MD_SB "$1" feature_map reshape_position 2>/dev/null | tr '\n' ' ')
        set -- "$1" $p
        [ -n "$3" ] && (( ($2 & 0x4) != 0 )) && [ "$3" -gt 0 ] && return 0
        sleep 0.2
    done
    return 1
}
# mid_state LABEL NAME BYTES MEMBERS...: the stopped images hold a reshape
# part-way and the data read with md's rule (md_read.py) is $tmp/NAME.data
mid_state() {
    local label=$1 name=$2 bytes=$3; shift 3
    echo "$label: uraid left: $($MD_SB "$1")"
    check "$label: superblocks hold a reshape part-way (position $($MD_SB "$1" reshape_position))" \
        bash -c "(( ($($MD_SB "$1" feature_map) & 0x4) != 0 )) && [ $($MD_SB "$1" reshape_position) -gt 0 ]"
    $MD_READ "$tmp/$label.mid" "$@" >/dev/null &&
        check "$label: md_read.py finds the data at uraid's checkpoint" \
            cmp -n "$bytes" "$tmp/$label.mid" "$tmp/$name.data"
    rm -f "$tmp/$label.mid"
}

# R: RAID 5 3 -> 4, uraid stopped part-way
members r 4 48M; R=("${M[@]}")
"$URAID" create --level=5 --raid-devices=3 --assume-clean --name=r "${R[@]:0:3}" >/dev/null
serve r "${R[@]:0:3}"
fill r "$SEED"
r_bytes=$(stat -c %s "$tmp/r.data")
"$URAID" tune r --speed-max=2000 >/dev/null
if grow r --raid-devices=4 --add "${R[3]}"; then
    check "R: a checkpoint past 0 within 60 s" wait_position "${R[0]}"
    stop r
    mid_state R r "$r_bytes" "${R[@]}"
else
    stop r
fi

# K: RAID 5 chunk 128K -> 64K, uraid killed part-way
members k 4 48M; K=("${M[@]}")
"$URAID" create --level=5 --raid-devices=4 --chunk=128 --assume-clean --name=k "${K[@]}" >/dev/null
serve k "${K[@]}"
fill k $((SEED + 1))
k_bytes=$(stat -c %s "$tmp/k.data")
"$URAID" tune k --speed-max=2000 >/dev/null
if grow k --chunk=64; then
    check "K: a checkpoint past 0 within 60 s" wait_position "${K[0]}"
    kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
    mid_state K k "$k_bytes" "${K[@]}"
else
    stop k
fi

# T0: RAID 0 (2) -> RAID 5
members t 3 24M; T0=("${M[@]}")
"$URAID" create --level=0 --raid-devices=2 --chunk=64 --name=t "${T0[@]:0:2}" >/dev/null
serve t "${T0[@]:0:2}"
fill t $((SEED + 2))
grow t --level=5
stop t

# M: RAID 1 2 -> 3 mirrors
members m 3 24M; MM=("${M[@]}")
"$URAID" create --level=1 --raid-devices=2 --assume-clean --name=m "${MM[@]:0:2}" >/dev/null
serve m "${MM[@]:0:2}"
fill m $((SEED + 3))
grow m --raid-devices=3 --add "${MM[2]}"
check "M: the new mirror rebuilt" wait_log m "recovery done"
stop m

# T1: RAID 1 (2) -> RAID 5
members o 2 24M; T1=("${M[@]}")
"$URAID" create --level=1 --raid-devices=2 --assume-clean --name=o "${T1[@]}" >/dev/null
serve o "${T1[@]}"
fill o $((SEED + 4))
grow o --level=5
stop o

# T10: RAID 10 n2 (4) -> RAID 0, after one member of each pair went
members x 4 24M; T10=("${M[@]}")
"$URAID" create --level=10 --layout=n2 --raid-devices=4 --chunk=64 --assume-clean --name=x "${T10[@]}" >/dev/null
serve x "${T10[@]}"
fill x $((SEED + 5))
"$URAID" fail "${T10[1]}" >/dev/null && "$URAID" remove "${T10[1]}" >/dev/null &&
    "$URAID" fail "${T10[3]}" >/dev/null && "$URAID" remove "${T10[3]}" >/dev/null
check "T10: members 1 and 3 failed and removed" test $? -eq 0
grow x --level=0
stop x
T10_MD=("${T10[0]}" "${T10[2]}")

# S: --size=max after the member files grew from 16 to 24 MiB
members s 3 16M; S=("${M[@]}")
"$URAID" create --level=5 --raid-devices=3 --chunk=64 --assume-clean --name=s "${S[@]}" >/dev/null
serve s "${S[@]}"
fill s $((SEED + 6))
stop s
truncate -s 24M "${S[@]}"
serve s "${S[@]}"
s_old=$(stat -c %s "$tmp/s.data")
grow s --size=max
s_new=$(nbdinfo --size "$(uri s)")
check "S: the export grew ($s_old -> $s_new bytes)" test "$s_new" -gt "$s_old"
check "S: the new part resynced" wait_log s "resync done"
stop s

# BM: bitmap internal, none, internal
members b 3 24M; BM=("${M[@]}")
"$URAID" create --level=5 --raid-devices=3 --chunk=64 --assume-clean --bitmap=none --name=b "${BM[@]}" >/dev/null
serve b "${BM[@]}"
fill b $((SEED + 7))
grow b --bitmap=internal
check "BM: feature 0x1 after --bitmap=internal" bash -c "(( ($($MD_SB "${BM[0]}" feature_map) & 0x1) != 0 ))"
grow b --bitmap=none
check "BM: no feature 0x1 after --bitmap=none" bash -c "(( ($($MD_SB "${BM[0]}" feature_map) & 0x1) == 0 ))"
grow b --bitmap=internal
stop b

cat >"$tmp/guest.sh" <<'GUEST'
# LABEL level=... layout=... raid_disks=... degraded=... bytes_now=...,
# LABEL sha=..., LABEL mismatch_cnt=... (check only when SYNC is given)
rc=0
judge() {   # judge LABEL MD BYTES CHECK(yes|no) DEVICES...
    label=$1 md=$2 bytes=$3 chk=$4; shift 4
    mdadm --assemble --run /dev/$md "$@" >/tmp/err 2>&1 || { echo "$label: assemble failed: $(cat /tmp/err)"; rc=1; return; }
    d=/sys/block/$md/md
    if [ -e $d/sync_action ]; then
        while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.3; done
    fi
    echo "$label level=$(cat $d/level) layout=$(cat $d/layout 2>/dev/null) raid_disks=$(cat $d/raid_disks) degraded=$(cat $d/degraded 2>/dev/null) bytes_now=$(blockdev --getsize64 /dev/$md) bitmap=$(cat $d/bitmap/location 2>/dev/null)"
    echo "$label sha=$(head -c $bytes /dev/$md | sha256sum | cut -d' ' -f1)"
    if [ $chk = yes ]; then
        echo check >$d/sync_action; sleep 0.5
        while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.3; done
        echo "$label mismatch_cnt=$(cat $d/mismatch_cnt)"
    fi
    mdadm --stop /dev/$md >/dev/null 2>&1
}
echo 200000 >/proc/sys/dev/raid/speed_limit_max
GUEST
# the guest's device names, in attach order
devs=(vd{a..z}) next=0
attach=()
judge_line() {   # judge_line LABEL MD BYTES CHECK MEMBERS...
    local label=$1 md=$2 bytes=$3 chk=$4 line; shift 4
    line="judge $label $md $bytes $chk"
    for f in "$@"; do line+=" /dev/${devs[next]}"; next=$((next + 1)); attach+=("$f"); done
    echo "$line" >>"$tmp/guest.sh"
}
judge_line R md0 "$r_bytes" yes "${R[@]}"
judge_line K md1 "$k_bytes" yes "${K[@]}"
judge_line T0 md2 "$(stat -c %s "$tmp/t.data")" no "${T0[@]:0:2}"
judge_line M md3 "$(stat -c %s "$tmp/m.data")" yes "${MM[@]}"
judge_line T1 md4 "$(stat -c %s "$tmp/o.data")" yes "${T1[@]}"
judge_line T10 md5 "$(stat -c %s "$tmp/x.data")" no "${T10_MD[@]}"
judge_line S md6 "$s_old" yes "${S[@]}"
judge_line BM md7 "$(stat -c %s "$tmp/b.data")" yes "${BM[@]}"
echo 'exit $rc' >>"$tmp/guest.sh"

out=$(interop_run "$tmp/guest.sh" "${attach[@]}")
rc=$?
echo "$out"
check "guest script ran: md assembled every array (exit $rc)" test $rc -eq 0
# judged LABEL WHAT STATE-REGEX DATA-FILE CHECK
judged() {
    local l=$1 what=$2 state=$3 data=$4 chk=$5
    check "$l: md runs it $what" grep -Eq "^$l $state" <<<"$out"
    check "$l: md reads the data" grep -q "^$l sha=$(sha "$data")$" <<<"$out"
    [ "$chk" = yes ] && check "$l: md's check finds 0 mismatches" grep -q "^$l mismatch_cnt=0$" <<<"$out"
    return 0
}
judged R "as RAID 5 of 4, finished, whole, 1.5 x the size" \
    "level=raid5 layout=2 raid_disks=4 degraded=0 bytes_now=$((r_bytes * 3 / 2)) " "$tmp/r.data" yes
judged K "as RAID 5 of 4 with the 64K chunk, whole" \
    "level=raid5 layout=2 raid_disks=4 degraded=0 bytes_now=$k_bytes " "$tmp/k.data" yes
# md's own RAID 0 -> 5 goes on to restripe to left-symmetric; either is right
judged T0 "as RAID 5 (parity-last, or left-symmetric once restriped) of 3 slots, one missing, same size" \
    "level=raid5 layout=(5|2) raid_disks=3 degraded=1 bytes_now=$(stat -c %s "$tmp/t.data") " "$tmp/t.data" no
judged M "as RAID 1 of 3 mirrors, whole" \
    "level=raid1 layout=[0-9]* raid_disks=3 degraded=0 " "$tmp/m.data" yes
judged T1 "as RAID 5 left-symmetric of 2 members, same size" \
    "level=raid5 layout=2 raid_disks=2 degraded=0 bytes_now=$(stat -c %s "$tmp/o.data") " "$tmp/o.data" yes
judged T10 "as RAID 0 of 2 members, same size" \
    "level=raid0 layout=-?[0-9]* raid_disks=2 degraded=[0-9]* bytes_now=$(stat -c %s "$tmp/x.data") " "$tmp/x.data" no
judged S "with the grown size" \
    "level=raid5 layout=2 raid_disks=3 degraded=0 bytes_now=$s_new " "$tmp/s.data" yes
judged BM "with its internal bitmap" \
    "level=raid5 layout=2 raid_disks=3 degraded=0 bytes_now=[0-9]+ bitmap=\+[0-9]+" "$tmp/b.data" yes
exit $fails
