#!/bin/bash
# uraid tune: the run-time settings of a served array. It shows them, changes
# them (the stripe cache by heads or by memory, the background work's speed
# limits, md's names of those too), and `uraid status` (human and JSON)
# follows; a bad setting is one line, exit 2, and nothing changes, not even
# the good settings given with it; the stripe cache is resized while fio
# writes and verifies through NBD (writers that wait go on, the data reads
# back, every head comes back); serve --stripe-cache is checked; RAID 1 keeps the size and
# says it does not use it.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need fio python3
work_dir tune
echo "work in $work"

m=("$work/m0" "$work/m1" "$work/m2" "$work/m3")
truncate -s 40M "${m[@]}"
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=tn --run "${m[@]}" >/dev/null

# json KEY.KEY...: a value of `uraid tune --json tn`
json() {
    "$URAID" tune --json tn | python3 -c 'import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[k]
print(v)' "$1"
}
status_json() {
    "$URAID" status --json tn | python3 -c 'import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[k]
print(v)' "$1"
}

# ---- serve's option ----
out=$("$URAID" serve --socket="$work/x.sock" --stripe-cache=16 "${m[@]}" 2>&1); rc=$?
check "serve --stripe-cache=16 is a usage error ($out)" test $rc -eq 2
check "  in one line" one_line "$out"
out=$(timeout 20 "$URAID" serve --socket="$work/x.sock" --stripe-cache=64K "${m[@]}" 2>&1); rc=$?
check "serve --stripe-cache=64K (4 heads of 4 members) is a usage error ($out)" test $rc -eq 2
check "  it says how many heads that makes" grep -q "4 stripe heads" <<<"$out"

serve_bg "$work" tn --stripe-cache=64 "${m[@]}"

# ---- shown ----
out=$("$URAID" tune tn)
check "tune shows the size given to serve" grep -q "^stripe-cache *64 stripe heads, 1 MiB" <<<"$out"
check "tune shows the speed limits" grep -q "^speed-min *1000 KiB/s" <<<"$out"
check "tune without ARRAY finds the only one" test "$("$URAID" tune)" = "$out"
check "tune --json: size" test "$(json settings.stripe_cache.size)" = 64
check "tune --json: memory" test "$(json settings.stripe_cache.memory_bytes)" = $((64 * 4096 * 4))

# ---- changed ----
out=$("$URAID" tune tn --stripe-cache=4M --speed-min=2000 --speed-max=9000); rc=$?
check "tune changes three settings (rc $rc)" test $rc -eq 0
check "  4M is 256 heads of 4 members" grep -q "^stripe-cache *256 stripe heads, 4 MiB" <<<"$out"
check "  speed-min" grep -q "^speed-min *2000 KiB/s" <<<"$out"
check "  speed-max" grep -q "^speed-max *9000 KiB/s" <<<"$out"
check "status shows the new size" grep -q "Stripe Cache : 256 stripe heads" <<<"$("$URAID" status tn)"
check "  and counts requests that waited (rebuilding reads too), not writes" \
    grep -q "Stripe Cache : 256 stripe heads.* requests waited; [0-9]* keep row data, [0-9]* of [0-9]* 4 KiB write units found theirs$" <<<"$("$URAID" status tn)"
check "status --json: stripe_cache.size" test "$(status_json stripe_cache.size)" = 256
check "status --json: stripe_cache.used" test "$(status_json stripe_cache.used)" = True
check "status --json: background limits" test "$(status_json sync_limits.min_kib_per_s)" = 2000
"$URAID" tune tn --stripe-cache=32768 --speed-limit-min=3000 --speed-limit-max=8000 >/dev/null
check "md's names of the limits, the largest size" test "$(json settings.speed_min_kib_per_s)/$(json settings.speed_max_kib_per_s)/$(json settings.stripe_cache.size)" = 3000/8000/32768

# the write policy and the read-ahead window at run time
"$URAID" tune tn --write-cache=back --read-ahead=1M >/dev/null
check "write-cache back: tune --json" test "$(json settings.write_cache)" = back
check "  status --json: policy back" test "$(status_json write_cache.policy)" = back
check "read-ahead 1M: tune --json" test "$(json settings.read_ahead_bytes)" = 1048576
"$URAID" tune tn --write-cache=through --read-ahead=off >/dev/null
check "write-cache through again: nothing dirty left" test "$(status_json write_cache.dirty_bytes)" = 0
check "  tune --json: through" test "$(json settings.write_cache)" = through
check "read-ahead off: tune --json 0" test "$(json settings.read_ahead_bytes)" = 0

# ---- refused: one line, exit 2, nothing changed ----
before=$("$URAID" tune --json tn)
refuse() {
    local what=$1; shift
    out=$("$URAID" tune "$@" 2>&1 >/dev/null); rc=$?
    check "$what: exit 2 ($out)" test $rc -eq 2
    check "  one line" one_line "$out"
    check "  nothing changed" test "$("$URAID" tune --json tn)" = "$before"
}
refuse "16 heads" tn --stripe-cache=16
refuse "32769 heads" tn --stripe-cache=32769
refuse "1T of memory" tn --stripe-cache=1T
refuse "not a size" tn --stripe-cache=many
refuse "a good size with a minimum above the maximum" tn --stripe-cache=100 --speed-min=9000
refuse "a good size with a zero limit" tn --stripe-cache=100 --speed-max=0
refuse "a good size with an unknown setting" tn --stripe-cache=100 --colour=blue
refuse "a setting twice" tn --stripe-cache=100 --stripe-cache=200
refuse "a setting without a value" tn --stripe-cache
refuse "two arrays" tn other --stripe-cache=100
refuse "an unknown option" tn -x
refuse "a write policy uraid does not have" tn --write-cache=around
refuse "a read-ahead too large" tn --read-ahead=1G

# ---- resized under writes: fio writes and verifies through NBD ----
"$URAID" tune tn --stripe-cache=17 >/dev/null
(cd "$work" && exec fio --name=v --ioengine=nbd --uri="nbd+unix:///?socket=$work/tn.sock" \
    --rw=randwrite --bsrange=4k-192k --iodepth=32 --size=8M --verify=crc32c \
    --verify_fatal=1 --randseed=20261202 --output="$work/fio.out" >/dev/null 2>&1) &
fpid=$!
sizes=(17 32768 40 17 2M 256 17)
for i in $(seq 40); do
    "$URAID" tune tn --stripe-cache="${sizes[$((i % ${#sizes[@]}))]}" >/dev/null || break
    kill -0 $fpid 2>/dev/null || break
    sleep 0.05
done
wait $fpid; rc=$?
check "fio writes and verifies while the size changes (rc $rc)" test $rc -eq 0 || cat "$work/fio.out"
# how many waited depends on the machine's timing (test_stripe_cache makes them wait for sure)
echo "requests that waited for a stripe head: $(status_json stripe_cache.waits)"
check "  every head came back" test "$(status_json stripe_cache.in_use)" = 0
check "server stops cleanly" stop_served tn

# ---- RAID 1 keeps it, unused ----
r=("$work/r0" "$work/r1")
truncate -s 16M "${r[@]}"
"$URAID" create --level=1 --raid-devices=2 --name=mir --run "${r[@]}" >/dev/null
serve_bg "$work" mir --stripe-cache=1000 "${r[@]}"
out=$("$URAID" tune mir --stripe-cache=100); rc=$?
check "RAID 1 takes a size (rc $rc)" test $rc -eq 0
check "  and says it is not used" grep -q "^stripe-cache *100 stripe heads (not used: raid1 has no stripes)" <<<"$out"
check "  status too" grep -q "Stripe Cache : 100 stripe heads (not used" <<<"$("$URAID" status mir)"
check "RAID 1 server stops cleanly" stop_served mir

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
