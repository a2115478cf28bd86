#!/bin/bash
# uraid serve with TLS, refereed by real clients: keys made with psktool and
# certificates with certtool in a temporary folder; nbdinfo, nbdcopy (random
# data in and out, cmp), qemu-img info/convert with tls-creds-psk and
# tls-creds-x509, fio's nbd engine with verify=crc32c over nbds; --tls=require
# refusing plain clients (libnbd sees the server's TLS-required message) and
# the STARTTLS rules on the wire (nbd_tls.py); a wrong key, an unknown user
# and a client without a certificate under --tls-verify-peer refused; bad
# TLS options refused at start with one line and no member written; the
# warning for a non-loopback address (in a network namespace of its own).
# Seeds are fixed and printed.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
HERE=$(dirname "$(realpath "$0")")
. "$HERE/lib/common.sh"
need psktool certtool nbdinfo nbdcopy qemu-img fio python3 mdadm
SEED=${SEED:-20261201}
work_dir serve-tls
echo "seed $SEED, work in $work"
cd "$work" || exit 1

# ---- keys and certificates ----
mkdir -p psk bad x509 client ca-only other
psktool -u alice -p psk/keys.psk >/dev/null 2>&1
psktool -u alice -p bad/keys.psk >/dev/null 2>&1    # same user, another key
psktool -u mallory -p other/keys.psk >/dev/null 2>&1
chmod 600 psk/keys.psk
cert() {    # cert NAME TEMPLATE-LINES [CA-NAME]: ECDSA key and certificate
    local name=$1 tmpl=$2 ca=${3:-}
    certtool --generate-privkey --key-type=ecdsa --outfile "$name-key.pem" >/dev/null 2>&1
    printf '%b' "$tmpl" >"$name.info"
    if [ -z "$ca" ]; then
        certtool --generate-self-signed --load-privkey "$name-key.pem" --template "$name.info" \
            --outfile "$name-cert.pem" >/dev/null 2>&1
    else
        certtool --generate-certificate --load-privkey "$name-key.pem" --template "$name.info" \
            --load-ca-certificate "$ca-cert.pem" --load-ca-privkey "$ca-key.pem" \
            --outfile "$name-cert.pem" >/dev/null 2>&1
    fi
}
cert ca 'cn = uraid test CA\nca\ncert_signing_key\nexpiration_days = 2\n'
cert server 'cn = localhost\ndns_name = localhost\nip_address = 127.0.0.1\ntls_www_server\nencryption_key\nsigning_key\nexpiration_days = 2\n' ca
cert client 'cn = alice\ntls_www_client\nencryption_key\nsigning_key\nexpiration_days = 2\n' ca
cp ca-cert.pem server-cert.pem server-key.pem x509/
cp ca-cert.pem client-cert.pem client-key.pem client/
cp ca-cert.pem ca-only/
chmod 600 x509/server-key.pem client/client-key.pem
check "psktool and certtool made the keys" test -s psk/keys.psk -a -s x509/server-cert.pem -a -s client/client-cert.pem || exit 1

# ---- an array with random data ----
for i in 0 1 2; do truncate -s 40M "m$i"; done
"$URAID" create --level=5 --raid-devices=3 --chunk=64K --assume-clean m0 m1 m2 >/dev/null 2>&1 ||
    { echo "create failed"; exit 1; }
randfile "$SEED" $((8 << 20)) data.bin

# start NAME ARGS...: uraid serve (ARGS say where), wait for ready; $spid;
# for --listen=127.0.0.1:0 the port in $port
start() {
    local name=$1; shift
    : >"$name.out"; : >"$name.err"
    "$URAID" serve --threads=2 --ready-fd=3 "$@" m0 m1 m2 3>"$name.ready" \
        >"$name.out" 2>"$name.err" &
    spid=$!
    for _ in $(seq 300); do
        grep -q ready "$name.ready" 2>/dev/null && break
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.1
    done
    grep -q ready "$name.ready" 2>/dev/null || { echo "serve did not start"; cat "$name.err"; return 1; }
    port=$(sed -n 's/.* on tcp:[^ ]*:\([0-9][0-9]*\).*/\1/p' "$name.out" | head -1)
}
stop() { kill -TERM "$spid"; wait "$spid"; local rc=$?; spid=; return $rc; }
psk_uri() { echo "nbds+unix://alice@/?socket=$work/$1.sock&tls-psk-file=$work/${2:-psk}/keys.psk"; }
size=$(( $(stat -c %s m0) ))

# ==== PSK, require, Unix socket ====
start psk --socket="$work/psk.sock" --tls=require --tls-psk=psk/keys.psk || exit 1
out=$(nbdinfo --json "$(psk_uri psk)" 2>&1)
check "nbdinfo nbds+unix with the PSK: TLS negotiated, the export's size" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["TLS"] is True, d
e = d["exports"][0]
assert e["export-size"] > 8 << 20, e
' "$out" || echo "$out"
check "nbdcopy writes random data through TLS" nbdcopy data.bin "$(psk_uri psk)"
nbdcopy "$(psk_uri psk)" back.bin
head -c $((8 << 20)) back.bin >back8.bin
check "nbdcopy reads it back through TLS, byte for byte" cmp data.bin back8.bin
nbdinfo --map "$(psk_uri psk)" >map.txt 2>&1
check "nbdinfo --map through TLS (block status): data where nbdcopy wrote" \
    awk 'NR == 1 { ok = $1 == 0 && $2 >= 8388608 && $4 == "data" } END { exit !ok }' map.txt ||
    head -5 map.txt
out=$(LIBNBD_DEBUG=1 nbdinfo "nbd+unix:///?socket=$work/psk.sock" 2>&1); rc=$?
check "require: a plain client is refused" test $rc -ne 0
check "require: libnbd saw the server's TLS-required message" grep -q "TLS is required" <<<"$out"
out=$(nbdinfo "$(psk_uri psk bad)" 2>&1); rc=$?
check "a wrong key for alice is refused" test $rc -ne 0
out=$(nbdinfo "nbds+unix://mallory@/?socket=$work/psk.sock&tls-psk-file=$work/other/keys.psk" 2>&1); rc=$?
check "an unknown user is refused" test $rc -ne 0
check "the server logged the failed handshakes" grep -q "TLS handshake" psk.err
qdir=$work/psk     # qemu reads DIR/keys.psk
qemu-img info --output=json --object "tls-creds-psk,id=tls0,endpoint=client,dir=$qdir,username=alice" \
    --image-opts "driver=nbd,server.type=unix,server.path=$work/psk.sock,tls-creds=tls0" >qinfo.json 2>&1
check "qemu-img info with tls-creds-psk: the export's virtual size" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["virtual-size"] > 8 << 20, d
' qinfo.json || cat qinfo.json
qemu-img convert -O raw --object "tls-creds-psk,id=tls0,endpoint=client,dir=$qdir,username=alice" \
    --image-opts "driver=nbd,server.type=unix,server.path=$work/psk.sock,tls-creds=tls0" qemu.bin 2>qemu.err
head -c $((8 << 20)) qemu.bin >qemu8.bin 2>/dev/null
check "qemu-img convert reads the data through TLS, byte for byte" cmp data.bin qemu8.bin || cat qemu.err
randfile $((SEED + 1)) $((4 << 20)) data2.bin
qemu-img convert -n --object "tls-creds-psk,id=tls0,endpoint=client,dir=$qdir,username=alice" \
    data2.bin --target-image-opts "driver=nbd,server.type=unix,server.path=$work/psk.sock,tls-creds=tls0" 2>qemu.err
nbdcopy "$(psk_uri psk)" back.bin
check "qemu-img convert writes through TLS (read back with nbdcopy)" cmp -n $((4 << 20)) data2.bin back.bin ||
    cat qemu.err
st=$("$URAID" status "$work/psk.sock" 2>&1)
check "uraid status shows the TLS mode and credentials (require, psk)" \
    grep -Eq "^ +TLS : require \(psk\)$" <<<"$st" || grep TLS <<<"$st"
"$URAID" status --json "$work/psk.sock" >st.json 2>&1
check "uraid status --json: tls require, psk, no x509" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["server"]
assert (s["tls"], s["tls_psk"], s["tls_x509"], s["tls_verify_peer"]) == ("require", True, False, False), s
' st.json || cat st.json
# fio's nbd engine cannot name a key file: its libnbd refuses the URI's local
# file parameters (tls-psk-file, tls-certificates); it is run with x509 below,
# where libnbd finds the CA in $HOME/.pki/libnbd
check "the server stops cleanly (exit 0)" stop

# ==== PSK, require, TCP on loopback ====
start tcp --listen=127.0.0.1:0 --tls=require --tls-psk=psk/keys.psk || exit 1
check "no warning for a loopback address" test ! -s tcp.err
out=$(nbdinfo --size "nbds://alice@127.0.0.1:$port/?tls-psk-file=$work/psk/keys.psk" 2>&1)
check "nbdinfo nbds:// over TCP with the PSK: the size" test "$out" -gt $((8 << 20))
nbdcopy "nbds://alice@127.0.0.1:$port/?tls-psk-file=$work/psk/keys.psk" tcp.bin
check "nbdcopy over TCP+TLS reads what qemu-img wrote" cmp -n $((4 << 20)) data2.bin tcp.bin
qemu-img info --object "tls-creds-psk,id=tls0,endpoint=client,dir=$qdir,username=alice" \
    --image-opts "driver=nbd,server.type=inet,server.host=127.0.0.1,server.port=$port,tls-creds=tls0" \
    >qinfo.txt 2>&1
check "qemu-img info over TCP+TLS" grep -q "virtual size" qinfo.txt || cat qinfo.txt
check "the server stops cleanly" stop

# ==== on: plain and TLS clients both (PSK and x509 offered together) ====
start on --socket="$work/on.sock" --tls=on --tls-psk=psk/keys.psk --tls-certificates=x509 || exit 1
a=$(nbdinfo --size "nbd+unix:///?socket=$work/on.sock" 2>&1)
b=$(nbdinfo --size "$(psk_uri on)" 2>&1)
check "on: a plain client and a TLS client see the same export" test -n "$a" -a "$a" = "$b"
nbdcopy "nbd+unix:///?socket=$work/on.sock" plain.bin
nbdcopy "$(psk_uri on)" tls.bin
check "on: the same bytes with and without TLS" cmp plain.bin tls.bin
nbdcopy "nbds+unix:///?socket=$work/on.sock&tls-certificates=$work/ca-only" x509on.bin
check "on: an x509 client beside the PSK one, the same bytes" cmp plain.bin x509on.bin
# the largest request (32 MiB) each way through TLS: many records per request
randfile $((SEED + 2)) $((34 << 20)) big.bin
nbdcopy --request-size=33554432 big.bin "$(psk_uri on)"
nbdcopy --request-size=33554432 "$(psk_uri on)" bigback.bin
check "32 MiB requests through TLS, byte for byte" cmp -n $((34 << 20)) big.bin bigback.bin
check "the server stops cleanly" stop

# ==== off (the default): STARTTLS refused by policy ====
start off --socket="$work/off.sock" || exit 1
python3 "$HERE/nbd_tls.py" off "$work/off.sock"
check "off: STARTTLS gets NBD_REP_ERR_POLICY (nbd_tls.py)" test $? -eq 0
check "uraid status --json: tls off" python3 -c '
import json, subprocess, sys
s = json.loads(subprocess.run([sys.argv[1], "status", "--json", sys.argv[2]], check=True,
                              capture_output=True, text=True).stdout)["server"]
assert (s["tls"], s["tls_psk"], s["tls_x509"]) == ("off", False, False), s
' "$URAID" "$work/off.sock"
out=$(nbdinfo "$(psk_uri off)" 2>&1); rc=$?
check "off: a client that insists on TLS gives up" test $rc -ne 0
check "the server stops cleanly" stop

# ==== x509, require ====
start x509 --socket="$work/x509.sock" --tls=require --tls-certificates=x509 || exit 1
python3 "$HERE/nbd_tls.py" require "$work/x509.sock" "$work/ca-cert.pem" big.bin
check "require: the STARTTLS rules on the wire (nbd_tls.py)" test $? -eq 0
check "the plaintext behind STARTTLS was dropped (logged)" grep -q "plaintext bytes after STARTTLS dropped" x509.err
python3 "$HERE/nbd_tls.py" hold "$work/x509.sock" "$work/ca-cert.pem" >hold.out 2>&1 &
hpid=$!
for _ in $(seq 100); do grep -q holding hold.out && break; sleep 0.1; done
check "the server stops with a TLS client connected (exit 0)" stop
wait "$hpid"
check "that client got close_notify, not a cut" test $? -eq 0 || cat hold.out
start x509t --listen=127.0.0.1:0 --tls=require --tls-certificates=x509 || exit 1
xuri="nbds://127.0.0.1:$port/?tls-certificates=$work/ca-only"
out=$(nbdinfo --size "$xuri" 2>&1)
check "nbdinfo nbds:// with x509 (the server's certificate checked against the CA)" test "$out" -gt $((8 << 20))
nbdcopy data.bin "$xuri"
nbdcopy "$xuri" x509.bin
check "nbdcopy in and out with x509, byte for byte" cmp -n $((8 << 20)) data.bin x509.bin
mkdir -p home/.pki/libnbd; cp ca-cert.pem home/.pki/libnbd/
(export HOME=$work/home; exec fio --name=tls --ioengine=nbd --uri="nbds://127.0.0.1:$port/" \
    --rw=randwrite --bs=4k --iodepth=32 --size=16M --offset=8M --verify=crc32c --verify_fatal=1 \
    --randseed="$SEED" --output=fio.out) 2>fio.err
check "fio's nbd engine over nbds (x509): 4 KiB random writes at QD 32, verify=crc32c" \
    grep -q "err= 0" fio.out || cat fio.out fio.err
qemu-img info --object "tls-creds-x509,id=tls0,endpoint=client,dir=$work/ca-only" \
    --image-opts "driver=nbd,server.type=inet,server.host=127.0.0.1,server.port=$port,tls-creds=tls0" \
    >qinfo.txt 2>&1
check "qemu-img info with tls-creds-x509" grep -q "virtual size" qinfo.txt || cat qinfo.txt
check "the server stops cleanly" stop

# ==== require, at --max-connections: the refused client hears why over TLS ====
start full --socket="$work/full.sock" --tls=require --tls-certificates=x509 --tls-psk=psk/keys.psk \
    --max-connections=1 --handshake-timeout=120 || exit 1
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
assert len(s.recv(18)) == 18
print("held", flush=True)
time.sleep(120)
' "$work/full.sock" >held.out 2>&1 &
hold_pid=$!
for _ in $(seq 100); do grep -q held held.out && break; sleep 0.1; done
out=$(LIBNBD_DEBUG=1 nbdinfo "$(psk_uri full)" 2>&1); rc=$?
check "refused under require: nbdinfo with TLS exits non-zero" test $rc -ne 0
check "refused under require: libnbd started TLS (the server did not refuse STARTTLS)" \
    eval '! grep -q "server refused TLS" <<<"$out"' || grep -i tls <<<"$out" | tail -3
check "refused under require: libnbd heard the reason over TLS" grep -q "too many connections" <<<"$out" ||
    tail -5 <<<"$out"
python3 "$HERE/nbd_tls.py" refused "$work/full.sock" "$work/ca-cert.pem"
check "refused under require: ERR_POLICY with the reason after STARTTLS (nbd_tls.py)" test $? -eq 0
kill "$hold_pid"; wait "$hold_pid" 2>/dev/null
check "the server stops cleanly" stop

# ==== x509 with --tls-verify-peer ====
start peer --listen=127.0.0.1:0 --tls=require --tls-certificates=x509 --tls-psk=psk/keys.psk \
    --tls-verify-peer || exit 1
out=$(nbdinfo --size "nbds://127.0.0.1:$port/?tls-certificates=$work/ca-only" 2>&1); rc=$?
check "verify-peer: a client without a certificate is refused" test $rc -ne 0
out=$(nbdinfo --size "nbds://127.0.0.1:$port/?tls-certificates=$work/client" 2>&1)
check "verify-peer: a client with a certificate the CA signed is served" test "$out" -gt $((8 << 20))
nbdcopy "nbds://127.0.0.1:$port/?tls-certificates=$work/client" peer.bin
check "verify-peer: its data, byte for byte" cmp -n $((8 << 20)) data.bin peer.bin
st=$("$URAID" status "$(sed -n 's/.*; control \(.*\)$/\1/p' peer.out | head -1)" 2>&1)
check "uraid status: require (psk, x509, client certificates verified)" \
    grep -q "TLS : require (psk, x509, client certificates verified)" <<<"$st" || grep TLS <<<"$st"
# as documented: verify-peer is about x509 clients; a PSK client has proven
# itself by its key (and one with a wrong key is still refused)
out=$(nbdinfo --size "nbds://alice@127.0.0.1:$port/?tls-psk-file=$work/psk/keys.psk" 2>&1)
check "verify-peer with --tls-psk: a PSK client (no certificate) is served" test "$out" -gt $((8 << 20))
out=$(nbdinfo --size "nbds://alice@127.0.0.1:$port/?tls-psk-file=$work/bad/keys.psk" 2>&1); rc=$?
check "verify-peer with --tls-psk: a wrong key is refused" test $rc -ne 0
check "serve --help says verify-peer is for x509 clients, PSK ones prove themselves by the key" \
    eval '"$URAID" serve --help | grep -A1 -- --tls-verify-peer | grep -q "PSK client has proven itself"'
check "the man page says the same" grep -q "has proven itself by that key" "$HERE/../../docs/uraid.8"
check "the server stops cleanly" stop

help=$("$URAID" serve --help)
has_all() { local w; for w; do grep -q -- "$w" <<<"$help" || return 1; done; }
check "uraid serve --help lists the TLS options" \
    has_all "--tls=off|on|require" "--tls-psk=FILE" "--tls-certificates=DIR" "--tls-verify-peer"
check "the man page documents them" grep -q 'tls\\-verify\\-peer' "$HERE/../../docs/uraid.8"

# ==== bad TLS options: one line, non-zero, no member written ====
sums=$(md5sum m0 m1 m2)
refuse() {  # refuse WHAT EXPECTED-TEXT ARGS...
    local what=$1 text=$2; shift 2
    "$URAID" serve --socket="$work/bad.sock" "$@" m0 m1 m2 >bad.out 2>bad.err
    local rc=$?
    check "refused at start: $what" test $rc -ne 0 -a "$(grep -c . bad.err)" -eq 1 || cat bad.err
    check "  with the reason ($text)" grep -q -- "$text" bad.err || cat bad.err
}
refuse "--tls=maybe" "expected off, on or require" --tls=maybe
refuse "--tls=require without keys" "needs keys" --tls=require
refuse "--tls-psk without --tls" "need --tls=require" --tls-psk=psk/keys.psk
refuse "a missing PSK file" "No such file" --tls=require --tls-psk=nope.psk
printf 'alice:12345\n' >odd.psk; chmod 600 odd.psk
refuse "an odd-length key" "line 1: expected USERNAME:HEXKEY" --tls=require --tls-psk=odd.psk
printf 'alice:00ff\n:abcd\n' >noname.psk; chmod 600 noname.psk
refuse "a key without a user" "line 2" --tls=require --tls-psk=noname.psk
: >empty.psk; chmod 600 empty.psk
refuse "an empty PSK file" "no keys" --tls=require --tls-psk=empty.psk
mkdir -p nokey; cp ca-cert.pem server-cert.pem nokey/
refuse "a certificate directory without the key" "server-key.pem missing" --tls=require --tls-certificates=nokey
refuse "--tls-verify-peer without certificates" "tls-verify-peer" --tls=require --tls-psk=psk/keys.psk --tls-verify-peer
mkdir -p noca; cp server-cert.pem server-key.pem noca/
refuse "--tls-verify-peer without ca-cert.pem" "ca-cert.pem missing" --tls=require --tls-certificates=noca --tls-verify-peer
mkdir -p garbage; echo junk >garbage/server-cert.pem; cp server-key.pem garbage/
refuse "a certificate that is not one" "server-cert.pem" --tls=require --tls-certificates=garbage
check "no member was written by the refusals" test "$sums" = "$(md5sum m0 m1 m2)"

# ==== the warning for other hosts (a network namespace nobody else can reach) ====
if unshare -rn true 2>/dev/null; then
    unshare -rn sh -c 'ip link set lo up 2>/dev/null
        "$0" serve --listen=:0 --threads=1 --ready-fd=3 m0 m1 m2 3>warn.ready >warn.out 2>warn.err &
        p=$!; for i in $(seq 300); do grep -q ready warn.ready 2>/dev/null && break; sleep 0.1; done
        kill -TERM $p; wait $p
        "$0" serve --listen=:0 --threads=1 --ready-fd=3 --tls=require --tls-psk=psk/keys.psk \
            m0 m1 m2 3>warn2.ready >warn2.out 2>warn2.err &
        p=$!; for i in $(seq 300); do grep -q ready warn2.ready 2>/dev/null && break; sleep 0.1; done
        kill -TERM $p; wait $p' "$URAID"
    check "--listen=:PORT without --tls=require warns who can do what" \
        grep -q "anyone who can reach the port can read and overwrite" warn.err || cat warn.err
    check "--listen=:PORT with --tls=require does not" test -z "$(grep warning warn2.err)"
else
    echo "skip: no network namespace (unshare -rn) for the warning check"
fi

echo "$fails failed"
[ $fails -eq 0 ]
