#!/bin/bash
# uraid serve under systemd's Type=notify: a Unix datagram socket (python)
# stands for systemd's $NOTIFY_SOCKET, once as a path and once as an abstract
# name ('@...'). READY=1 must come once the export answers (nbdinfo then
# reads its size at once), STOPPING=1 when it stops. Without NOTIFY_SOCKET
# nothing is sent and serve runs as before.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need nbdinfo python3
work_dir sdnotify
m=()
for i in 0 1 2; do truncate -s 24M "$work/m$i"; m+=("$work/m$i"); done
"$URAID" create --level=5 --raid-devices=3 --chunk=64 --name=nt "${m[@]}" >/dev/null || exit 1

# listen NAME OUT: a datagram socket bound to NAME (path or @abstract) that
# writes each datagram it gets to OUT, one "--" line after each, until STOPPING=1
listen() {
    python3 - "$1" "$2" <<'PY' &
import socket, sys
name, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + name[1:] if name.startswith("@") else name)
s.settimeout(60)                       # stops by itself
with open(out + ".tmp", "w") as f:
    f.write("bound\n"); f.flush()
with open(out, "a") as f:
    while True:
        try:
            d = s.recv(4096).decode()
        except socket.timeout:
            break
        f.write(d + "\n--\n"); f.flush()
        if "STOPPING=1" in d:
            break
PY
    lpid=$!
    for _ in $(seq 100); do [ -s "$2.tmp" ] && return 0; sleep 0.05; done
    return 1
}

for kind in path abstract; do
    got=$work/got.$kind
    if [ $kind = path ]; then sockname=$work/notify.sock; else sockname=@uraid-test-notify-$$; fi
    listen "$sockname" "$got" || { echo "FAIL: the listener did not start"; exit 1; }
    NOTIFY_SOCKET=$sockname "$URAID" serve --socket="$work/nt.sock" --threads=1 "${m[@]}" \
        >"$work/nt.out" 2>"$work/nt.err" &
    spid=$!
    for _ in $(seq 200); do grep -q "READY=1" "$got" 2>/dev/null && break; sleep 0.05; done
    # the export answers the moment READY=1 is there (no wait in between)
    size=$(nbdinfo --size "nbd+unix:///?socket=$work/nt.sock" 2>&1)
    check "$kind: READY=1 received" grep -qx "READY=1" "$got"
    check "$kind: a STATUS line names the export" grep -q "^STATUS=serving export 'nt'" "$got"
    check "$kind: MAINPID is the server's" grep -qx "MAINPID=$spid" "$got"
    check "$kind: the export answers once READY=1 came ($size)" test "$size" -gt $((40 << 20))
    check "$kind: uraid stop" stop_served nt
    wait "$lpid"
    check "$kind: STOPPING=1 at the stop" grep -qx "STOPPING=1" "$got"
    check "$kind: READY=1 once" test "$(grep -cx READY=1 "$got")" -eq 1
    check "$kind: nothing said about the socket" test ! -s "$work/nt.err" -o \
        "$(grep -c NOTIFY "$work/nt.err")" -eq 0
done

# a NOTIFY_SOCKET that is neither a path nor '@name': one line, serving goes on
NOTIFY_SOCKET=relative "$URAID" serve --socket="$work/nt.sock" --threads=1 --pid-file="$work/nt.pid" \
    "${m[@]}" >"$work/nt.out" 2>"$work/nt.err" &
spid=$!
# the line may follow the pid file: wait for it (or for 10 s)
for _ in $(seq 100); do grep -q "cannot tell systemd" "$work/nt.err" && break; sleep 0.1; done
for _ in $(seq 100); do [ -s "$work/nt.pid" ] && break; sleep 0.1; done
check "a bad NOTIFY_SOCKET is reported" grep -q "cannot tell systemd" "$work/nt.err"
check "and serving goes on" stop_served nt
echo "$fails failed"
[ $fails -eq 0 ]
