#!/bin/bash
# Referee for `uraid grow --consistency-policy=ppl`, both ways, in one boot
# of the real md driver:
#  P  uraid creates a RAID 5 (4 x 32 MiB, 64 KiB chunk, no bad-block log:
#     mdadm --update=no-bbl, crafted here), serves it, writes a pattern,
#     adds the PPL while it serves, writes the pattern again over fio
#     writes past it, and is killed (kill_whole: SIGKILL with no write cut
#     short) mid-write: md assembles it with consistency policy ppl,
#     replays the logs (resync_start none), reads the pattern, and its
#     check finds mismatch_cnt 0; md shows the same PPL place as uraid.
#  Q  md creates the same array: mdadm refuses the PPL while the bad-block
#     log sits 16 sectors after the superblock (as uraid does); assembled
#     with --update=no-bbl, mdadm --grow --consistency-policy=ppl adds it
#     and md writes a pattern: uraid examine shows the PPL line and feature
#     map mdadm -E shows (and the same as P's), uraid serves it with policy
#     ppl, reads md's bytes, its check finds 0, and it removes the PPL
#     (resync) cleanly.
#  R  metadata 1.0, --size=30M on 32 MiB members, the data areas ending 316
#     sectors before the superblocks and member 3's 380 (crafted, as
#     members of different sizes have them): uraid adds the PPL (264
#     sectors, as P's) at each member's own offset (-316, member 3 -380,
#     as mdadm's update_super("ppl") places it) and is killed mid-write; md assembles with policy ppl, replays
#     (resync_start none), reads the pattern, check 0, and mdadm -E shows
#     each member's own offset.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_serving 20261202
need fio nbdinfo nbdcopy python3
CRAFT=$INTEROP_DIR/../cli/md_craft.py

P=() Q=() R=()
for i in 0 1 2 3; do
    truncate -s 32M "$tmp/p$i" "$tmp/q$i" "$tmp/r$i"
    P+=("$tmp/p$i") Q+=("$tmp/q$i") R+=("$tmp/r$i")
done
randfile "$SEED" $((8 << 20)) "$tmp/p.data"
randfile $((SEED + 1)) $((8 << 20)) "$tmp/q.data"

# P: uraid adds the PPL while it serves
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --bitmap=none --assume-clean --name=p \
    "${P[@]}" >/dev/null
for f in "${P[@]}"; do python3 "$CRAFT" "$f" sb.bblog_offset=0 sb.bblog_size=0; done
serve p --name=p "${P[@]}"
uri="nbd+unix:///?socket=$tmp/p.sock"
nbdcopy "$tmp/p.data" "$uri"
out=$("$URAID" grow p --consistency-policy=ppl 2>&1)
check "P: uraid grow --consistency-policy=ppl: $out" test $? -eq 0
check "P: status says ppl" bash -c "'$URAID' status p | grep -q 'Consistency Policy : ppl'"
(cd "$tmp" && fio --ioengine=nbd --uri="$uri" --rw=randwrite --offset=16M --size=40M \
    --bssplit=4k/50:16k/25:64k/25 --iodepth=16 --randseed="$SEED" --time_based --runtime=30 \
    --name=p >"$tmp/fio.out" 2>&1) &
fpid=$!
nbdcopy "$tmp/p.data" "$uri"
# fio writing (64 member writes past the copy's) when the kill comes: a
# fixed 2 s could pass with fio not yet started and the array marked clean
status_until p 60 "sum(m['writes'] for m in d['members']) > $(writes_of p) + 64"
kill_whole "$spid"; wait "$spid" 2>/dev/null; spid=
wait $fpid
check "P: killed with the array dirty" bash -c "'$URAID' examine '${P[0]}' | grep -q 'State : active'"
P_PPL=$("$URAID" examine "${P[0]}" | grep 'PPL :')
P_FEAT=$("$URAID" examine "${P[0]}" | grep 'Feature Map :')
echo "P: uraid examine: $P_PPL; $P_FEAT"

# R: 1.0, members' data ending at different distances from their superblocks
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --bitmap=none --assume-clean --name=r \
    --metadata=1.0 --size=30M "${R[@]}" >/dev/null
so=$(( ($(stat -c %s "${R[0]}") / 512 - 16) & ~7 ))
for i in 0 1 2 3; do
    python3 "$CRAFT" "${R[$i]}" sb.bblog_offset=0 sb.bblog_size=0 \
        sb.data_size=$((so - (i == 3 ? 380 : 316)))
done
serve r --name=r "${R[@]}"
uri="nbd+unix:///?socket=$tmp/r.sock"
randfile $((SEED + 2)) $((8 << 20)) "$tmp/r.data"
nbdcopy "$tmp/r.data" "$uri"
out=$("$URAID" grow r --consistency-policy=ppl 2>&1)
check "R: uraid grow --consistency-policy=ppl, own offsets: $out" test $? -eq 0
(cd "$tmp" && fio --ioengine=nbd --uri="$uri" --rw=randwrite --offset=16M --size=40M \
    --bssplit=4k/50:16k/25:64k/25 --iodepth=16 --randseed="$SEED" --time_based --runtime=30 \
    --name=r >"$tmp/fio.out" 2>&1) &
fpid=$!
nbdcopy "$tmp/r.data" "$uri"
# fio writing (64 member writes past the copy's) when the kill comes: a
# fixed 2 s could pass with fio not yet started and the array marked clean
status_until r 60 "sum(m['writes'] for m in d['members']) > $(writes_of r) + 64"
kill_whole "$spid"; wait "$spid" 2>/dev/null; spid=
wait $fpid
check "R: killed with the array dirty" bash -c "'$URAID' examine '${R[0]}' | grep -q 'State : active'"
R_PPL0=$("$URAID" examine "${R[0]}" | grep 'PPL :' | sed 's/^ *//')
R_PPL3=$("$URAID" examine "${R[3]}" | grep 'PPL :' | sed 's/^ *//')
check "R: uraid examine: member 0 at -316 ($R_PPL0)" grep -q "264 sectors at offset -316 sectors" <<<"$R_PPL0"
check "R: uraid examine: member 3 at its own -380 ($R_PPL3)" grep -q "264 sectors at offset -380 sectors" <<<"$R_PPL3"

cat >"$tmp/guest.sh" <<'GUEST'
rc=0
wait_idle() { while [ "$(cat /sys/block/$1/md/sync_action)" != idle ]; do sleep 0.2; done; }
# P: uraid added the PPL and was killed mid-write
mdadm --assemble /dev/md0 /dev/vda /dev/vdb /dev/vdc /dev/vdd >/dev/null 2>&1 || { echo "P: assemble failed"; rc=1; }
echo "P policy=$(cat /sys/block/md0/md/consistency_policy)"
echo "P resync_start=$(cat /sys/block/md0/md/resync_start)"
echo "P sha=$(dd if=/dev/md0 bs=1M count=8 2>/dev/null | sha256sum | cut -d' ' -f1)"
sleep 0.5; wait_idle md0
echo check >/sys/block/md0/md/sync_action
sleep 0.5; wait_idle md0
echo "P mismatch_cnt=$(cat /sys/block/md0/md/mismatch_cnt)"
echo "P md $(mdadm -E /dev/vda | grep -E 'PPL :' | sed 's/^ *//')"
mdadm --stop /dev/md0 >/dev/null 2>&1
# Q: md creates, mdadm refuses the PPL before the bad-block log, then adds it without
mdadm --create /dev/md1 --run --assume-clean --level=5 --raid-devices=4 --chunk=64 \
    --metadata=1.2 /dev/vde /dev/vdf /dev/vdg /dev/vdh >/dev/null 2>&1 || { echo "Q: create failed"; rc=1; }
if mdadm --grow /dev/md1 --consistency-policy=ppl >/tmp/q.err 2>&1; then
    echo "Q first grow=done"
else
    echo "Q first grow=refused: $(head -1 /tmp/q.err)"
fi
mdadm --stop /dev/md1 >/dev/null 2>&1
mdadm --assemble /dev/md1 --update=no-bbl /dev/vde /dev/vdf /dev/vdg /dev/vdh >/dev/null 2>&1 ||
    { echo "Q: assemble failed"; rc=1; }
mdadm --grow /dev/md1 --consistency-policy=ppl >/dev/null 2>&1 || { echo "Q: grow failed"; rc=1; }
echo "Q policy=$(cat /sys/block/md1/md/consistency_policy)"
dd if=/host/q.data of=/dev/md1 bs=1M conv=fsync 2>/dev/null || { echo "Q: write failed"; rc=1; }
mdadm --stop /dev/md1 >/dev/null 2>&1
echo "Q md $(mdadm -E /dev/vde | grep -E 'PPL :' | sed 's/^ *//')"
echo "Q md $(mdadm -E /dev/vde | grep -E 'Feature Map :' | sed 's/^ *//')"
# R: uraid added the PPL at each member's own offset (1.0) and was killed
mdadm --assemble /dev/md2 /dev/vdi /dev/vdj /dev/vdk /dev/vdl >/dev/null 2>&1 || { echo "R: assemble failed"; rc=1; }
echo "R policy=$(cat /sys/block/md2/md/consistency_policy)"
echo "R resync_start=$(cat /sys/block/md2/md/resync_start)"
echo "R sha=$(dd if=/dev/md2 bs=1M count=8 2>/dev/null | sha256sum | cut -d' ' -f1)"
sleep 0.5; wait_idle md2
echo check >/sys/block/md2/md/sync_action
sleep 0.5; wait_idle md2
echo "R mismatch_cnt=$(cat /sys/block/md2/md/mismatch_cnt)"
dmesg | grep -iE "md2|ppl" | sed 's/^/R dmesg: /' | tail -20
mdadm --stop /dev/md2 >/dev/null 2>&1
echo "R md0 $(mdadm -E /dev/vdi | grep -E 'PPL :' | sed 's/^ *//')"
echo "R md3 $(mdadm -E /dev/vdl | grep -E 'PPL :' | sed 's/^ *//')"
exit $rc
GUEST
bash -n "$tmp/guest.sh" || exit 1
out=$(interop_run -f "$tmp/q.data" "$tmp/guest.sh" "${P[@]}" "${Q[@]}" "${R[@]}")
rc=$?
echo "$out"
check "guest script ran (exit $rc)" test $rc -eq 0
check "P: md assembles uraid's grown array with policy ppl" grep -q "^P policy=ppl$" <<<"$out"
check "P: md reads the pattern uraid wrote" \
    grep -q "^P sha=$(sha256sum <"$tmp/p.data" | cut -d' ' -f1)$" <<<"$out"
check "P: md's check finds 0 mismatches" grep -q "^P mismatch_cnt=0$" <<<"$out"
check "P: mdadm -E shows uraid's PPL place ($P_PPL)" \
    grep -qF "P md $(sed 's/^ *//' <<<"$P_PPL")" <<<"$out"
check "P: md replayed the logs uraid wrote under the PPL it added (resync_start none)" \
    grep -q "^P resync_start=none$" <<<"$out"
check "Q: mdadm refuses the PPL with the bad-block log in the way" \
    grep -q "^Q first grow=refused: .*ot enough space" <<<"$out"
check "Q: md runs its grown array with policy ppl" grep -q "^Q policy=ppl$" <<<"$out"
Q_PPL=$("$URAID" examine "${Q[0]}" | grep 'PPL :' | sed 's/^ *//')
Q_FEAT=$("$URAID" examine "${Q[0]}" | grep 'Feature Map :' | sed 's/^ *//')
check "Q: uraid examine shows md's PPL line ($Q_PPL)" grep -qF "Q md $Q_PPL" <<<"$out"
check "Q: uraid examine shows md's feature map ($Q_FEAT)" grep -qF "Q md $Q_FEAT" <<<"$out"
check "Q: md placed it where uraid does (P: $P_PPL)" test "$Q_PPL" = "$(sed 's/^ *//' <<<"$P_PPL")"
check "Q: md's feature bits are uraid's (P: $P_FEAT)" test "$Q_FEAT" = "$(sed 's/^ *//' <<<"$P_FEAT")"
check "R: md assembles uraid's array with each member's own PPL offset, policy ppl" \
    grep -q "^R policy=ppl$" <<<"$out"
check "R: md replayed the logs (resync_start none)" grep -q "^R resync_start=none$" <<<"$out"
check "R: md reads the pattern uraid wrote" \
    grep -q "^R sha=$(sha256sum <"$tmp/r.data" | cut -d' ' -f1)$" <<<"$out"
check "R: md's check finds 0 mismatches" grep -q "^R mismatch_cnt=0$" <<<"$out"
check "R: mdadm -E shows member 0's place ($R_PPL0)" grep -qF "R md0 $R_PPL0" <<<"$out"
check "R: mdadm -E shows member 3's own place ($R_PPL3)" grep -qF "R md3 $R_PPL3" <<<"$out"
serve q --name=q "${Q[@]}"
check "Q: uraid serves md's grown array with policy ppl" \
    bash -c "'$URAID' status q | grep -q 'Consistency Policy : ppl'"
nbdcopy "nbd+unix:///?socket=$tmp/q.sock" "$tmp/q.read"
check "Q: uraid reads the bytes md wrote" cmp -s <(head -c $((8 << 20)) "$tmp/q.read") "$tmp/q.data"
"$URAID" check --wait q >/dev/null
check "Q: uraid's check finds 0 mismatches" test $? -eq 0
out=$("$URAID" grow q --consistency-policy=resync 2>&1)
check "Q: uraid removes md's PPL: $out" test $? -eq 0
stop q
check "Q: no PPL on the members after the removal" \
    bash -c "! '$URAID' examine '${Q[0]}' | grep -q 'PPL :'"
exit $fails
