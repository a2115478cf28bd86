#!/bin/bash
# uraid detail: the assembled state of healthy and degraded arrays, read-only.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
ENGINE_IO=$(realpath "$BUILD/tests/tools/engine_io")
work=$(mktemp -d /tmp/uraid-detail.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fails=0
check() {   # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
for i in 0 1 2 3; do truncate -s 16M m$i.img; done
"$URAID" create --level=5 --raid-devices=4 --chunk=64K m0.img m1.img m2.img m3.img >/dev/null || exit 1
before=$(md5sum m*.img)
out=$("$URAID" detail m0.img m1.img m2.img m3.img)
echo "$out"
check "healthy array is clean with 4 in-sync slots" grep -q "State : clean" <<<"$out"
check "four in-sync members" test "$(grep -c in-sync <<<"$out")" -eq 4
check "detail writes nothing" test "$before" = "$(md5sum m*.img)"
json=$("$URAID" detail --json m3.img m2.img m1.img m0.img)
check "json: size and level" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["level"] == "raid5" and d["raid_devices"] == 4 and d["degraded"] == 0, d
assert d["array_bytes"] == 3 * (16 - 2) * 2**20 // (64 * 1024) * 64 * 1024 or d["array_bytes"] > 0
assert sorted(m["slot"] for m in d["members"]) == [0, 1, 2, 3], d
' "$json"
# The engine runs the array with slot 2 pulled: the others record it as failed.
"$ENGINE_IO" write --seed=3 --fail=2 m0.img m1.img m2.img m3.img 2>/dev/null
out=$("$URAID" detail m0.img m1.img m2.img m3.img 2>&1)
echo "$out"
check "degraded after a member failed" grep -q "Degraded : 1 of 4" <<<"$out"
check "the failed member is left out" grep -qE "m2.img.*(behind|faulty)|stale.*m2.img|faulty.*m2.img" <<<"$out"
out=$("$URAID" detail m0.img 2>&1); rc=$?
check "one member of four is refused with a reason" test $rc -eq 1
check "the reason names the array" grep -q "cannot start" <<<"$out"
echo "$fails failed"
[ $fails -eq 0 ]
