#!/bin/bash
# One argument rule for the verbs that act on a served array: ARRAY first
# (an export name, the export socket or the control socket), or members
# alone when each belongs to exactly one served array; every argument is
# checked before anything changes (a wrong one leaves the array as it was).
# mdadm's keywords (fail/remove detached, remove failed), mdadm spellings
# answered with a hint, one-line errors, --json with a version, --test.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need python3
work_dir grammar
echo "work in $work"

# state NAME: "slot:state" of each member of served array NAME, sorted
state() {
    "$URAID" status --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(sorted("%s:%s" % (m["device"].rsplit("/", 1)[-1], m["state"]) for m in d["members"])))'
}
# one_line TEXT: exactly one line
one_line() { [ "$(printf '%s\n' "$1" | wc -l)" -eq 1 ] || { echo "$1"; return 1; }; }

m=("$work/d0.img" "$work/d1.img" "$work/d2.img")
truncate -s 16M "${m[@]}"
"$URAID" create --level=5 --raid-devices=3 --name=g --run "${m[@]}" >/dev/null || exit 1
serve_bg "$work" g "${m[@]}" || exit 1
before=$(state g)
echo "members: $before"

# ---- a wrong argument changes nothing ----
out=$(cd "$work" && "$URAID" fail nosuch d1.img 2>&1); rc=$?
check "fail NOTANARRAY MEMBER: refused, exit $rc, one line ($out)" \
    bash -c "[ $rc -ne 0 ] && [ \$(wc -l <<<\"\$0\") -eq 1 ]" "$out"
check "  and d1.img is still in sync" test "$(state g)" = "$before"
out=$(cd "$work" && "$URAID" fail d1.img nosuch.img 2>&1); rc=$?
check "fail MEMBER NOTAMEMBER: refused, exit $rc ($out)" test $rc -ne 0
check "  and d1.img is still in sync" test "$(state g)" = "$before"
out=$(cd "$work" && "$URAID" fail g d1.img nosuch.img 2>&1); rc=$?
check "fail ARRAY MEMBER NOTAMEMBER: refused, exit $rc ($out)" test $rc -ne 0
check "  and d1.img is still in sync" test "$(state g)" = "$before"
out=$(cd "$work" && "$URAID" remove g d1.img 2>&1); rc=$?
check "remove ARRAY IN-SYNC-MEMBER: refused before anything, exit $rc ($out)" test $rc -ne 0
check "  nothing changed" test "$(state g)" = "$before"

# ---- ARRAY first, as mdadm /dev/md0 --fail ----
out=$(cd "$work" && "$URAID" fail g d1.img 2>&1); rc=$?
check "fail ARRAY MEMBER: exit $rc ($out)" test $rc -eq 0
check "  d1.img is faulty" bash -c "grep -q 'd1.img:faulty' <<<\"$(state g)\""
