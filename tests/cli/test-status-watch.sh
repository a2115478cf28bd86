#!/bin/bash
# uraid status --watch: on a terminal (script(1) gives one) the view redraws
# in place (cursor home, lines cleared, the rest of the screen cleared, the
# cursor hidden and shown again), and while fio writes through NBD every
# member shows writes per second above 0; not on a terminal it writes plain
# blocks without escape codes, one per refresh; --count stops it; SIGINT
# ends it with status 0 and the cursor back; a watched array that stops
# ends it with one line and status 1; without ARRAY it shows every served
# array. check --wait on a terminal draws a progress line (percent, rate,
# ETA) redrawn with \r, and still exits with the check's result (1 with
# mismatches, 0 after a repair); not on a terminal it prints the result only;
# replace --wait draws the copy's progress. On 80 columns the background line
# keeps percent, rate and ETA; on 8 rows the view is cut with a line saying
# how much. A server stopped with SIGSTOP keeps its last view marked "not
# answering since" (one array, and in the view of every array), and Ctrl-C
# while a poll waits on it ends the view at once with status 0.
# The seed of the junk is fixed and printed.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need script fio python3 timeout
work_dir watch
SEED=${SEED:-20261202}
echo "seed $SEED, work in $work"
export TERM=xterm               # script's terminal: any that knows ANSI
# on_tty LOG COMMAND...: run COMMAND with a terminal as its stdout and
# stderr, what it wrote in LOG; its exit status
on_tty() {
    local log=$1; shift
    script -qec "$(printf '%q ' "$@")" /dev/null >"$log" 2>&1 </dev/null
}

# a RAID 5 of three 16 MiB members assembled as if clean, one MiB of random
# data written into one member at 12 MiB (fio writes the array's first 4 MiB
# only, member bytes below 4 MiB): a check finds mismatches
m=()
for i in 0 1 2; do
    truncate -s 16M "$work/w.$i"
    m+=("$work/w.$i")
done
"$URAID" create --level=5 --raid-devices=3 --chunk=64 --assume-clean --name=w "${m[@]}" >/dev/null
randfile "$SEED" $((1 << 20)) "$work/junk"
dd if="$work/junk" of="$work/w.0" bs=1M seek=12 conv=notrunc status=none
serve_bg "$work" w "${m[@]}" || exit 1

# ---- the view on a terminal while fio writes ----
(cd "$work" && exec fio --name=w --ioengine=nbd --uri="nbd+unix:///?socket=$work/w.sock" \
    --rw=randwrite --bs=4k --size=4M --rate_iops=300 --time_based --runtime=30 \
    --randseed="$SEED" --output=/dev/null >/dev/null 2>&1) &
fpid=$!
# until fio's writes reach every member
for _ in $(seq 100); do
    js=$("$URAID" status --json w)
    grep -q '"writes": [1-9]' <<<"$js" && ! grep -q '"writes": 0,' <<<"$js" && break
    sleep 0.1
done
on_tty "$work/tty.log" "$URAID" status w --watch=1 --count=3; rc=$?
check "on a terminal: exit 0 after --count=3" test $rc -eq 0
# the escape codes, then the member lines of the 2nd and 3rd views: w/s
# above 0 on every member
check "on a terminal: cursor home, lines cleared, rest cleared, cursor hidden then shown; every member writes (w/s > 0) in views 2 and 3" \
    python3 -c '
import re, sys
t = open(sys.argv[1], "rb").read()
assert t.startswith(b"\x1b[?25l") and t.rstrip().endswith(b"\x1b[?25h"), t[:20] + t[-20:]
assert t.count(b"\x1b[H") == 3 and t.count(b"\x1b[J") == 3, (t.count(b"\x1b[H"), t.count(b"\x1b[J"))
assert b"\x1b[K" in t
t = t.decode()
views = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", v) for v in t.split("\x1b[H")[1:]]
assert len(views) == 3, len(views)
# one interval may miss a member at this rate: summed over views 2 and 3
wsum, msum = {}, {}
for n, v in enumerate(views[1:], 2):
    rows = re.findall(r"^ +(\d) +in-sync +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +\S+", v, re.M)
    print("view", n, rows)
    assert len(rows) == 3, v
    for r in rows:
        wsum[r[0]] = wsum.get(r[0], 0) + float(r[2])
        msum[r[0]] = msum.get(r[0], 0) + float(r[4])
assert len(wsum) == 3 and all(x > 0 for x in wsum.values()) and all(x > 0 for x in msum.values()), (wsum, msum)
first = views[0]
assert re.search(r"^ +0 +in-sync +- +- +- +-", first, re.M), first   # no rate yet
assert "connections 1 of" in views[2], views[2]' "$work/tty.log"

# ---- not a terminal: plain blocks ----
"$URAID" status --watch=0.5 --count=2 w >"$work/plain.log"; rc=$?
check "not a terminal: exit 0, no escape codes" bash -c "[ $rc -eq 0 ] && ! grep -q \$'\\033' '$work/plain.log'"
check "not a terminal: one block per refresh" \
    test "$(grep -c '^uraid status: every 0.5 s, .* ([12] of 2)$' "$work/plain.log")" -eq 2
check "not a terminal: members write in the second block" python3 -c '
import re, sys
t = open(sys.argv[1]).read().split("uraid status: every")[2]
rows = re.findall(r"^ +\d +in-sync +[\d.]+ +([\d.]+) ", t, re.M)
assert len(rows) == 3 and all(float(r) > 0 for r in rows), t' "$work/plain.log"
kill $fpid 2>/dev/null; wait $fpid 2>/dev/null

# ---- SIGINT ends it with status 0, the cursor shown again ----
on_tty "$work/int.log" timeout --preserve-status -s INT 1.5 "$URAID" status --watch=0.5 w; rc=$?
check "SIGINT: exit 0 ($rc), the cursor shown again" \
    bash -c "[ $rc -eq 0 ] && tail -c 20 '$work/int.log' | grep -q \$'\\033\\[?25h'"

# ---- check --wait: progress on a terminal, the check's result as exit status ----
"$URAID" speed --max=10000 w >/dev/null      # a few seconds, to see the line move
on_tty "$work/check.log" "$URAID" check --wait w; rc=$?
tail -c 300 "$work/check.log" | cat -v; echo
check "check --wait on a terminal: exit 1 (the MiB of junk: mismatches)" test $rc -eq 1
check "check --wait on a terminal: a progress line redrawn with \\r, with rate and ETA" \
    python3 -c '
import re, sys
t = open(sys.argv[1], "rb").read().decode()
lines = re.findall(r"\r(check +[\d.]+%[^\r\x1b]* \(\d+/\d+ MiB per member\))\x1b\[K", t)
assert any(re.search(r"[\d.]+ MiB/s, ETA \d+:\d\d", l) for l in lines), lines
assert re.search(r"\x1b\[Kcheck completed: \d+ of \d+ MiB per member, mismatch_cnt 2048\r", t), t[-200:]' \
    "$work/check.log"
"$URAID" speed --max=200000 w >/dev/null
"$URAID" repair --wait w >"$work/repair.log"; rc=$?
check "repair --wait, not on a terminal: exit 0, the result only, no escape codes" \
    bash -c "[ $rc -eq 0 ] && ! grep -q \$'\\033' '$work/repair.log' && ! grep -q \$'\\r' '$work/repair.log' &&
             [ \$(wc -l <'$work/repair.log') -eq 2 ]"
on_tty "$work/check2.log" "$URAID" check --wait w; rc=$?
check "check --wait on a terminal after the repair: exit 0" \
    bash -c "[ $rc -eq 0 ] && grep -q 'mismatch_cnt 0' '$work/check2.log'"

# ---- 80 columns while a check runs: the background line keeps rate and ETA ----
"$URAID" speed --max=5000 w >/dev/null
"$URAID" check w >/dev/null
on_tty "$work/narrow.log" bash -c "stty rows 40 cols 80; $(printf '%q' "$URAID") status w --watch=1 --count=2"
"$URAID" check --cancel w >/dev/null
"$URAID" speed --max=200000 w >/dev/null
check "80 columns: the background line of view 2 has percent, rate and ETA" python3 -c '
import re, sys
t = open(sys.argv[1], "rb").read().decode()
v = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", t.split("\x1b[H")[2]).replace("\r", "")
bg = [l for l in v.split("\n") if l.startswith("  Background: ")]
print(bg)
assert len(bg) == 1 and len(bg[0]) <= 79, bg
assert re.search(r"check \[[=>.]{20}\] +[\d.]+% [\d.]+ MiB/s, ETA \d+:\d\d", bg[0]), bg' "$work/narrow.log"

# ---- without ARRAY: every served array ----
for i in 0 1; do truncate -s 16M "$work/v.$i"; done
"$URAID" create --level=1 --raid-devices=2 --name=v "$work/v.0" "$work/v.1" >/dev/null
spid_w=$spid
serve_bg "$work" v "$work/v.0" "$work/v.1" || exit 1
spid_v=$spid
"$URAID" status --watch=0.3 --count=2 >"$work/all.log"; rc=$?
check "without ARRAY: both arrays in each block" \
    bash -c "[ $rc -eq 0 ] && [ \$(grep -c '^v  raid1 ' '$work/all.log') -eq 2 ] &&
             [ \$(grep -c '^w  raid5 ' '$work/all.log') -eq 2 ]"
# one of them not answering (its server stopped after the first view): the
# second block still shows it, saying since when
("$URAID" status --watch=1 --count=2 >"$work/all2.log") &
wpid=$!
for _ in $(seq 100); do grep -q '(1 of 2)' "$work/all2.log" && break; sleep 0.1; done
kill -STOP "$spid_v"
wait "$wpid"; rc=$?
kill -CONT "$spid_v"
check "without ARRAY, v not answering: exit 0, v still in block 2 with 'not answering since', w too" python3 -c '
import re, sys
assert sys.argv[2] == "0", sys.argv[2]
b = open(sys.argv[1]).read().split("uraid status: every")[2]
print(b)
assert re.search(r"^v  raid1 .*\n  not answering since \d\d:\d\d:\d\d \(", b, re.M), b
assert re.search(r"^w  raid5 ", b, re.M), b' "$work/all2.log" "$rc"
# replace --wait on a terminal: the copy's progress line, then NEW holds the slot
truncate -s 16M "$work/v.2"
"$URAID" speed --max=10000 v >/dev/null
on_tty "$work/replace.log" "$URAID" replace --wait "$work/v.0" "$work/v.2"; rc=$?
tail -c 200 "$work/replace.log" | cat -v; echo
check "replace --wait on a terminal: exit 0, a progress line, then the result" python3 -c '
import re, sys
t = open(sys.argv[1], "rb").read().decode()
assert sys.argv[2] == "0", sys.argv[2]
assert len(re.findall(r"\rreplace +[\d.]+%[^\r\x1b]* \(\d+/\d+ MiB per member\)", t)) >= 1, t
assert re.search(r"\x1b\[Kreplace completed: ", t), t[-200:]' "$work/replace.log" "$rc"
spid=$spid_v
stop_served v >/dev/null
spid=$spid_w

# ---- a short terminal: the view cut to its height, a line saying how much ----
on_tty "$work/short.log" bash -c "stty rows 8 cols 80; $(printf '%q' "$URAID") status w --watch=0.3 --count=1"
check "8 rows: 6 lines of the view, then how many more" python3 -c '
import re, sys
t = open(sys.argv[1], "rb").read().decode()
v = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", t.split("\x1b[H")[1]).replace("\r", "")
lines = v.rstrip("\n").split("\n")
print(lines)
assert len(lines) == 7 and re.match(r"\(\d+ more lines", lines[6]), lines
assert all(len(l) <= 79 for l in lines), lines' "$work/short.log"

# ---- a server that does not answer (stopped with SIGSTOP) ----
# the view stays, saying since when; Ctrl-C while a poll waits ends it (0)
on_tty "$work/stale.log" bash -c "(sleep 1; kill -STOP $spid) & $(printf '%q' "$URAID") status w --watch=1.5 --count=2"; rc=$?
kill -CONT "$spid"
tail -c 400 "$work/stale.log" | cat -v; echo
check "not answering: exit 0 after 2 views, the second says since when" \
    bash -c "[ $rc -eq 0 ] && grep -q 'not answering since [0-9][0-9]:[0-9][0-9]:[0-9][0-9]' '$work/stale.log'"
kill -STOP "$spid"
on_tty "$work/int2.log" timeout --preserve-status -s INT 2 "$URAID" status --watch=0.5 w; rc=$?
kill -CONT "$spid"
check "SIGINT while the poll waits on a stopped server: exit 0 ($rc), cursor shown, no message" \
    bash -c "[ $rc -eq 0 ] && grep -q \$'\\033\\[?25h' '$work/int2.log' && ! grep -q 'not answering' '$work/int2.log'"

# ---- the watched array stops: one line, status 1, the terminal restored ----
# stopped once the first view is up (script writes the log as it goes)
(for _ in $(seq 200); do grep -q $'\033\[H' "$work/gone.log" 2>/dev/null && break; sleep 0.1; done
 "$URAID" stop w >/dev/null) &
on_tty "$work/gone.log" "$URAID" status --watch=0.5 w; rc=$?
wait "$spid"; spid=
tail -c 300 "$work/gone.log" | cat -v
check "the array stops: exit 1, one line saying so, the cursor shown again" \
    bash -c "[ $rc -eq 1 ] && grep -c \"uraid status: 'w' is no longer served\" '$work/gone.log' |
             grep -qx 1 && grep -q \$'\\033\\[?25h' '$work/gone.log'"

# ---- a hostile server: its strings reach the terminal without control characters ----
# a fake control socket (python, stops by itself after 20 s) answers
# status-json with an ESC (as \u001b and as U+009B) in the names
cat >"$work/fake.py" <<'PY'
import json, os, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX)
s.bind(path); s.listen(4); s.settimeout(20)
doc = {"server": {"export_name": "evil\u001b]0;owned\u0007\u001b[2J", "connections": 0,
                  "max_connections": 1},
       "level": "raid1\u009b2J", "state": "clean\u007f", "array_bytes": 1 << 20,
       "raid_devices": 1, "degraded": 0, "in_flight": 0, "background": [],
       "last_background": {"kind": "none"},
       "members": [{"slot": 0, "device": "/dev/\u001b[31mred", "state": "in-sync",
                    "reads": 1, "writes": 2, "read_bytes": 3, "write_bytes": 4}]}
body = json.dumps(doc).encode()        # ensure_ascii: the escapes stay \uXXXX on the wire
try:
    while True:
        c, _ = s.accept()
        c.sendall(b"uraid-ctl 1\n"); c.recv(4096)
        c.sendall(b"ok\n" + body); c.close()
except socket.timeout:
    pass
finally:
    os.unlink(path)
PY
python3 "$work/fake.py" "$work/fake.ctl" &
fake=$!
for _ in $(seq 50); do [ -S "$work/fake.ctl" ] && break; sleep 0.1; done
on_tty "$work/evil.log" "$URAID" status --watch=0.2 --count=2 -c "$work/fake.ctl"; rc=$?
kill "$fake" 2>/dev/null; wait "$fake" 2>/dev/null
cat -v "$work/evil.log" | head -8
check "a hostile server: exit 0, its ESC, BEL, DEL and CSI shown as '?', nothing else but the view's own codes" python3 -c '
import re, sys
assert sys.argv[2] == "0", sys.argv[2]
t = open(sys.argv[1], "rb").read().decode()
own = re.sub(r"\x1b\[(\?25[lh]|H|K|J)", "", t)
assert "\x1b" not in own and "\x07" not in own and "\x7f" not in own and "\x9b" not in own, repr(own)
assert "evil?]0;owned??[2J" in own and "raid1?2J" in own and "clean?" in own and "/dev/?[31mred" in own, own' \
    "$work/evil.log" "$rc"

# ---- refusals ----
out=$("$URAID" status --watch 5 2>&1); rc=$?
check "--watch 5: exit 2, a hint to write --watch=5" bash -c "[ $rc -eq 2 ] && grep -q -- '--watch=5' <<<\"\$0\"" "$out"
for bad in "--watch=0" "--watch=abc" "--count=2" "--watch --count=0" "--watch --json"; do
    # shellcheck disable=SC2086
    out=$("$URAID" status $bad 2>&1); rc=$?
    check "refused: status $bad (exit 2, one line)" \
        bash -c "[ $rc -eq 2 ] && [ \$(wc -l <<<\"\$0\") -eq 1 ] && grep -q '^uraid status: ' <<<\"\$0\"" "$out"
done

echo "$fails failed"
[ $fails -eq 0 ]
