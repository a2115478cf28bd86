#!/bin/bash
# Referee for `uraid grow --add` on linear (issue 18), uraid -> md: a linear
# of 2 image files (24 MiB) served by uraid gets a third (16 MiB) appended
# with `uraid grow --add`, then its whole grown export is written with
# seeded bytes and uraid stops. md assembles the 3 members as linear with
# raid_disks 3, the grown size, and reads the same sha256.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
if ! "$BUILD/uraid" grow --help >/dev/null 2>&1; then
    echo "SKIP: uraid grow not built"; exit 77
fi
interop_prepare || exit $?
interop_serving 20261218
need nbdinfo nbdcopy

uri() { echo "nbd+unix:///?socket=$tmp/$1.sock"; }
L=("$tmp/l0" "$tmp/l1" "$tmp/l2")
truncate -s 24M "${L[0]}" "${L[1]}"
truncate -s 16M "${L[2]}"
"$URAID" create --level=linear --raid-devices=2 --name=l --run "${L[0]}" "${L[1]}" >/dev/null
serve l "${L[0]}" "${L[1]}"
old=$(nbdinfo --size "$(uri l)")
out=$("$URAID" grow l --add "${L[2]}" 2>&1)
check "uraid grow l --add l2 (exit $?): $out" grep -q "linear 2 -> 3 members" <<<"$out"
new=$(nbdinfo --size "$(uri l)")
check "the export grew ($old -> $new bytes)" test "$new" -gt "$old"
randfile "$SEED" "$new" "$tmp/l.data"
nbdcopy "$tmp/l.data" "$(uri l)"
stop l
sha=$(sha256sum <"$tmp/l.data" | cut -d' ' -f1)

cat >"$tmp/guest.sh" <<GUEST
mdadm --assemble --run /dev/md0 /dev/vda /dev/vdb /dev/vdc >/tmp/err 2>&1 || { echo "assemble failed: \$(cat /tmp/err)"; exit 1; }
d=/sys/block/md0/md
echo "L level=\$(cat \$d/level) raid_disks=\$(cat \$d/raid_disks) bytes_now=\$(blockdev --getsize64 /dev/md0)"
echo "L sha=\$(head -c $new /dev/md0 | sha256sum | cut -d' ' -f1)"
mdadm --stop /dev/md0 >/dev/null 2>&1
exit 0
GUEST
out=$(interop_run "$tmp/guest.sh" "${L[@]}")
rc=$?
echo "$out"
check "guest script ran: md assembled the grown linear (exit $rc)" test $rc -eq 0
check "md runs it as linear of 3 with the grown size" \
    grep -q "^L level=linear raid_disks=3 bytes_now=$new$" <<<"$out"
check "md reads the data uraid wrote (sha256 $sha)" grep -q "^L sha=$sha$" <<<"$out"
exit $fails
