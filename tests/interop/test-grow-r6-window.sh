#!/bin/bash
# Referee for the RAID 5 -> 6 kill window (issue 18): a kill between the
# members' superblock writes of the takeover+restripe update leaves the
# members written last at RAID 5, one event behind (a spare: its own older
# events). md kicks them ("strangely different superblock"); uraid takes
# them in when the restripe has not moved (md/assemble_takeover.c). This
# shows that md runs what uraid writes from there.
#  W  a RAID 5 of 4 (40 MiB images used for 24 MiB, so that the restripe
#     goes backwards as mdadm picks it) and a spare; tests/tools/
#     grow_r6_window makes the window state with member 2 and the spare
#     (the Q slot's) behind. A copy of that state (V) goes to md as is.
#     `uraid serve` takes both in (degraded 1: the Q slot being filled),
#     restripes under a throttle and is stopped part-way: every superblock
#     at the same events, RAID 6 18 -> 2, member 2 in slot 2, the spare in
#     slot 4 recovering. In the guest md assembles W, finishes the
#     restripe, whole (degraded 0), reads the data, its check finds 0.
#  V  md given the window state itself: what md makes of it (printed;
#     mdadm 4.2 aborts the assembly: "superblock on /dev/vdh doesn't match
#     others"; the kernel alone would kick the two members).
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
WINDOW=$BUILD/tests/tools/grow_r6_window
if ! [ -x "$WINDOW" ]; then
    echo "SKIP: $WINDOW not built (make check-interop builds it)"; exit 77
fi
interop_prepare || exit $?
interop_serving 20261212
need nbdinfo nbdcopy python3
MD_SB="python3 $INTEROP_DIR/md_sb.py"

uri() { echo "nbd+unix:///?socket=$tmp/$1.sock"; }
sha() { sha256sum <"$1" | cut -d' ' -f1; }
role() {
    local r
    r=$(cut -d, -f$(($($MD_SB "$1" dev_number) + 1)) <<<"$($MD_SB "$1" roles),")
    echo "${r:-ffff}"
}

W=(); V=()
for i in 0 1 2 3 4; do truncate -s 40M "$tmp/w$i"; W+=("$tmp/w$i"); V+=("$tmp/v$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --size=24M --assume-clean --bitmap=none \
    --name=w "${W[@]:0:4}" >/dev/null
serve w "${W[@]:0:4}"
w_bytes=$(nbdinfo --size "$(uri w)")
randfile "$SEED" "$w_bytes" "$tmp/w.data"
nbdcopy "$tmp/w.data" "$(uri w)"
"$URAID" add w "${W[4]}" >/dev/null
check "W: spare added" test $? -eq 0
stop w

out=$("$WINDOW" 2,4 "${W[@]}" 2>&1)
check "W: the window state made (exit $?)" test $? -eq 0
echo "$out"
for i in 0 1 2 3 4; do echo "W$i: $($MD_SB "${W[$i]}" level layout events feature_map reshape_position | tr '\n' ' ')"; done
check "W: members 2 and 4 at RAID 5, 0, 1 and 3 at RAID 6 in the restripe" \
    test "$($MD_SB "${W[0]}" level)$($MD_SB "${W[1]}" level)$($MD_SB "${W[2]}" level)$($MD_SB "${W[3]}" level)$($MD_SB "${W[4]}" level)" = "66565"
check "W: member 2 one event behind" \
    test "$(($($MD_SB "${W[2]}" events) + 1))" -eq "$($MD_SB "${W[0]}" events)"
for i in 0 1 2 3 4; do cp "${W[$i]}" "${V[$i]}"; done

# uraid takes them in, restripes part-way, is stopped
if serve w "${W[@]}"; then
    "$URAID" tune w --speed-min=200 --speed-max=400 >/dev/null
    check "W: uraid took both members in" \
        test "$(grep -c "taken in as the takeover's update would have left it" "$tmp/w.err")" -eq 2
    check "W: degraded 1 (the Q slot being filled)" grep -q "Degraded : 1 of 5" <<<"$("$URAID" status w)"
    first=$($MD_SB "${W[0]}" reshape_position)
    for _ in $(seq 300); do
        [ "$($MD_SB "${W[0]}" reshape_position)" != "$first" ] && break
        sleep 0.2
    done
    check "W: the restripe moved" test "$($MD_SB "${W[0]}" reshape_position)" != "$first"
    stop w
else
    check "W: uraid serves the window state" false
fi
for i in 0 1 2 3 4; do echo "W$i after uraid: $($MD_SB "${W[$i]}")"; done
ev=$($MD_SB "${W[0]}" events)
for i in 1 2 3 4; do
    check "W: member $i at the same events as member 0 ($ev)" test "$($MD_SB "${W[$i]}" events)" = "$ev"
done
check "W: member 2: raid6 18 -> 2 in the restripe, in slot 2, in sync" \
    test "$($MD_SB "${W[2]}" level layout new_layout | tr '\n' ' ')$(role "${W[2]}")/$(( $($MD_SB "${W[2]}" feature_map) & 0x66 ))" = "6 18 2 2/100"
check "W: the spare in slot 4, recovering (0x2, recovery_offset 0)" \
    test "$(role "${W[4]}")/$(( $($MD_SB "${W[4]}" feature_map) & 0x2 ))/$($MD_SB "${W[4]}" recovery_offset)" = "4/2/0"

cat >"$tmp/guest.sh" <<'GUEST'
export MDADM_NO_SYSTEMCTL=1
rc=0
echo 200000 >/proc/sys/dev/raid/speed_limit_max
d=/sys/block/md0/md
if mdadm --assemble --run /dev/md0 /dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde >/tmp/err 2>&1; then
    sleep 0.5
    while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.3; done
    echo "W level=$(cat $d/level) layout=$(cat $d/layout) raid_disks=$(cat $d/raid_disks) degraded=$(cat $d/degraded)"
    echo "W sha=$(head -c $BYTES /dev/md0 | sha256sum | cut -d' ' -f1)"
    echo check >$d/sync_action; sleep 0.5
    while [ "$(cat $d/sync_action)" != idle ]; do sleep 0.3; done
    echo "W mismatch_cnt=$(cat $d/mismatch_cnt)"
    mdadm --stop /dev/md0 >/dev/null 2>&1
else
    echo "W: assemble failed: $(cat /tmp/err)"; rc=1
fi
# V: md given the window state as the kill left it
dmesg -c >/dev/null 2>&1
if mdadm --assemble --run /dev/md1 /dev/vdf /dev/vdg /dev/vdh /dev/vdi /dev/vdj >/tmp/err 2>&1; then
    d=/sys/block/md1/md
    echo "V level=$(cat $d/level) raid_disks=$(cat $d/raid_disks) degraded=$(cat $d/degraded)"
    mdadm --stop /dev/md1 >/dev/null 2>&1
else
    echo "V assemble refused: $(tr '\n' ' ' </tmp/err)"
fi
echo "V kernel: $(dmesg | grep -E 'strangely|inconsistency|kick' | tr '\n' ' ')"
exit $rc
GUEST
sed -i "1a BYTES=$w_bytes" "$tmp/guest.sh"
out=$(interop_run "$tmp/guest.sh" "${W[@]}" "${V[@]}")
rc=$?
echo "$out"
check "md assembled and finished W (exit $rc)" test $rc -eq 0
check "W: md finishes it: raid6 layout 2, 5 members, whole" \
    grep -q "^W level=raid6 layout=2 raid_disks=5 degraded=0$" <<<"$out"
check "W: md reads the data" grep -q "^W sha=$(sha "$tmp/w.data")$" <<<"$out"
check "W: md's check finds 0 mismatches" grep -q "^W mismatch_cnt=0$" <<<"$out"
check "V: md does not take the members behind in (kicked or refused)" \
    grep -Eq "^V (level=raid6 raid_disks=5 degraded=[12]|assemble refused)" <<<"$out"
exit $fails
