#!/bin/bash
# Referee smoke test: the harness boots the real md driver, which creates a
# RAID 5 over four virtio images, takes a known pattern, resyncs and checks
# parity (mismatch_cnt 0); the host's mdadm then reads the same superblocks
# from the image files. Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?

interop_tmpdir || exit 1
tmp=$INTEROP_TMP
interop_images "$tmp" 4 32M || exit 1
# 8 MiB of 16-byte numbered lines: deterministic and different in every stripe.
seq -f '%015.0f' 0 524287 >"$tmp/pattern"
want_sum=$(sha256sum <"$tmp/pattern" | cut -d' ' -f1)

cat >"$tmp/guest.sh" <<'GUEST'
set -e
mdadm --create /dev/md0 --run --level=5 --raid-devices=4 --chunk=64 --metadata=1.2 \
    /dev/vda /dev/vdb /dev/vdc /dev/vdd
dd if=/host/pattern of=/dev/md0 bs=1M conv=fsync 2>/dev/null
mdadm --wait /dev/md0 || true          # exit 1 just means "nothing to wait for"
echo 3 >/proc/sys/vm/drop_caches
dd if=/dev/md0 bs=1M count=8 2>/dev/null | cmp - /host/pattern
echo "readback-sha256=$(dd if=/dev/md0 bs=1M count=8 2>/dev/null | sha256sum | cut -d' ' -f1)"
echo check >/sys/block/md0/md/sync_action
sleep 1
mdadm --wait /dev/md0 || true
[ "$(cat /sys/block/md0/md/last_sync_action)" = check ] || { echo "check did not run"; exit 1; }
echo "sync_action=$(cat /sys/block/md0/md/sync_action)"
echo "mismatch_cnt=$(cat /sys/block/md0/md/mismatch_cnt)"
mdadm --detail /dev/md0
mdadm --examine /dev/vda
mdadm --stop /dev/md0
GUEST

start=$EPOCHREALTIME
out=$(interop_run -f "$tmp/pattern" "$tmp/guest.sh" "$tmp"/disk{0,1,2,3}.img)
rc=$?
echo "$out"
echo "smoke: guest run took $(_interop_secs "$start" "$EPOCHREALTIME") s"
fail() { echo "FAIL: $*"; exit 1; }
[ $rc = 0 ] || fail "guest script exit $rc"
grep -qx 'mismatch_cnt=0' <<<"$out" || fail "mismatch_cnt is not 0 after check"
grep -qx "readback-sha256=$want_sum" <<<"$out" || fail "data read back differs from the pattern"
guest_uuid=$(awk '/Array UUID :/ { print $4; exit }' <<<"$out")
[ -n "$guest_uuid" ] || fail "guest printed no Array UUID"
for i in 0 1 2 3; do
    host_uuid=$(mdadm --examine "$tmp/disk$i.img" 2>&1 | awk '/Array UUID :/ { print $4 }')
    [ "$host_uuid" = "$guest_uuid" ] ||
        fail "host mdadm --examine disk$i.img: Array UUID '$host_uuid', guest saw '$guest_uuid'"
done
echo "PASS: RAID 5 created by md, mismatch_cnt 0, host and guest agree on Array UUID $guest_uuid"
