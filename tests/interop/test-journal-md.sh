#!/bin/bash
# Referee for md's write journal (raid5-cache), both ways, in one boot:
#  J  uraid creates a RAID 5 with --write-journal and writes data through
#     it; then a crash's log is left on the journal as md writes it
#     (tests/tools/journal_inject, through uraid's own format/r5l.c), the
#     members stale: md assembles it, replays the log (every logged row is
#     on the members afterwards) and its check finds mismatch_cnt 0;
#  K  md creates a RAID 5 with a journal, switches it to write-back (data
#     acknowledged once in the journal, rows with data and no parity there),
#     writes, and the guest is reset without stopping the array (sysrq b):
#     uraid replays the journal when it serves the array, the data md wrote
#     reads back, and uraid's check finds 0 mismatches;
#  L  uraid serves a RAID 5 with a journal (write-through at run time), fio
#     writes and uraid is killed (-9) mid-write: md assembles it, finds
#     the superblocks clean (uraid keeps them so while written, as md's
#     MD_JOURNAL_CLEAN: no resync), replays uraid's log, its check finds 0
#     mismatches, and every write fio
#     completed reads back afterwards;
#  M  the same with uraid's journal in write-back (serve --journal-mode=
#     write-back: cached writes logged as data-only rows, destaged later):
#     md replays the data-only rows and the rest, its check finds 0
#     mismatches, and every write fio completed reads back;
#  N  (a second boot) uraid's write-back destages logged as parity only
#     (their data in earlier record blocks), the members stale: md replays
#     each row from both blocks, its check finds 0 mismatches, and the data
#     reads back.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_serving 20261202
need nbdcopy fio
INJECT=$BUILD/tests/tools/journal_inject
[ -x "$INJECT" ] || { echo "SKIP: $INJECT not built (make $INJECT)"; exit 77; }

# uraid_jarray X: uraid creates RAID 5 X, four 32 MiB members $tmp/X0..X3
# (in $mem) and an 8 MiB journal $tmp/Xj
uraid_jarray() {
    local i
    mem=()
    for i in 0 1 2 3; do truncate -s 32M "$tmp/$1$i"; mem+=("$tmp/$1$i"); done
    truncate -s 8M "$tmp/$1j"
    "$URAID" create --level=5 --raid-devices=4 --chunk=64 --name="$1" --write-journal="$tmp/$1j" \
        "${mem[@]}" >/dev/null
}
# fio_on X SEED OUT ARGS...: fio's random writes, verified (crc32c), through
# uraid's export of X, its output in $tmp/OUT
fio_on() {
    local x=$1 seed=$2 out=$3
    shift 3
    (cd "$tmp" && fio --ioengine=nbd --uri="nbd+unix:///?socket=$tmp/$x.sock" --rw=randwrite \
        --verify=crc32c --verify_fatal=1 --randseed="$seed" --size=80M --name="$x" "$@" \
        >"$tmp/$out" 2>&1)
}
# kill_mid FIO: FIO's writes for up to 30 s (their state saved for the
# verify after), the server ($spid) killed -9 two seconds in
kill_mid() {
    "$1" --do_verify=0 --verify_state_save=1 --time_based --runtime=30 &
    local fpid=$!
    sleep 2
    kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
    wait $fpid
}

# J: uraid's journal array, a crash's log on it
uraid_jarray j
J=("${mem[@]}")
randfile "$SEED" $((8 << 20)) "$tmp/j.data"
serve j "${J[@]}" "$tmp/jj"
nbdcopy "$tmp/j.data" "nbd+unix:///?socket=$tmp/j.sock"
stop j
"$INJECT" inject "$SEED" 16 "$tmp/j.exp" "$tmp/jj" "${J[@]}"
check "J: the members are stale before md starts" \
    bash -c "! '$INJECT' check '$tmp/j.exp' ${J[*]} >/dev/null 2>&1"

# L: uraid's run-time journal, killed mid-write
uraid_jarray l
L=("${mem[@]}")
fio_l() { fio_on l "$SEED" fio.out --bssplit=4k/50:16k/25:64k/25 --iodepth=16 "$@"; }
serve l "${L[@]}" "$tmp/lj"
fio_l --do_verify=0 --end_fsync=1
kill_mid fio_l

# M: uraid's journal in write-back, killed mid-write
uraid_jarray m
M=("${mem[@]}")
fio_m() { fio_on m $((SEED + 2)) fiom.out --bssplit=4k/50:16k/25:64k/25 --iodepth=16 "$@"; }
serve m --journal-mode=write-back "${M[@]}" "$tmp/mj"
fio_m --do_verify=0 --end_fsync=1
kill_mid fio_m

# K: md's array, its members and journal
K=()
for i in 0 1 2 3; do truncate -s 32M "$tmp/k$i"; K+=("$tmp/k$i"); done
truncate -s 8M "$tmp/kj"
randfile $((SEED + 1)) $((4 << 20)) "$tmp/k.data"

cat >"$tmp/guest.sh" <<'GUEST'
rc=0
mdadm --examine /dev/vde | grep -q 'Device Role : Journal' && echo "J examine journal"
mdadm --assemble /dev/md0 --run /dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde >/dev/null 2>&1 ||
    { echo "J: assemble failed"; dmesg | tail -20; rc=1; }
echo "J journal=$(cat /sys/block/md0/md/journal_mode 2>/dev/null)"
echo "J degraded=$(cat /sys/block/md0/md/degraded)"
echo check >/sys/block/md0/md/sync_action
sleep 1
mdadm --wait /dev/md0 >/dev/null 2>&1 || true
echo "J mismatch_cnt=$(cat /sys/block/md0/md/mismatch_cnt)"
dmesg | grep -i "md/raid:md0" | sed 's/^/J dmesg /'
mdadm --stop /dev/md0 >/dev/null 2>&1
# after_kill CASE MD DEVICE...: uraid's journal array after a kill, assembled
# by md: its resync_start, its replay (dmesg), a check's mismatch_cnt
after_kill() {
    local c=$1 md=$2
    shift 2
    mdadm --assemble "/dev/$md" --run "$@" >/dev/null 2>&1 ||
        { echo "$c: assemble failed"; dmesg | tail -20; rc=1; }
    echo "$c resync_start=$(cat /sys/block/$md/md/resync_start)"
    sleep 1
    mdadm --wait "/dev/$md" >/dev/null 2>&1 || true
    echo check >/sys/block/$md/md/sync_action
    sleep 1
    mdadm --wait "/dev/$md" >/dev/null 2>&1 || true
    echo "$c mismatch_cnt=$(cat /sys/block/$md/md/mismatch_cnt)"
    dmesg | grep -i "md/raid:$md.*recovering" | sed "s/^.*$md: /$c dmesg /"
    mdadm --stop "/dev/$md" >/dev/null 2>&1
}
# L: uraid's journal after a kill
after_kill L md2 /dev/vdk /dev/vdl /dev/vdm /dev/vdn /dev/vdo
# M: uraid's write-back journal after a kill
after_kill M md3 /dev/vdp /dev/vdq /dev/vdr /dev/vds /dev/vdt
# K: md's write-back journal, reset mid-life
mdadm --create /dev/md1 --run --assume-clean --level=5 --raid-devices=4 --chunk=64 \
    --metadata=1.2 --write-journal=/dev/vdj /dev/vdf /dev/vdg /dev/vdh /dev/vdi >/dev/null 2>&1 ||
    { echo "K: create failed"; rc=1; }
echo write-back >/sys/block/md1/md/journal_mode
echo "K journal=$(cat /sys/block/md1/md/journal_mode)"
dd if=/host/k.data of=/dev/md1 bs=1M seek=4 conv=fsync 2>/dev/null || { echo "K: write failed"; rc=1; }
echo "K state=$(cat /sys/block/md1/md/array_state)"
echo "@@URAID-EXIT $rc 0@@"
sleep 1
echo b >/proc/sysrq-trigger
GUEST

out=$(interop_run -f "$tmp/k.data" "$tmp/guest.sh" "${J[@]}" "$tmp/jj" "${K[@]}" "$tmp/kj" \
    "${L[@]}" "$tmp/lj" "${M[@]}" "$tmp/mj")
rc=$?
echo "$out"
check "guest script ran (exit $rc)" test $rc -eq 0
check "J: md's mdadm sees uraid's journal device" grep -q "^J examine journal$" <<<"$out"
check "J: md assembled uraid's journal array whole" grep -q "^J degraded=0$" <<<"$out"
check "J: md replayed the log: every logged row is on the members" \
    "$INJECT" check "$tmp/j.exp" "${J[@]}"
check "J: md's check then finds 0 mismatches" grep -q "^J mismatch_cnt=0$" <<<"$out"

check "K: md ran the journal write-back" grep -q "^K journal=write-through \[write-back\]$" <<<"$out"
serve k --name=k "${K[@]}" "$tmp/kj"
grep "journal:" "$tmp/k.err" | sed 's/^/  /'
check "K: uraid replayed md's journal" grep -q "rows written\|with parity recomputed" "$tmp/k.err"
nbdcopy "nbd+unix:///?socket=$tmp/k.sock" "$tmp/k.read"
check "K: the data md wrote reads back" \
    cmp -s <(dd if="$tmp/k.read" bs=1M skip=4 count=4 status=none) "$tmp/k.data"
"$URAID" check --wait k >/dev/null
check "K: uraid's check finds 0 mismatches" test $? -eq 0
stop k

# after_kill_ok CASE X FIO OUT DEVICE...: the guest's lines for CASE (its
# after_kill): md found uraid's superblocks clean (MD_JOURNAL_CLEAN: no
# resync, the replay alone) and its check 0 mismatches; then uraid serves X
# again and every write FIO completed before the kill reads back ($tmp/OUT)
after_kill_ok() {
    local c=$1 x=$2 fio=$3 fout=$4
    shift 4
    check "$c: md found uraid's superblocks clean (MD_JOURNAL_CLEAN): no resync, the replay alone" \
        grep -q "^$c resync_start=none$" <<<"$out"
    check "$c: md's check then finds 0 mismatches" grep -q "^$c mismatch_cnt=0$" <<<"$out"
    serve "$x" "$@"
    "$fio" --verify_only --verify_state_load=1
    check "$c: every write fio completed before the kill reads back" grep -q "err= 0" "$tmp/$fout"
    stop "$x"
}
check "L: md replayed uraid's run-time journal" grep -q "^L dmesg recovering [0-9]* data-only stripes and [1-9][0-9]* data-parity" <<<"$out"
after_kill_ok L l fio_l fio.out "${L[@]}" "$tmp/lj"
check "M: md replayed uraid's write-back journal" grep -q "^M dmesg recovering [0-9]* data-only stripes" <<<"$out"
after_kill_ok M m fio_m fiom.out "${M[@]}" "$tmp/mj"

# N: uraid's write-back destages log only the parity of pages already in
# the journal (md's R5_InJournal rule): DATA in a record's meta block, the
# row's PARITY in a later one. A crash after every log write and before
# any member write: the members and the journal's superblock as they were
# served before the writes, the journal's ring as a clean stop left it (the
# records, then the destages' parity, all after that tail). md (a second
# boot) must gather each row across meta blocks, write data and parity, and
# its check find 0 mismatches; then uraid serves the data fio wrote.
uraid_jarray n
N=("${mem[@]}")
fio_n() { fio_on n $((SEED + 3)) fion.out --bs=4k --iodepth=1 --io_size=512k "$@"; }
serve n --journal-mode=write-back "${N[@]}" "$tmp/nj"
for f in "${N[@]}" "$tmp/nj"; do cp "$f" "$f.before"; done
fio_n --do_verify=0 --verify_state_save=1
stop n
ndoff=$("$URAID" examine "$tmp/nj" | awk '/Data Offset/ { print $4 }')
for f in "${N[@]}"; do mv "$f.before" "$f"; done
dd if="$tmp/nj.before" of="$tmp/nj" bs=512 count="$ndoff" conv=notrunc status=none
rm -f "$tmp/nj.before"
cat >"$tmp/guest-n.sh" <<'GUEST'
rc=0
mdadm --assemble /dev/md4 --run /dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde >/dev/null 2>&1 ||
    { echo "N: assemble failed"; dmesg | tail -20; rc=1; }
dmesg | grep -i "md/raid:md4.*recovering" | sed 's/^.*md4: /N dmesg /'
sleep 1
mdadm --wait /dev/md4 >/dev/null 2>&1 || true
echo check >/sys/block/md4/md/sync_action
sleep 1
mdadm --wait /dev/md4 >/dev/null 2>&1 || true
echo "N mismatch_cnt=$(cat /sys/block/md4/md/mismatch_cnt)"
mdadm --stop /dev/md4 >/dev/null 2>&1
echo "@@URAID-EXIT $rc 0@@"
GUEST
out=$(interop_run "$tmp/guest-n.sh" "${N[@]}" "$tmp/nj")
rc=$?
echo "$out"
check "N: guest script ran (exit $rc)" test $rc -eq 0
check "N: md gathered each record's data and its later parity: data-parity stripes, no data-only" \
    grep -q "^N dmesg recovering 0 data-only stripes and [1-9][0-9]* data-parity" <<<"$out"
check "N: md's check then finds 0 mismatches" grep -q "^N mismatch_cnt=0$" <<<"$out"
serve n "${N[@]}" "$tmp/nj"
fio_n --verify_only --verify_state_load=1
check "N: every write fio completed reads back" grep -q "err= 0" "$tmp/fion.out"
stop n
exit $fails
