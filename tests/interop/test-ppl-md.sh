#!/bin/bash
# Referee for md's partial parity log (PPL, RAID 5), both ways, in two boots
# of the real md driver:
#  A  md creates a RAID 5 with --consistency-policy=ppl and writes a
#     pattern; uraid examine shows the PPL as mdadm does, uraid serves it and
#     reads the pattern, then is killed (SIGKILL once stopped: no write cut
#     short, see kill_whole in tests/cli/lib/common.sh) in the middle of fio
#     writes, leaving the array dirty with uraid's logs; md assembles it,
#     replays uraid's logs (no resync: resync_start none, nothing running)
#     and its check finds mismatch_cnt 0;
#  B  uraid creates a RAID 5 with --consistency-policy=ppl and writes a
#     pattern through NBD; md assembles it (policy ppl), reads the same
#     bytes, and its check finds 0;
#  C  md creates one with PPL, writes, and the guest is reset in the middle
#     of writes (sysrq b): uraid assembles it dirty, replays md's logs (no
#     resync started) and its check finds 0 mismatches.
#  D  (in boot 1, beside C) a uraid-made PPL array whose ppl.size is crafted
#     to 16 sectors (a 4 KiB header and 4 KiB of partial parity, the least
#     md takes; md resyncs rather than replays such a log of uraid's, found
#     in test-grow-ppl-md.sh): md runs it and is reset mid-write the same
#     way; uraid serves it, says what it did (replay or resync, printed) and
#     its check finds 0 mismatches; a copy taken before (E) is given to md
#     in boot 2: what md does with its own 16-sector log, printed.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_serving 20261202
need fio nbdinfo nbdcopy

A=() B=() C=() D=()
for i in 0 1 2 3; do
    truncate -s 32M "$tmp/a$i" "$tmp/b$i" "$tmp/c$i" "$tmp/d$i"
    A+=("$tmp/a$i") B+=("$tmp/b$i") C+=("$tmp/c$i") D+=("$tmp/d$i")
done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --consistency-policy=ppl --name=d \
    --assume-clean "${D[@]}" >/dev/null
for d in "${D[@]}"; do python3 "$INTEROP_DIR/../cli/md_craft.py" "$d" sb.ppl_size=16; done
randfile "$SEED" $((8 << 20)) "$tmp/a.data"
randfile $((SEED + 1)) $((8 << 20)) "$tmp/b.data"
randfile $((SEED + 2)) $((8 << 20)) "$tmp/c.data"

# ---- boot 1: md creates A and C; C is left dirty by a reset mid-write ----
cat >"$tmp/guest1.sh" <<'GUEST'
rc=0
mdadm --create /dev/md0 --run --assume-clean --level=5 --raid-devices=4 --chunk=64 \
    --metadata=1.2 --consistency-policy=ppl /dev/vda /dev/vdb /dev/vdc /dev/vdd >/dev/null 2>&1 ||
    { echo "A: create failed"; rc=1; }
echo "A policy=$(cat /sys/block/md0/md/consistency_policy)"
dd if=/host/a.data of=/dev/md0 bs=1M conv=fsync 2>/dev/null || { echo "A: write failed"; rc=1; }
mdadm --stop /dev/md0 >/dev/null 2>&1
mdadm --create /dev/md1 --run --assume-clean --level=5 --raid-devices=4 --chunk=64 \
    --metadata=1.2 --consistency-policy=ppl /dev/vde /dev/vdf /dev/vdg /dev/vdh >/dev/null 2>&1 ||
    { echo "C: create failed"; rc=1; }
dd if=/host/c.data of=/dev/md1 bs=1M conv=fsync 2>/dev/null || { echo "C: write failed"; rc=1; }
echo 100 >/sys/block/md1/md/safe_mode_delay
mdadm --assemble /dev/md2 /dev/vdi /dev/vdj /dev/vdk /dev/vdl >/dev/null 2>&1 || { echo "D: assemble failed"; rc=1; }
echo "D policy=$(cat /sys/block/md2/md/consistency_policy)"
echo 100 >/sys/block/md2/md/safe_mode_delay
# small writes past the pattern (from 16 MiB), several at once, until the reset
for md in md1 md2; do
    for j in 1 2 3 4; do
        ( k=0; while :; do
            dd if=/dev/urandom of=/dev/$md bs=4k count=1 seek=$(( 4096 + (k * 7919 + j * 104729) % 16000 )) \
                oflag=direct 2>/dev/null; k=$((k + 1)); done ) &
    done
done
sleep 2
echo "C state=$(cat /sys/block/md1/md/array_state)"
echo "D state=$(cat /sys/block/md2/md/array_state)"
echo "@@URAID-EXIT $rc 0@@"
sleep 1                 # the console drains before the reset
echo b >/proc/sysrq-trigger
GUEST
out=$(interop_run -f "$tmp/a.data" -f "$tmp/c.data" "$tmp/guest1.sh" "${A[@]}" "${C[@]}" "${D[@]}")
rc=$?
echo "$out"
check "boot 1: guest script ran (exit $rc)" test $rc -eq 0
check "A: md runs it with policy ppl" grep -q "^A policy=ppl$" <<<"$out"
check "A: uraid examine shows md's PPL line as the host's mdadm -E does" bash -c "
    diff <('$URAID' examine '${A[0]}' | grep 'PPL :') <(mdadm --examine '${A[0]}' | grep 'PPL :') &&
    '$URAID' examine '${A[0]}' | grep -q 'PPL : 2048 sectors at offset 8 sectors'"
check "C: md was active at the reset" grep -q "^C state=active$" <<<"$out"

# A: uraid serves md's array, reads md's data, is killed mid-write
serve a --name=a "${A[@]}"
nbdcopy "nbd+unix:///?socket=$tmp/a.sock" "$tmp/a.read"
check "A: uraid reads the data md wrote" cmp -s <(head -c $((8 << 20)) "$tmp/a.read") "$tmp/a.data"
check "A: status says ppl" bash -c "'$URAID' status a | grep -q 'Consistency Policy : ppl'"
(cd "$tmp" && fio --ioengine=nbd --uri="nbd+unix:///?socket=$tmp/a.sock" --rw=randwrite \
    --bssplit=4k/50:16k/25:64k/25 --iodepth=16 --randseed="$SEED" --time_based --runtime=30 \
    --name=a >"$tmp/fio.out" 2>&1) &
fpid=$!
sleep 2
kill_whole "$spid"; wait "$spid" 2>/dev/null; spid=
wait $fpid
check "A: uraid was killed with the array dirty" \
    bash -c "'$URAID' examine '${A[0]}' | grep -q 'State : active'"

# B: uraid creates, writes, stops
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --consistency-policy=ppl --name=b \
    "${B[@]}" >/dev/null
serve b "${B[@]}"
nbdcopy "$tmp/b.data" "nbd+unix:///?socket=$tmp/b.sock"
stop b
check "B: mdadm -E reads uraid's PPL" bash -c "mdadm --examine '${B[0]}' | grep -q 'PPL : 2048 sectors at offset 8'"

# C: md left it dirty; uraid replays md's logs
check "C: md left the array dirty" bash -c "'$URAID' examine '${C[0]}' | grep -q 'State : active'"
serve c --name=c "${C[@]}"
check "C: uraid replayed md's PPL, no resync needed ($(grep 'PPL replay' "$tmp/c.err"))" \
    bash -c "grep 'PPL replay' '$tmp/c.err' | grep -q 'no resync needed'"
sleep 0.5
check "C: no resync started" bash -c "! grep -q 'resync started' '$tmp/c.err'"
"$URAID" check --wait c >/dev/null
check "C: uraid's check finds 0 mismatches" test $? -eq 0
nbdcopy "nbd+unix:///?socket=$tmp/c.sock" "$tmp/c.read"
check "C: the data md wrote before (outside its last writes) reads back" \
    cmp -s <(head -c $((8 << 20)) "$tmp/c.read") "$tmp/c.data"
stop c

# D: md's 16-sector logs, left by the reset
check "D: md ran it with policy ppl and was active at the reset" \
    bash -c 'grep -q "^D policy=ppl$" <<<"$1" && grep -q "^D state=active$" <<<"$1"' _ "$out"
E=()
for i in 0 1 2 3; do cp "${D[$i]}" "$tmp/e$i"; E+=("$tmp/e$i"); done
serve d --name=d "${D[@]}"
echo "  D: uraid: $(grep 'PPL replay' "$tmp/d.err")"
sleep 0.5
if grep -q 'resync started' "$tmp/d.err"; then
    echo "  D: uraid resyncs"
    for _ in $(seq 300); do grep -q 'resync done' "$tmp/d.err" && break; sleep 0.1; done
fi
"$URAID" check --wait d >/dev/null
check "D: uraid's check finds 0 mismatches" test $? -eq 0
stop d

# ---- boot 2: md assembles A (uraid's logs) and B (uraid's array) ----
cat >"$tmp/guest2.sh" <<'GUEST'
rc=0
mdadm --assemble /dev/md0 /dev/vda /dev/vdb /dev/vdc /dev/vdd >/dev/null 2>&1 || { echo "A: assemble failed"; rc=1; }
echo "A resync_start=$(cat /sys/block/md0/md/resync_start)"
echo "A sync_action=$(cat /sys/block/md0/md/sync_action)"
echo "A policy=$(cat /sys/block/md0/md/consistency_policy)"
dmesg | grep -i ppl | sed 's/^/A dmesg: /'
echo check >/sys/block/md0/md/sync_action
sleep 1
mdadm --wait /dev/md0 || true
echo "A mismatch_cnt=$(cat /sys/block/md0/md/mismatch_cnt)"
mdadm --stop /dev/md0 >/dev/null 2>&1
mdadm --assemble /dev/md1 /dev/vde /dev/vdf /dev/vdg /dev/vdh >/dev/null 2>&1 || { echo "B: assemble failed"; rc=1; }
echo "B policy=$(cat /sys/block/md1/md/consistency_policy)"
echo "B sha=$(dd if=/dev/md1 bs=1M count=8 2>/dev/null | sha256sum | cut -d' ' -f1)"
echo check >/sys/block/md1/md/sync_action
sleep 1
mdadm --wait /dev/md1 || true
echo "B mismatch_cnt=$(cat /sys/block/md1/md/mismatch_cnt)"
mdadm --stop /dev/md1 >/dev/null 2>&1
mdadm --assemble /dev/md2 /dev/vdi /dev/vdj /dev/vdk /dev/vdl >/dev/null 2>&1 || { echo "E: assemble failed"; rc=1; }
echo "E resync_start=$(cat /sys/block/md2/md/resync_start) sync_action=$(cat /sys/block/md2/md/sync_action)"
dmesg | grep -i 'md2' | grep -i -E 'ppl|recover|resync|clean' | sed 's/^/E dmesg: /'
mdadm --stop /dev/md2 >/dev/null 2>&1
exit $rc
GUEST
out=$(interop_run "$tmp/guest2.sh" "${A[@]}" "${B[@]}" "${E[@]}")
rc=$?
echo "$out"
check "boot 2: guest script ran (exit $rc)" test $rc -eq 0
# uraid was killed with every write whole (kill_whole: stopped first, then
# SIGKILL): md finds every log valid and replays them instead of resyncing.
# (A bare SIGKILL could cut the last log write short at a page, which md
# rightly answers with a resync; that is why this was once only said.)
check "A: md replayed uraid's logs: no resync (resync_start none)" \
    grep -q '^A resync_start=none$' <<<"$out"
check "A: md runs no resync after the replay (idle)" grep -q '^A sync_action=idle$' <<<"$out"
check "A: md's check finds 0 mismatches" grep -q "^A mismatch_cnt=0$" <<<"$out"
check "B: md runs uraid's array with policy ppl" grep -q "^B policy=ppl$" <<<"$out"
check "B: md reads the bytes uraid wrote" \
    grep -q "^B sha=$(sha256sum <"$tmp/b.data" | cut -d' ' -f1)$" <<<"$out"
check "B: md's check finds 0 mismatches" grep -q "^B mismatch_cnt=0$" <<<"$out"
check "E: md assembled its own 16-sector logs (said above: $(grep '^E resync_start' <<<"$out"))" \
    grep -q "^E resync_start=" <<<"$out"
exit $fails
