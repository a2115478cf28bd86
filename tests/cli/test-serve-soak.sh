#!/bin/bash
# uraid serve soaked in bad clients while fio verifies: CYCLES connections
# (tests/cli/soak_clients.py: clients that vanish, that stall mid-payload or in
# the handshake, that send garbage, that leave replies unread, and
# well-behaved ones that compare what they read back) while fio's nbd engine
# writes and verifies (verify=crc32c) on its own connections, pass after pass.
# Then: every fio pass verified, every well-behaved client read back its
# data, the server closed what it had to, it still answers, and it holds the
# same number of descriptors as before the cycles and no more than RSS_MARGIN
# KiB more memory (both measured idle, after a warm-up of WARMUP cycles). The
# margin is there because each reactor keeps idle I/O buffers for reuse (up to
# 256 MiB, engine.c): RSS grows towards the most buffers of each size that
# were ever in use at once, more slowly the longer it runs; a leak of a
# connection's buffers (128 KiB each) passes it within ~130 cycles in VmData
# (which counts memory allocated and never touched; RSS does not).
# Leaks of small objects are for `make check-asan` (LeakSanitizer at exit,
# checked below). The server runs with the limits low enough to be met:
# --handshake-timeout=2 (stalled handshakes, plaintext or TLS, must be cut by
# the server), --max-connections=24 (16 stalled clients + fio + one fit;
# every OVERLIMIT_EVERY cycles clients are added until one is refused with
# NBD_REP_ERR_POLICY and the reason) and --tls=on with a PSK (STARTTLS then
# garbage, a TLS handshake abandoned, nbdinfo over TLS-PSK, killed or not);
# fio stays plain. After the cycles uraid status must show fio's connection
# alone, then none, and no buffer memory held.
#   CYCLES (default 200; `make soak` runs more), SEED, RSS_MARGIN_KIB (16384),
#   WARMUP (100)
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib/common.sh"
need fio python3 nbdinfo
CYCLES=${CYCLES:-200}
SEED=${SEED:-20261201}
RSS_MARGIN_KIB=${RSS_MARGIN_KIB:-16384}
WARMUP=${WARMUP:-100}
work_dir soak
echo "seed $SEED, $CYCLES cycles, work in $work"

m=("$work/d0" "$work/d1" "$work/d2")
truncate -s 24M "${m[@]}"
"$URAID" create --level=5 --raid-devices=3 --chunk=64 --name=soak --run "${m[@]}" >/dev/null ||
    exit 1
MAX_CONNECTIONS=24 HANDSHAKE_TIMEOUT=2
psk=$work/soak.psk
(umask 077; echo "alice:$(python3 -c "import random; print('%064x' % random.Random($SEED).getrandbits(256))")" >"$psk")
serve_bg "$work" soak "${m[@]}" --handshake-timeout=$HANDSHAKE_TIMEOUT \
    --max-connections=$MAX_CONNECTIONS --tls=on --tls-psk="$psk" || exit 1
sock=$work/soak.sock
size=$(python3 -c '
import sys; sys.path.insert(0, sys.argv[2] + "/lib"); import nbd_wire
s = nbd_wire.connect(sys.argv[1]); print(nbd_wire.go(s)[0])' "$sock" "$HERE") || exit 1
REGION=$((4 << 20))             # the soak clients' last 4 MiB; fio has the rest
FIO_SIZE=$((size - REGION))
echo "export $size bytes: fio on the first $FIO_SIZE, the clients on the last $REGION"

fds() { ls "/proc/$spid/fd" | wc -l; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$spid/status"; }
# VmData counts what was allocated even where it was never touched (RSS does not)
vmdata() { awk '/^VmData:/ { print $2 }' "/proc/$spid/status"; }
# server_field KEY: a number from uraid status --json
server_field() {
    "$URAID" status --json soak | python3 -c '
import json, sys
def find(d, k):
    if isinstance(d, dict):
        if k in d:
            return d[k]
        for v in d.values():
            r = find(v, k)
            if r is not None:
                return r
print(find(json.load(sys.stdin), sys.argv[1]))' "$1"
}
# idle: wait until the server has no connection open (up to 60 s)
idle() {
    local n
    for _ in $(seq 600); do
        n=$(server_field connections)
        [ "$n" = 0 ] && return 0
        sleep 0.1
    done
    echo "still $n connections open"
    return 1
}
# clients SEED CYCLES: soak_clients.py against the server
clients() {
    URAID=$URAID python3 "$HERE/soak_clients.py" "$sock" "$2" "$1" $FIO_SIZE $REGION \
        $MAX_CONNECTIONS $HANDSHAKE_TIMEOUT "$psk"
}
# fio_pass N: one pass of random writes over fio's part, then read and verified
fio_pass() {
    (cd "$work" && fio --name=soak$1 --ioengine=nbd --uri="nbd+unix:///?socket=$sock" \
        --rw=randwrite --bs=4k --iodepth=16 --size=$FIO_SIZE --randseed=$((SEED + $1)) \
        --verify=crc32c --verify_fatal=1 --output="$work/fio-$1.log" >"$work/fio-$1.err" 2>&1)
}

# warm-up: a pass of fio and a round of every kind of client, then measure
check "a warm-up fio pass verifies" fio_pass 0 || cat "$work/fio-0.log"
check "a warm-up of $WARMUP client cycles" clients $((SEED - 1)) "$WARMUP"
check "the server is idle after the warm-up" idle
fd0=$(fds) rss0=$(rss) data0=$(vmdata) total0=$(server_field connections_total)
echo "before: $fd0 descriptors, VmRSS $rss0 KiB, VmData $data0 KiB, $total0 connections so far"

# fio passes until the clients are done
(
    i=1
    while [ ! -e "$work/clients.done" ]; do
        fio_pass $i
        rc=$?
        # a pass that starts while the clients hold the export at its limit
        # is refused at the handshake (before any I/O): counted, run again
        if [ $rc -ne 0 ] && cat "$work/fio-$i.log" "$work/fio-$i.err" |
            grep -q "server policy prevents NBD_OPT_GO" &&
            ! grep -qi "verify" "$work/fio-$i.log" "$work/fio-$i.err"; then
            echo "$i" >>"$work/fio.refused"
        else
            echo "$i $rc" >>"$work/fio.rc"
        fi
        i=$((i + 1))
    done
) &
fio_loop=$!
for _ in $(seq 100); do [ -e "$work/fio-1.log" ] && break; sleep 0.1; done
t0=$(date +%s)
check "$CYCLES client cycles: every one greeted, garbage and EOF closed, stalled handshakes cut, refused over the limit, data read back" \
    clients "$SEED" "$CYCLES"
secs=$(( $(date +%s) - t0 ))
# fio_only: uraid status shows one connection (fio's) or none between passes
fio_only() {
    local n
    for _ in $(seq 300); do
        n=$(server_field connections)
        [ "$n" -le 1 ] && return 0
        sleep 0.1
    done
    echo "still $n connections beside fio"
    return 1
}
check "with fio still running, uraid status shows fio's connection alone" fio_only
touch "$work/clients.done"
wait $fio_loop
passes=$(wc -l <"$work/fio.rc")
bad=$(awk '$2 != 0' "$work/fio.rc")
for f in $(awk '$2 != 0 { print $1 }' "$work/fio.rc"); do
    echo "fio pass $f failed:"
    tail -20 "$work/fio-$f.log" "$work/fio-$f.err"
    echo "the server's last lines:"
    tail -20 "$work/soak.err"
done
refused=$( [ -e "$work/fio.refused" ] && wc -l <"$work/fio.refused" || echo 0)
echo "fio: $passes passes beside the clients ($secs s), $refused refused at the limit and run again"
check "every fio pass beside the clients verified (verify=crc32c)" \
    test "$passes" -ge 1 -a -z "$bad"

check "the server is idle again" idle
buf1=$(server_field buffer_bytes)
check "no buffer memory is held (uraid status: buffer_bytes $buf1)" test "$buf1" = 0
fd1=$(fds) rss1=$(rss) data1=$(vmdata) total1=$(server_field connections_total)
echo "after: $fd1 descriptors, VmRSS $rss1 KiB, VmData $data1 KiB, $total1 connections so far"
check "the server saw every cycle's connection ($((total1 - total0)) >= $CYCLES)" \
    test $((total1 - total0)) -ge "$CYCLES"
check "no descriptor leaked ($fd0 before, $fd1 after)" test "$fd1" -eq "$fd0"
if grep -qa __asan_init "$URAID"; then
    echo "AddressSanitizer build: its quarantine holds freed memory, VmRSS is not compared"
else
    check "memory did not grow past the margin (VmRSS $rss0 -> $rss1 KiB, margin $RSS_MARGIN_KIB)" \
        test "$rss1" -le $((rss0 + RSS_MARGIN_KIB))
    check "nor did the allocated memory (VmData $data0 -> $data1 KiB, margin $RSS_MARGIN_KIB)" \
        test "$data1" -le $((data0 + RSS_MARGIN_KIB))
fi
check "a last fio pass verifies" fio_pass 9999 || cat "$work/fio-9999.log"
out=$("$URAID" check --wait soak 2>&1); rc=$?
check "the parity is consistent (exit $rc: $(tail -1 <<<"$out"))" \
    bash -c '[ $0 -eq 0 ] && grep -q "mismatch_cnt 0$" <<<"$1"' $rc "$out"
stop_served soak; rc=$?
check "uraid stop stops it (exit $rc)" test $rc -eq 0
# a sanitizer build reports leaks and bad accesses at exit, on stderr
check "the server reported no sanitizer error" \
    bash -c '! grep -q "Sanitizer\|runtime error" "$0" || { head -60 "$0"; false; }' "$work/soak.err"

echo "$fails failed"
[ $fails -eq 0 ]
