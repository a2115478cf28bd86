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

touch "$work/g"
out=$(cd "$work" && "$URAID" fail g d1.img 2>&1); rc=$?
check "fail NAME MEMBER with a file NAME here too: ambiguous, exit $rc ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'both a file here and a served array' <<<\"\$0\"" "$out"
check "  nothing changed" test "$(state g)" = "$before"
rm "$work/g"

# ---- ARRAY first, as mdadm /dev/md0 --fail ----
out=$(cd "$work" && "$URAID" fail g d1.img 2>&1); rc=$?
check "fail ARRAY MEMBER: exit $rc ($out)" test $rc -eq 0
check "  d1.img is faulty" bash -c "grep -q 'd1.img:faulty' <<<\"$(state g)\""
out=$("$URAID" status --test g >/dev/null 2>&1); rc=$?
check "status --test of a degraded array: exit 1 (got $rc)" test $rc -eq 1

# ---- remove ARRAY failed; the member-path-only form ----
out=$("$URAID" remove --json g failed 2>&1); rc=$?
check "remove ARRAY failed --json: exit $rc, d1.img removed, version 1" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["version"] == 1 and d["command"] == "remove", d
c = d["changes"]
assert len(c) == 1 and c[0]["device"].endswith("/d1.img") and c[0]["done"], d
assert c[0]["before"] == "faulty" and c[0]["after"] == "removed" and c[0]["array"] == "g", d
' "$out"
check "  the array has two members left" test "$(state g)" = "d0.img:in-sync d2.img:in-sync"
out=$("$URAID" add --force --json g "${m[1]}" 2>&1); rc=$?
check "add ARRAY DEVICE --json: exit $rc" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["version"] == 1 and d["command"] == "add", d
c = d["changes"][0]
assert c["done"] and c["before"] is None and c["after"] in ("spare", "re-added"), d
' "$out" || echo "$out"
out=$("$URAID" add g "$work/nothere.img" 2>&1); rc=$?
check "add ARRAY MISSING-FILE: exit $rc" test $rc -ne 0
check "  in one line" one_line "$out"
out=$("$URAID" add g "${m[0]}" 2>&1); rc=$?
check "add ARRAY MEMBER-ALREADY: refused, exit $rc ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'member of the array already' <<<\"\$0\"" "$out"
# wait for the rebuild onto d1.img (a 16 MiB member: seconds)
for _ in $(seq 200); do
    [ "$(state g)" = "d0.img:in-sync d1.img:in-sync d2.img:in-sync" ] && break
    sleep 0.1
done
check "the added member is rebuilt into its slot" \
    test "$(state g)" = "d0.img:in-sync d1.img:in-sync d2.img:in-sync"
out=$("$URAID" status --test g >/dev/null 2>&1); rc=$?
check "status --test of a healthy array: exit 0 (got $rc)" test $rc -eq 0
out=$(cd "$work" && "$URAID" fail --json d2.img 2>&1); rc=$?
check "fail MEMBER alone (one served array has it): exit $rc" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["version"] == 1 and d["changes"][0]["after"] == "faulty", d
' "$out"
out=$(cd "$work" && "$URAID" remove d2.img 2>&1); rc=$?
check "remove MEMBER alone: exit $rc ($out)" test $rc -eq 0
out=$("$URAID" add --force g "${m[2]}" 2>&1)
for _ in $(seq 200); do
    [ "$(state g)" = "d0.img:in-sync d1.img:in-sync d2.img:in-sync" ] && break
    sleep 0.1
done
check "d2.img back in sync" test "$(state g)" = "d0.img:in-sync d1.img:in-sync d2.img:in-sync"

# ---- detached: the member's file is gone (a renamed one is not) ----
mv "${m[2]}" "$work/moved.img"
out=$("$URAID" fail g detached 2>&1); rc=$?
check "fail ARRAY detached with d2.img renamed: none detached, exit $rc ($out)" \
    bash -c "[ $rc -eq 0 ] && grep -q 'no member is detached' <<<\"\$0\"" "$out"
check "  every member still in sync" \
    test "$(state g)" = "$before"
mv "$work/moved.img" "${m[2]}"
rm "${m[2]}"
out=$("$URAID" remove g detached 2>&1); rc=$?
check "remove ARRAY detached of an in-sync member: refused, exit $rc ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'fail it first' <<<\"\$0\"" "$out"
out=$("$URAID" fail g detached 2>&1); rc=$?
check "fail ARRAY detached: exit $rc ($out)" test $rc -eq 0
check "  d2.img (deleted) is faulty, the others in sync" \
    test "$(state g)" = "d0.img:in-sync d1.img:in-sync d2.img:faulty"
out=$("$URAID" remove --json g detached 2>&1); rc=$?
check "remove ARRAY detached: exit $rc, d2.img removed" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert [c["device"].rsplit("/", 1)[-1] for c in d["changes"] if c["done"]] == ["d2.img"], d
' "$out"
out=$("$URAID" fail g detached 2>&1); rc=$?
check "fail ARRAY detached with none: exit $rc, says so ($out)" \
    bash -c "[ $rc -eq 0 ] && grep -q 'no member is detached' <<<\"\$0\"" "$out"
truncate -s 16M "${m[2]}"
"$URAID" speed --max=1000 g >/dev/null
"$URAID" add --force g "${m[2]}" >/dev/null
out=$("$URAID" remove g "${m[2]}" 2>&1); rc=$?
check "remove ARRAY MEMBER-BEING-REBUILT: refused on the client, exit $rc ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'is rebuilding.*fail it first' <<<\"\$0\"" "$out"
"$URAID" speed --max=200000 g >/dev/null
for _ in $(seq 200); do
    [ "$(state g)" = "d0.img:in-sync d1.img:in-sync d2.img:in-sync" ] && break
    sleep 0.1
done
check "d2.img (a new file) rebuilt into its slot" \
    test "$(state g)" = "d0.img:in-sync d1.img:in-sync d2.img:in-sync"

# ---- a path the control socket cannot carry: refused at serve and add ----
tabbed=$(printf '%s/t\tab.img' "$work")
truncate -s 16M "$tabbed"
out=$("$URAID" add g "$tabbed" 2>&1); rc=$?
check "add ARRAY PATH-WITH-A-TAB: refused, exit $rc ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'tab or a newline' <<<\"\$0\"" "$out"
check "  nothing changed" test "$(state g)" = "d0.img:in-sync d1.img:in-sync d2.img:in-sync"
out=$("$URAID" serve --socket="$work/t.sock" "$tabbed" 2>&1); rc=$?
check "serve PATH-WITH-A-TAB: refused, exit $rc ($out)" \
    bash -c "[ $rc -eq 2 ] && grep -q 'tab or a newline' <<<\"\$0\"" "$out"
rm -f "$tabbed"

# ---- an older server (owns answers ok without a state, no name verb) ----
# a stand-in on a Unix socket that logs each request and stops by itself
truncate -s 1M "$work/old.img"
python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); s.settimeout(30)
log = open(sys.argv[2], "a")
try:
    while True:
        c, _ = s.accept()
        c.sendall(b"uraid-ctl 1\n")
        line = b""
        while not line.endswith(b"\n"):
            b = c.recv(4096)
            if not b: break
            line += b
        f = line.decode().rstrip("\n").split("\t")
        log.write("\t".join(f) + "\n"); log.flush()
        if f[0] in ("owns", "fail", "remove"): c.sendall(b"ok\n")
        else: c.sendall(("error 2 unknown control request \x27%s\x27\n" % f[0]).encode())
        c.close()
except socket.timeout:
    pass
' "$work/old.ctl" "$work/old.log" &
oldpid=$!
for _ in $(seq 300); do [ -S "$work/old.ctl" ] && break; sleep 0.1; done
out=$("$URAID" fail "$work/old.ctl" "$work/old.img" 2>&1); rc=$?
check "fail ARRAY MEMBER against an older server: exit $rc ($out)" test $rc -eq 0
out=$("$URAID" remove "$work/old.ctl" "$work/old.img" 2>&1); rc=$?
check "remove ARRAY MEMBER against an older server: exit $rc ($out)" test $rc -eq 0
reached() { grep -qxF "fail"$'\t'"$work/old.img" "$work/old.log" &&
            grep -qxF "remove"$'\t'"$work/old.img" "$work/old.log"; }
check "  both reached the server, which enforces its rules" reached || cat -A "$work/old.log"
kill "$oldpid" 2>/dev/null; wait "$oldpid" 2>/dev/null

# ---- JSON: every report has a version ----
check "status --json ARRAY has version 1" bash -c \
    "'$URAID' status --json g | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"version\"] == 1'"
check "status --json (the list): each element has version 1" bash -c \
    "'$URAID' status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d and all(x[\"version\"] == 1 for x in d)'"
out=$("$URAID" speed --json --max=50000 g 2>&1)
check "speed --json: the limits in effect ($out)" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["version"] == 1 and d["max_kib_per_s"] == 50000 and d["min_kib_per_s"] > 0, d
' "$out"
out=$("$URAID" check --wait --json g 2>&1); rc=$?
check "check --wait --json: the outcome (exit $rc)" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["version"] == 1 and d["command"] == "check" and d["result"] == "completed", d
assert d["mismatch_sectors"] == 0 and d["done_bytes"] == d["total_bytes"] > 0, d
' "$out"
out=$("$URAID" check --json g 2>&1); rc=$?
check "check --json without --wait: usage error, exit $rc" test $rc -eq 2
check "  in one line" one_line "$out"
stop_served g || { echo "the server did not stop cleanly"; fails=$((fails + 1)); }

# ---- detail --test and --json ----
out=$("$URAID" detail --json "${m[@]}" 2>/dev/null)
check "detail --json has version 1" python3 -c '
import json, sys; assert json.loads(sys.argv[1])["version"] == 1' "$out"
"$URAID" detail --test "${m[@]}" >/dev/null 2>&1; rc=$?
check "detail --test, all in sync: 0 (got $rc)" test $rc -eq 0
"$URAID" detail --test "${m[0]}" "${m[1]}" >/dev/null 2>&1; rc=$?
check "detail --test with a member left out: 1 (got $rc)" test $rc -eq 1
"$URAID" detail --test "${m[0]}" >/dev/null 2>&1; rc=$?
check "detail --test with two of three RAID 5 members left out: 2 (got $rc)" test $rc -eq 2
"$URAID" detail --test "$work/nothere.img" >/dev/null 2>&1; rc=$?
check "detail --test of nothing assemblable: 4 (got $rc)" test $rc -eq 4
"$URAID" status --test nosuch >/dev/null 2>&1; rc=$?
check "status --test of an array not served: 4 (got $rc)" test $rc -eq 4
out=$("$URAID" examine --json "${m[0]}")
check "examine --json: each element has json_version 1 (version: the superblock's)" python3 -c '
import json, sys; d = json.loads(sys.argv[1]); assert d[0]["json_version"] == 1, d
assert d[0]["version"] == "1.2", d' "$out"
truncate -s 8M "$work/x0" "$work/x1"
out=$("$URAID" create --json --dry-run --level=1 --raid-devices=2 "$work/x0" "$work/x1" 2>&1)
check "create --json has version 1" python3 -c '
import json, sys; d = json.loads(sys.argv[1]); assert d["version"] == 1 and not d["written"]' "$out"

# ---- mdadm spellings, one-line errors ----
for s in --create -C --assemble -A --detail -D --manage --examine -E --grow --monitor; do
    out=$("$URAID" $s /dev/md0 2>&1); rc=$?
    check "uraid $s: a one-line hint, exit 2 ($out)" \
        bash -c "[ $rc -eq 2 ] && grep -q \"mdadm\" <<<\"\$0\" && ! grep -q 'unknown command' <<<\"\$0\"" "$out"
    check "  in one line" one_line "$out"
done
out=$("$URAID" create --level=1 --raid-devices=2 /dev/md0 "$work/x0" "$work/x1" 2>&1); rc=$?
check "create /dev/md0 ...: explains --name, exit $rc ($out)" \
    bash -c "[ $rc -eq 2 ] && grep -q -- '--name=md0' <<<\"\$0\"" "$out"
check "  in one line" one_line "$out"
for v in create examine detail status fail remove add replace stop check repair speed zero-superblock; do
    out=$("$URAID" $v --no-such-option x 2>&1); rc=$?
    check "$v --no-such-option: one line 'uraid $v: ...--help', exit $rc" \
        bash -c "[ $rc -eq 2 ] && grep -q \"^uraid $v: .*uraid $v --help\" <<<\"\$0\"" "$out"
    check "  in one line" one_line "$out"
done

[ $fails -eq 0 ]
