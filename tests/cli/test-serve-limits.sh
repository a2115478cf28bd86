#!/bin/bash
# uraid serve under clients that try to exhaust it (nbd_limits.py has the
# clients): hundreds of silent clients on one reactor beside a working one;
# the same under a low descriptor limit; --max-connections refusing the next
# client with a message; --handshake-timeout cutting clients that never
# reach transmission; reads whose replies are never read held to
# --max-buffer-memory for all connections together.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
need python3
work_dir limits
m=()
for i in 0 1 2 3; do truncate -s 48M "$work/l$i.img"; m+=("$work/l$i.img"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --bitmap=none --name=lim \
    "${m[@]}" >/dev/null || exit 1
sock=$work/lim.sock
limits() { python3 "$here/nbd_limits.py" "$1" "$URAID" "$sock" "$spid" "${@:2}"; }

# serve_one ARGS...: serve_bg with one reactor thread (the last --threads wins)
serve_one() { serve_bg "$work" lim "${m[@]}" --threads=1 "$@"; }

# ---- 600 silent clients on one reactor, allowed in by --max-connections ----
if serve_one --max-connections=1000; then
    check "silent clients: a working client, new clients and uraid stop are served" \
        limits silent 600
    kill -9 "$spid" 2>/dev/null; wait "$spid"; spid=     # gone already, unless wedged
else
    fails=$((fails + 1))
fi

# ---- a descriptor limit of 64 and 100 silent clients ----
rm -f "$work/lim.pid"
(ulimit -n 64; exec "$URAID" serve --socket="$sock" --threads=1 --pid-file="$work/lim.pid" \
    "${m[@]}" >>"$work/lim.out" 2>>"$work/lim.err") &
spid=$!
for _ in $(seq 100); do [ -s "$work/lim.pid" ] && break; sleep 0.1; done
check "fds: the server warns that the descriptor limit lowers the connection limit" \
    grep -q "open file limit" "$work/lim.err"
check "fds: a working client, uraid status, a new client and uraid stop are served" \
    limits fds 100
kill -9 "$spid" 2>/dev/null; wait "$spid"; spid=

# ---- --max-connections=3 ----
if serve_one --max-connections=3; then
    check "max-connections: the fourth client is refused with a message" limits refuse 3
    nbdinfo_out=$(command -v nbdinfo >/dev/null &&
                  nbdinfo --size "nbd+unix:///?socket=$sock" 2>&1)
    check "max-connections: the server still serves" test -n "$nbdinfo_out"
    check "max-connections: stopped" stop_served lim
else
    fails=$((fails + 1))
fi

# ---- 300 clients that each make the server log a line: rate-limited ----
if serve_one; then
    : >"$work/lim.err"
    python3 -c '
import socket, struct, sys
for i in range(300):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.recv(18)
    s.sendall(struct.pack(">I", 0xFFFFFFFF))       # unknown client flags: logged, closed
    s.settimeout(10)
    while s.recv(4096):
        pass
    s.close()
' "$sock"
    nlines=$(grep -c "unknown client flags" "$work/lim.err")
    # at most 20 a window of 10 s: 300 clients would need over a minute to
    # get 140 lines in
    check "log flood: 300 bad clients, $nlines lines about them (at most 20 every 10 s)" \
        test "$nlines" -ge 1 -a "$nlines" -le 140
    check "log flood: the server still serves" eval 'nbdinfo --size "nbd+unix:///?socket=$sock" >/dev/null'
    check "log flood: stopped" stop_served lim
else
    fails=$((fails + 1))
fi

# ---- --handshake-timeout=1 ----
if serve_one --handshake-timeout=1; then
    check "handshake-timeout: silent and stuck clients are cut, working ones are not" \
        limits handshake
    check "handshake-timeout: the cut is logged" grep -q "handshake" "$work/lim.err"
    check "handshake-timeout: stopped" stop_served lim
else
    fails=$((fails + 1))
fi

# ---- unread replies against --max-buffer-memory=64M ----
if serve_one --max-buffer-memory=64M; then
    check "unread replies: memory held to the cap, others still served" limits unread 64
    check "unread replies: stopped" stop_served lim
else
    fails=$((fails + 1))
fi

# ---- bad values are refused with one line ----
for bad in --max-connections=0 --max-connections=x --handshake-timeout=0 \
           --max-buffer-memory=1M --max-buffer-memory=lots; do
    "$URAID" serve --socket="$work/bad.sock" "$bad" "${m[@]}" >/dev/null 2>"$work/bad.err"
    rc=$?
    check "serve $bad is refused (exit 2, one line)" \
        test $rc -eq 2 -a "$(wc -l <"$work/bad.err")" -eq 1
done
echo "$fails failed"
[ $fails -eq 0 ]
