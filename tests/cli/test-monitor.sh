#!/bin/bash
# uraid monitor on a served RAID 1 with a spare: the program is called with
# mdadm's events in mdadm's order as they happen (TestMessage at the start;
# uraid fail -> Fail, RebuildStarted, [Rebuild20..80,] RebuildFinished,
# SpareActive); mail goes through a fake sendmail for Fail and TestMessage
# with the configured From and mdadm's subject; --oneshot on the array left
# degraded reports DegradedArray (mailed too) and exits (to syslog too); a
# spare added then fails while rebuilt onto (FailSpare, mailed), the next
# one is rebuilt onto, reported as the first; the server stopping is reported
# as DeviceDisappeared; --daemonise with --pid-file; datagrams that are no
# event are ignored. Bounded waits (30 s).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
work_dir monitor
echo "work in $work"
mpids=()
trap 'for p in "${mpids[@]}" $spid; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

# the program records its arguments, one call a line; sendmail keeps each mail
cat >"$work/recorder" <<EOF
#!/bin/sh
echo "\$*" >>"$work/events"
echo "recorder saw \$1"
EOF
cat >"$work/sendmail" <<EOF
#!/bin/sh
[ "\$*" = "-t -i -f raid-watch@example.org" ] || exit 3
n=\$(ls "$work"/mail.* 2>/dev/null | wc -l)
cat >"$work/mail-being-written" && mv "$work/mail-being-written" "$work/mail.\$n"
EOF
chmod +x "$work/recorder" "$work/sendmail"
cat >"$work/uraid.conf" <<EOF
MAILFROM raid-watch@example.org
ARRAY name=data spares=1
EOF

# wait_for FILE PATTERN: until a line of FILE matches (grep -E), at most 30 s
wait_for() {
    for _ in $(seq 300); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "  waited 30 s for '$2' in $1; it holds:"; sed 's/^/    /' "$1" 2>/dev/null
    return 1
}
# in_order FILE LINE...: the lines occur in FILE in this order (others between)
in_order() {
    python3 - "$@" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
at = 0
for want in sys.argv[2:]:
    try:
        at = lines.index(want, at) + 1
    except ValueError:
        print("  missing or out of order:", want, "in", lines)
        sys.exit(1)
PY
}
mail_with() {   # mail_with SUBJECT: a mail with that subject, its file name (30 s at most)
    for _ in $(seq 300); do
        grep -l "^Subject: $1\$" "$work"/mail.[0-9]* 2>/dev/null | head -n1 | grep . && return 0
        sleep 0.1
    done
    return 1
}

d=("$work/d0" "$work/d1" "$work/d2" "$work/d3" "$work/d4")
truncate -s 40M "${d[@]}"
"$URAID" create --level=1 --raid-devices=2 --name=data --run "${d[0]}" "${d[1]}" >/dev/null
# slow enough for the progress events to be seen (40 MiB at 8 MiB/s)
serve_bg "$work" data --speed-max=8000 "${d[0]}" "${d[1]}" || exit 1
"$URAID" add data "${d[2]}" >/dev/null

"$URAID" monitor --no-syslog --test --program="$work/recorder" --mail=ops@example.org \
    --sendmail="$work/sendmail" --config="$work/uraid.conf" 2>"$work/monitor.err" &
mpid=$!
mpids+=("$mpid")
check "--test: a TestMessage for the array at the start" wait_for "$work/events" '^TestMessage data$'
check "its socket is in the run directory's monitors/, mode 0600" \
    test "$(stat -c %a "$URAID_RUN_DIR/monitors/$mpid.sock" 2>/dev/null)" = 600
f=$(mail_with 'TestMessage event on data:.*')
check "TestMessage is mailed, with mdadm's subject and MAILFROM" \
    bash -c "[ -n '$f' ] && grep -q '^From: raid-watch@example.org$' '$f' &&
             grep -q '^To: ops@example.org$' '$f'"
check "the program's output goes to the log" wait_for "$work/monitor.err" 'recorder saw TestMessage'

"$URAID" fail "${d[1]}" >/dev/null
check "uraid fail: SpareActive once the spare is rebuilt" \
    wait_for "$work/events" "^SpareActive data ${d[2]}\$"
echo "  events: $(tr '\n' ';' <"$work/events")"
check "Fail, RebuildStarted, RebuildFinished, SpareActive in this order" \
    in_order "$work/events" "Fail data ${d[1]}" "RebuildStarted data" "RebuildFinished data" \
    "SpareActive data ${d[2]}"
check "progress events, if any, between RebuildStarted and RebuildFinished" python3 - "$work/events" <<'PY'
import sys
ev = open(sys.argv[1]).read().split()
prog = [i for i, e in enumerate(ev) if e.startswith("Rebuild") and e[7:].isdigit()]
print("  progress events:", [ev[i] for i in prog])
sys.exit(0 if all(ev.index("RebuildStarted") < i < ev.index("RebuildFinished") for i in prog) else 1)
PY
f=$(mail_with 'Fail event on data:.*')
check "Fail is mailed with the member and the array's status" \
    bash -c "[ -n '$f' ] && grep -q '${d[1]}' '$f' && grep -q 'in-sync' '$f'"
check "RebuildStarted is not mailed (mdadm mails Fail, FailSpare, DegradedArray, SparesMissing, TestMessage)" \
    bash -c "ls $work/mail.[0-9]* >/dev/null && ! grep -l '^Subject: Rebuild' $work/mail.[0-9]*"
check "the status says the spare holds slot 1" \
    bash -c "'$URAID' status data | grep -E 'in-sync.*${d[2]}'"

# datagrams that are no event, or name a server that is not listed, change nothing
python3 - "$URAID_RUN_DIR/monitors/$mpid.sock" "$work" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
for d in [b"garbage", b"uraid-event 1\tBogus\tdata\t\t/x.ctl\n", b"uraid-event 1\t" + b"A" * 5000,
          b"uraid-event 1\tFail\tdata\t\0\t/x.ctl\n",
          ("uraid-event 1\tFail\tghost\t/dev/sdz\t%s/nothing.ctl\n" % sys.argv[2]).encode()]:
    s.sendto(d, sys.argv[1])
PY
# a marker after them (an event of the array's own server): once it is
# handled, so are they
ctl=$(head -n1 "$URAID_RUN_DIR/$spid")
python3 - "$URAID_RUN_DIR/monitors/$mpid.sock" "$ctl" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(("uraid-event 1\tRebuild80\tdata\t\t%s\n" % sys.argv[2]).encode(), sys.argv[1])
PY
check "(the marker after them is handled)" wait_for "$work/events" '^Rebuild80 data$'
check "malformed datagrams are logged and ignored" grep -q 'no event was ignored' "$work/monitor.err"
check "... and an event of a server that is not listed is not reported" \
    bash -c "! grep -qE 'Bogus|ghost' $work/events $work/monitor.err"

# degraded, no spare: --oneshot reports DegradedArray (and SparesMissing:
# the config wants one spare) and exits
"$URAID" remove "${d[1]}" >/dev/null
"$URAID" fail "${d[0]}" >/dev/null
check "the running monitor reports the second Fail" wait_for "$work/events" "^Fail data ${d[0]}\$"
: >"$work/oneshot.events"
sed "s|$work/events|$work/oneshot.events|" "$work/recorder" >"$work/recorder2"
chmod +x "$work/recorder2"
timeout 30 "$URAID" monitor --oneshot --no-syslog --program="$work/recorder2" \
    --mail=ops@example.org --sendmail="$work/sendmail" --config="$work/uraid.conf" \
    2>"$work/oneshot.err"
check "--oneshot exits 0" test $? -eq 0
check "--oneshot reports DegradedArray and SparesMissing, nothing else" \
    test "$(sort "$work/oneshot.events" | tr "\n" ";")" = "DegradedArray data;SparesMissing data;"
check "DegradedArray is mailed" test -n "$(mail_with 'DegradedArray event on data:.*')"
check "--oneshot logged it on stderr" grep -q "DegradedArray event on data" "$work/oneshot.err"

# another spare: rebuilt onto, reported again
"$URAID" remove "${d[0]}" >/dev/null
"$URAID" add data "${d[3]}" >/dev/null
check "add another spare: its rebuild starts (a second RebuildStarted)" \
    bash -c "for i in \$(seq 300); do [ \$(grep -c '^RebuildStarted data$' $work/events) -ge 2 ] && exit 0; sleep 0.1; done; exit 1"
# a monitor killed without cleaning up leaves its socket: a later event (a
# progress one, or the FailSpare below) removes it
"$URAID" monitor --no-syslog 2>/dev/null &
kpid=$!
for _ in $(seq 100); do [ -S "$URAID_RUN_DIR/monitors/$kpid.sock" ] && break; sleep 0.1; done
kill -KILL "$kpid"
wait "$kpid" 2>/dev/null
# slowed down (under load the rebuild could end before the fail)
"$URAID" speed --max=1000 data >/dev/null
"$URAID" fail "${d[3]}" >/dev/null
"$URAID" speed --max=8000 data >/dev/null
check "the spare failed while rebuilt onto: FailSpare" wait_for "$work/events" "^FailSpare data ${d[3]}\$"
check "... and the server removed the dead monitor's socket" \
    bash -c "for i in \$(seq 100); do [ -e $URAID_RUN_DIR/monitors/$kpid.sock ] || exit 0; sleep 0.1; done; exit 1"
check "... mailed" test -n "$(mail_with 'FailSpare event on data:.*')"
"$URAID" remove "${d[3]}" >/dev/null
"$URAID" add data "${d[4]}" >/dev/null
check "another spare: rebuilt, SpareActive" wait_for "$work/events" "^SpareActive data ${d[4]}\$"
check "no SpareActive for the spare that failed" bash -c "! grep -q '^SpareActive data ${d[3]}$' $work/events"
timeout 30 "$URAID" monitor --oneshot --config="$work/uraid.conf" 2>"$work/err"
check "--oneshot to syslog: exit 0, nothing on stderr" bash -c "[ $? -eq 0 ] && [ ! -s $work/err ]"

# a second monitor in the background: --daemonise prints its pid, --pid-file
dpid=$(cd "$work" && "$URAID" monitor --daemonise --no-syslog --pid-file=mon.pid \
    --program="$work/recorder2" --config="$work/uraid.conf" 2>>"$work/daemon.err")
mpids+=("$dpid")
check "--daemonise prints the pid that --pid-file holds" \
    bash -c "for i in \$(seq 100); do [ \"\$(cat $work/mon.pid 2>/dev/null)\" = '$dpid' ] && exit 0; sleep 0.1; done; exit 1"
check "... (a relative path, from where it started); its directory is /" \
    test "$(readlink /proc/$dpid/cwd)" = /
check "the daemon has its own session" bash -c "[ \"\$(ps -o sid= -p $dpid | tr -d ' ')\" = '$dpid' ]"

stop_served data
check "the server stopping: DeviceDisappeared" wait_for "$work/events" '^DeviceDisappeared data$'
check "... for the daemon too" wait_for "$work/oneshot.events" '^DeviceDisappeared data$'
kill "$mpid" "$dpid"
wait "$mpid"
check "the monitor exits 0 on SIGTERM" test $? -eq 0
for _ in $(seq 300); do [ -e "$work/mon.pid" ] || break; sleep 0.1; done
check "the daemon removed its pid file and both their sockets" \
    bash -c "[ ! -e $work/mon.pid ] && [ -z \"\$(ls $URAID_RUN_DIR/monitors/)\" ]"
mpids=()

# refusals
"$URAID" monitor --delay=0 2>"$work/err"; rc=$?
check "--delay=0 is refused with one line" bash -c "[ $rc -eq 2 ] && [ \$(wc -l <$work/err) -eq 1 ]"
"$URAID" monitor --config="$work/missing.conf" --oneshot 2>"$work/err"; rc=$?
check "a --config that does not exist is an error" bash -c "[ $rc -ne 0 ] && grep -q missing.conf $work/err"

: >"$work/not-a-dir"
out=$(URAID_RUN_DIR="$work/not-a-dir" "$URAID" monitor --daemonise 2>"$work/err"); rc=$?
check "--daemonise that cannot start: exit 1, no pid, the reason on stderr" \
    bash -c "[ $rc -eq 1 ] && [ -z '$out' ] && [ -s $work/err ]"
"$URAID" monitor --oneshot --no-syslog nosuch 2>"$work/err"; rc=$?
check "--oneshot with an ARRAY that is not served: exit 1, one line naming it" \
    bash -c "[ $rc -eq 1 ] && [ \$(wc -l <$work/err) -eq 1 ] && grep -q \"'nosuch' is not served\" $work/err"

echo "$fails failed"
[ $fails -eq 0 ]
