#!/bin/bash
# uraid serve killed with SIGKILL in the middle of writes starts again at
# once, on the same socket and members: the dead server's listening socket
# and member files are let go a moment after it has gone (its io_uring is
# torn down then), and a restart neither takes them for another server's
# nor refuses the members as in use. Five rounds; then three of uraid stop
# followed at once by a new server.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
need fio
work_dir restart
m=("$work/r0.img" "$work/r1.img")
for f in "${m[@]}"; do truncate -s 64M "$f"; done
"$URAID" create --level=1 --raid-devices=2 --assume-clean --bitmap=none --name=rs "${m[@]}" >/dev/null
for round in 1 2 3 4 5; do
    serve_bg "$work" rs "${m[@]}" || { fails=$((fails + 1)); break; }
    writes_bg "$work" rs --bs=4k --iodepth=16
    sleep 0.5
    kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
    check "round $round: restarted at once after kill -9 under writes" serve_bg "$work" rs "${m[@]}"
    kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null
    [ -n "$spid" ] && check "round $round: stopped" stop_served rs
done
# uraid stop, and a new server on the same socket and members at once: the
# old one, as it exits, leaves the new one's socket and pid files alone
for round in 1 2 3; do
    serve_bg "$work" rs "${m[@]}" || { fails=$((fails + 1)); break; }
    old=$spid
    "$URAID" stop rs >/dev/null
    check "round $round: a new server after uraid stop" serve_bg "$work" rs "${m[@]}"
    wait "$old" 2>/dev/null
    check "round $round: its sockets outlive the old server's exit" \
        bash -c "[ -S '$work/rs.sock' ] && [ -S '$work/rs.sock.ctl' ] && '$URAID' status rs >/dev/null &&
                 [ \"\$(cat '$work/rs.pid')\" = $spid ]"
    [ -n "$spid" ] && check "round $round: stopped" stop_served rs
done
echo "$fails failed"
[ $fails -eq 0 ]
