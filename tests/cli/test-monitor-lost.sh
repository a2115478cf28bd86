#!/bin/bash
# uraid monitor makes up for events it never received: its socket's queue
# is filled (the monitor stopped with SIGSTOP) so that the server's Fail
# datagram is dropped; once the monitor runs again, comparing the array's
# state with what it knew (its look each --delay=2) reports the Fail, once.
# The member's path holds control characters (escaped in the datagram and
# in monitor-state): named as it is in the program's argument. SIGTERM
# while the program runs stops the monitor at once. Bounded waits (30 s).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need python3
work_dir monitor-lost
echo "work in $work"
mpid=
trap 'for p in $mpid $spid; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

# the program keeps its arguments as EVENT|ARRAY|MEMBER records, NUL-ended
cat >"$work/recorder" <<EOF
#!/bin/sh
printf '%s|%s|%s\\0' "\$1" "\$2" "\$3" >>"$work/events"
EOF
chmod +x "$work/recorder"
count() {   # count FILE RECORD: how many times FILE has it
    python3 -c '
import sys
try: print(open(sys.argv[1], newline="").read().split("\0").count(sys.argv[2]))
except OSError: print(0)' "$@"
}
wait_for() {   # wait_for FILE RECORD: until FILE has it, 30 s at most
    for _ in $(seq 300); do [ "$(count "$1" "$2")" -gt 0 ] && return 0; sleep 0.1; done
    echo "  waited 30 s for '$2' in $1; it holds:"; cat -A "$1" 2>/dev/null | sed 's/^/    /'
    return 1
}

# (uraid fail cannot name a path with a tab or newline: a carriage return
# and a \x01 are what is escaped here)
d=("$work/d0" "$work/d1$(printf '\r')x$(printf '\001')y")
truncate -s 16M "${d[@]}"
"$URAID" create --level=1 --raid-devices=2 --name=data --run "${d[@]}" >/dev/null
serve_bg "$work" data "${d[@]}" || exit 1
ctl=$(head -n1 "$URAID_RUN_DIR/$spid")
"$URAID" monitor --no-syslog --test --delay=2 --program="$work/recorder" \
    2>"$work/monitor.err" &
mpid=$!
check "the monitor runs (TestMessage)" wait_for "$work/events" 'TestMessage|data|'

kill -STOP "$mpid"
# NewArray of a server already known changes nothing; sent until the queue is full
python3 - "$URAID_RUN_DIR/monitors/$mpid.sock" "$ctl" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setblocking(False)
n = 0
try:
    while n < 10000:
        s.sendto(("uraid-event 1\tNewArray\tdata\t\t%s\n" % sys.argv[2]).encode(), sys.argv[1])
        n += 1
except BlockingIOError:
    pass
print("  the monitor's queue took %d datagrams" % n)
sys.exit(0 if n < 10000 else 1)
PY
check "the monitor's socket queue is full" test $? -eq 0
"$URAID" fail --control="$ctl" "${d[1]}" >/dev/null
kill -CONT "$mpid"
check "the lost Fail is reported all the same, the path as it is" \
    wait_for "$work/events" "Fail|data|${d[1]}"
# a marker: once it is handled, the events before it are handled too
python3 - "$URAID_RUN_DIR/monitors/$mpid.sock" "$ctl" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(("uraid-event 1\tRebuild20\tdata\t\t%s\n" % sys.argv[2]).encode(), sys.argv[1])
PY
check "... (the marker event is handled)" wait_for "$work/events" 'Rebuild20|data|'
check "... once" test "$(count "$work/events" "Fail|data|${d[1]}")" -eq 1
check "no DeviceDisappeared" test "$(count "$work/events" "DeviceDisappeared|data|")" -eq 0
kill "$mpid"
wait "$mpid"
mpid=

# SIGTERM while the program runs (it would for 30 s): the monitor stops now
printf '#!/bin/sh\necho started >>%s/slow\nexec sleep 60\n' "$work" >"$work/slow-program"
chmod +x "$work/slow-program"
"$URAID" monitor --no-syslog --test --program="$work/slow-program" 2>"$work/slow.err" &
mpid=$!
for _ in $(seq 100); do [ -s "$work/slow" ] && break; sleep 0.1; done
kill "$mpid"
for _ in $(seq 100); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.1; done
check "SIGTERM while the program runs: the monitor stops within 10 s" \
    bash -c "[ -s $work/slow ] && ! kill -0 $mpid 2>/dev/null"
wait "$mpid"
check "... exit 0" test $? -eq 0
mpid=
echo "$fails failed"
[ $fails -eq 0 ]
