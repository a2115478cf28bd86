#!/bin/bash
# uraid monitor's spare groups, as mdadm's: two served RAID 1 arrays of one
# spare-group (config file); a member of the one without a spare fails ->
# the other's spare is moved to it (MoveSpare, then its rebuild), as
# `uraid status` shows; with the other degraded and no spare anywhere,
# --oneshot moves nothing and reports DegradedArray and SparesMissing; a
# spare added to the whole array goes to the degraded one at the next
# --delay look; a server killed without a word is reported
# DeviceDisappeared at the next look. Bounded waits (30 s).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need python3
work_dir monitor-spare
echo "work in $work"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

cat >"$work/recorder" <<EOF
#!/bin/sh
echo "\$*" >>"$work/events"
EOF
chmod +x "$work/recorder"
wait_for() {   # wait_for FILE PATTERN: until a line of FILE matches, 30 s at most
    for _ in $(seq 300); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "  waited 30 s for '$2' in $1; it holds:"; sed 's/^/    /' "$1" 2>/dev/null
    return 1
}
state_of() {   # state_of ARRAY PATH: the member's state in `uraid status --json`, or "none"
    "$URAID" status --json "$1" | python3 -c '
import json, sys
s = [m["state"] for m in json.load(sys.stdin)["members"] if m["device"] == sys.argv[1]]
print(s[0] if s else "none")' "$2"
}

for f in a0 a1 b0 b1 bs extra; do truncate -s 24M "$work/$f"; done
"$URAID" create --level=1 --raid-devices=2 --name=a --run "$work/a0" "$work/a1" >/dev/null
"$URAID" create --level=1 --raid-devices=2 --name=b --run "$work/b0" "$work/b1" >/dev/null
serve_bg "$work" a "$work/a0" "$work/a1" || exit 1
pids+=("$spid")
serve_bg "$work" b "$work/b0" "$work/b1" || exit 1
pids+=("$spid")
spid_b=$spid
spid=
"$URAID" add b "$work/bs" >/dev/null
uuid_b=$("$URAID" status --json b | python3 -c 'import json,sys; print(json.load(sys.stdin)["array_uuid"])')
cat >"$work/uraid.conf" <<EOF
# a by its name, b by its uuid
ARRAY /dev/md/a name=a spare-group=shelf1
ARRAY /dev/md/b uuid=$uuid_b spare-group=shelf1 spares=1
EOF

# --test: its first look reports a TestMessage for each array it sees, and
# nothing else while both are whole; the failure comes after that look, so
# what follows is the monitor acting on a change (Fail, then the move), not
# on an array it first saw degraded (DegradedArray, SparesMissing)
"$URAID" monitor --no-syslog --test --delay=2 --program="$work/recorder" \
    --config="$work/uraid.conf" 2>"$work/monitor.err" &
mpid=$!
pids+=("$mpid")
first_look() { wait_for "$work/events" '^TestMessage a$' && wait_for "$work/events" '^TestMessage b$'; }
check "the monitor's first look: a TestMessage for a and for b" first_look
check "... and nothing else (both whole): $(sort "$work/events" | tr '\n' ';')" \
    test "$(sort "$work/events" | tr '\n' ';')" = "TestMessage a;TestMessage b;"

"$URAID" fail "$work/a1" >/dev/null
check "a's Fail is reported (the monitor had seen a whole)" \
    wait_for "$work/events" "^Fail a $work/a1\$"
check "a fails a member: b's spare is moved to a (MoveSpare a b)" \
    wait_for "$work/events" '^MoveSpare a b$'
check "... and rebuilt there (SpareActive)" wait_for "$work/events" "^SpareActive a $work/bs\$"
echo "  events: $(tr '\n' ';' <"$work/events")"
check "uraid status: the spare is in sync in a, gone from b" \
    test "$(state_of a "$work/bs") $(state_of b "$work/bs")" = "in-sync none"

# b degraded too; a is whole again (a0 and bs) but has no spare (a1 is
# faulty): nothing to move
"$URAID" fail "$work/b1" >/dev/null
check "b's Fail is reported" wait_for "$work/events" "^Fail b $work/b1\$"
: >"$work/oneshot.events"
sed "s|$work/events|$work/oneshot.events|" "$work/recorder" >"$work/recorder2"
chmod +x "$work/recorder2"
"$URAID" monitor --oneshot --no-syslog --config="$work/uraid.conf" \
    --program="$work/recorder2" /dev/md/b a 2>"$work/oneshot.err"
check "--oneshot /dev/md/b a (b by its ARRAY line's name): exit 0" test $? -eq 0
check "--oneshot: DegradedArray and SparesMissing (spares=1) for b, nothing else" \
    test "$(sort "$work/oneshot.events" | tr '\n' ';')" = "DegradedArray b;SparesMissing b;"
check "no spare was moved: a's and b's members are as they were" \
    test "$(state_of a "$work/bs") $(state_of a "$work/a0") $(state_of b "$work/b0")" = \
    "in-sync in-sync in-sync"

# a spare added to a (whole) goes to b (degraded, no spare) at the next look
"$URAID" remove "$work/a1" >/dev/null
"$URAID" add a "$work/extra" >/dev/null
check "a spare added to the whole array a moves to degraded b (MoveSpare b a)" \
    wait_for "$work/events" '^MoveSpare b a$'
check "... and is rebuilt into b" wait_for "$work/events" "^SpareActive b $work/extra\$"
check "uraid status: it is in sync in b, gone from a" \
    test "$(state_of b "$work/extra") $(state_of a "$work/extra")" = "in-sync none"
check "exactly two moves" test "$(grep -c '^MoveSpare' "$work/events")" -eq 2

kill -KILL "$spid_b"
wait "$spid_b" 2>/dev/null
check "b's server killed: DeviceDisappeared b at the next look" \
    wait_for "$work/events" '^DeviceDisappeared b$'
echo "  events: $(tr '\n' ';' <"$work/events")"

echo "$fails failed"
[ $fails -eq 0 ]
