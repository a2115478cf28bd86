#!/bin/bash
# The control socket of `uraid serve` and how the commands find it:
# a client that connects and stays silent (or sends half a line) holds up
# neither `uraid status` nor SIGTERM, and is dropped after the timeout;
# an export socket given with a --control elsewhere, or by a relative name in
# the current directory, reaches the right control socket, and no control
# request ever reaches an NBD socket; `status --json` without ARRAY is a JSON
# list of the served arrays.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need python3
work_dir ctl
echo "work in $work"
spids=()
trap 'for p in "${spids[@]}" $(jobs -p); do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

# array NAME: a 2-member RAID 1 named NAME ($work/NAME.0, .1) in $m
array() {
    m=("$work/$1.0" "$work/$1.1")
    truncate -s 16M "${m[@]}"
    "$URAID" create --level=1 --raid-devices=2 --name="$1" --run "${m[@]}" >/dev/null
}
# silent PATH TAG [BYTES]: connect, send BYTES (default nothing), then wait for
# the server to close; $work/TAG.up once connected, $work/TAG.gone (seconds
# until the close) after. Its pid in $cpid.
silent() {
    python3 - "$1" "$work/$2" "${3:-}" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
if sys.argv[3]:
    s.sendall(sys.argv[3].encode())
t = time.monotonic()
open(sys.argv[2] + ".up", "w").close()
s.settimeout(60)
try:
    while s.recv(4096):
        pass
except OSError:
    pass
open(sys.argv[2] + ".gone", "w").write("%.1f\n" % (time.monotonic() - t))
PY
    cpid=$!
    [ -n "${SILENT_NOWAIT:-}" ] || wait_up "$2"
}
# wait_up TAG: the silent client TAG has connected (30 s at most)
wait_up() {
    for _ in $(seq 300); do [ -e "$work/$1.up" ] && return 0; sleep 0.1; done
    echo "the client $1 did not connect"
    return 1
}
# has PATTERN: $out matches, else it is shown
has() { grep -q "$1" <<<"$out" || { echo "$out"; return 1; }; }
# timed SECONDS COMMAND...: COMMAND succeeds within SECONDS (wall clock)
timed() {
    local lim=$1; shift
    local t0=$(date +%s%N)
    "$@" >"$work/timed.out" 2>&1 || { cat "$work/timed.out"; return 1; }
    local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "  ($ms ms)"
    [ $ms -lt $((lim * 1000)) ]
}

# ---- silent clients hold up neither other clients nor SIGTERM ----
array a
serve_bg "$work" a "${m[@]}" || exit 1
apid=$spid; spids+=("$apid")
silent "$work/a.sock.ctl" quiet1
check "status answers at once while a client that sent nothing is connected" \
    timed 3 "$URAID" status a
silent "$work/a.sock.ctl" quiet2
silent "$work/a.sock.ctl" half "stat"
check "and with three such clients (one sent half a line)" timed 3 "$URAID" status --json a
check "uraid status lists it meanwhile" \
    bash -c "'$URAID' status | grep -q '^a '"
for _ in $(seq 200); do [ -e "$work/quiet1.gone" ] && break; sleep 0.1; done
check "a silent client is dropped after the timeout ($(cat "$work/quiet1.gone" 2>/dev/null)s)" \
    bash -c "[ -e '$work/quiet1.gone' ] && awk '{ exit !(\$1 >= 5 && \$1 <= 15) }' '$work/quiet1.gone'"
for _ in $(seq 300); do [ -e "$work/half.gone" ] && [ -e "$work/quiet2.gone" ] && break; sleep 0.1; done
# all 16 start together: one after another, a loaded machine can take longer
# than the 10 s idle timeout to start them, and the first would be dropped
for i in $(seq 16); do SILENT_NOWAIT=1 silent "$work/a.sock.ctl" busy$i; done
for i in $(seq 16); do wait_up busy$i; done
sleep 0.2
check "16 clients are served at once (none was turned away)" \
    bash -c "! ls '$work'/busy*.gone 2>/dev/null"
out=$(timeout 5 "$URAID" status a 2>&1); rc=$?
check "a 17th client is told the server is busy, at once (exit $rc: $out)" \
    bash -c "[ $rc -eq 1 ] && grep -q busy <<<\"\$0\"" "$out"
t0=$(date +%s%N)
kill -TERM "$apid"
wait "$apid"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "SIGTERM stops the server at once with 16 silent clients connected ($ms ms, exit $rc)" \
    test $rc -eq 0 -a $ms -lt 3000
spid=

# ---- the export socket leads to its control socket, wherever that is ----
array t
serve_bg "$work" t --control="$work/tc.ctl" "${m[@]}" || exit 1
tpid=$spid; spids+=("$tpid")
out=$("$URAID" status "$work/t.sock" 2>&1)
check "status by an export socket whose control socket is elsewhere" has "Export : 't'"
out=$(cd "$work" && "$URAID" status t.sock 2>&1)
check "status by a relative export socket in the current directory" has "Export : 't'"
out=$(cd "$work" && "$URAID" status tc.ctl 2>&1)
check "status by a relative control socket in the current directory" has "Export : 't'"
out=$(cd "$work" && "$URAID" fail --control=t.sock "$work/t.1" 2>&1)
check "fail --control=EXPORT-SOCKET ($out)" has "set faulty"
check "status by export name still works" bash -c "'$URAID' status t | grep -q \"Export : 't'\""
check "the NBD server never got a control request" \
    bash -c "! grep -i 'client\|flags\|magic' '$work/t.err'"

# a server this run directory does not list: its export socket is refused
# with a clear message, still without writing to it
array u
URAID_RUN_DIR=$work/run2 serve_bg "$work" u --control="$work/uc.ctl" "${m[@]}" || exit 1
upid=$spid; spids+=("$upid")
out=$("$URAID" status "$work/u.sock" 2>&1); rc=$?
check "an unlisted export socket is refused, exit 1 ($out)" \
    bash -c "[ $rc -eq 1 ] && [ \$(wc -l <<<\"\$0\") -eq 1 ] && grep -q 'NBD' <<<\"\$0\"" "$out"
check "its control socket answers" bash -c "'$URAID' status '$work/uc.ctl' | grep -q \"Export : 'u'\""
check "that NBD server never got a control request" \
    bash -c "! grep -i 'client\|flags\|magic' '$work/u.err'"
out=$("$URAID" status "$work/nothere.sock" 2>&1); rc=$?
check "a path that is no socket: one line, exit 1 ($out)" \
    bash -c "[ $rc -eq 1 ] && [ \$(wc -l <<<\"\$0\") -eq 1 ]" "$out"

# ---- status --json without ARRAY: the served arrays as a JSON list ----
array b
serve_bg "$work" b "${m[@]}" || exit 1
bpid=$spid; spids+=("$bpid")
out=$("$URAID" status --json); rc=$?
check "status --json with two arrays served: a list of both (exit $rc)" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert isinstance(d, list) and len(d) == 2, d
by = {x["export_name"]: x for x in d}
assert set(by) == {"t", "b"}, d
t = by["t"]
assert t["level"] == "raid1" and t["raid_devices"] == 2 and t["in_sync"] == 1, t
assert t["state"].startswith("active") or t["state"].startswith("clean"), t
assert t["endpoint"] == "unix:" + sys.argv[2] + "/t.sock", t
assert t["control"] == sys.argv[2] + "/tc.ctl" and t["pid"] == int(sys.argv[3]), t
assert t["array_bytes"] > 0 and by["b"]["in_sync"] == 2, d
' "$out" "$work" "$tpid"
for p in "$tpid" "$bpid" "$upid"; do kill -TERM "$p"; wait "$p"; done
spid=
out=$("$URAID" status --json)
check "status --json with none served: an empty list ($out)" \
    python3 -c 'import json, sys; assert json.loads(sys.argv[1]) == []' "$out"

echo "$fails failed"
[ $fails -eq 0 ]
