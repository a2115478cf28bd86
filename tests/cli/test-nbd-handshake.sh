#!/bin/bash
# src/nbd's handshake and request code refereed by a real client: libnbd's
# nbdinfo (and nbdcopy) against tests/tools/nbd_handshake_server, which serves a
# computed pattern from memory (no engine). Checks size, block sizes, flags,
# --list, an unknown export, and the bytes read back.
set -u
BUILD=${BUILD:-build}
SERVER=$(realpath "$BUILD/tests/tools/nbd_handshake_server")
command -v nbdinfo >/dev/null || { echo "nbdinfo not installed (package libnbd-bin)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
work=$(mktemp -d /tmp/uraid-nbd-hs.XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fails=0
check() {   # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
start() {   # start SOCKET-NAME SERVER-ARGS...: serve until stopped (or 60 s)
    sock=$work/$1; shift
    [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
    "$SERVER" "$sock" --clients=1000 "$@" >>"$work/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do
        [ -S "$sock" ] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "server did not start"; cat "$work/server.log"; exit 1
}

# A writable export with every feature, 8 MiB, stripe-width hint 1.5 MiB.
start rw.sock --size=8388608 --name=uraid --desc="test array" --pref=1572864 \
    --flags=flush,fua,trim,zero,fast-zero,multi-conn
json=$(nbdinfo --json "nbd+unix:///?socket=$sock"); echo "$json"
check "nbdinfo: size, block sizes and flags of the default export" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["protocol"] == "newstyle-fixed", d
e = d["exports"][0]
assert e["export-size"] == 8 << 20, e
assert (e["block_size_minimum"], e["block_size_preferred"], e["block_size_maximum"]) == \
    (512, 1 << 20, 32 << 20), e
for k in ("can_flush", "can_fua", "can_trim", "can_zero", "can_fast_zero", "can_multi_conn"):
    assert e[k] is True, k
assert e["is_read_only"] is False and e["can_cache"] is False, e
if "structured" in d:
    assert d["structured"] is True and e["can_df"] is True, d
' "$json"
check "nbdinfo: the export by its name" nbdinfo --size "nbd+unix:///uraid?socket=$sock"
list=$(nbdinfo --list --json "nbd+unix:///?socket=$sock"); echo "$list"
check "nbdinfo --list: one export with its name and description" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
ex = d["exports"]
assert len(ex) == 1 and ex[0]["export-name"] == "uraid", ex
assert ex[0].get("description") == "test array", ex
' "$list"
out=$(nbdinfo "nbd+unix:///nope?socket=$sock" 2>&1); rc=$?; echo "$out"
check "an unknown export is refused" test $rc -ne 0
check "and the server goes on serving" nbdinfo --size "nbd+unix:///?socket=$sock"
if command -v nbdcopy >/dev/null; then
    nbdcopy "nbd+unix:///?socket=$sock" "$work/copy.img"
    check "nbdcopy reads the server's pattern, byte for byte" python3 -c '
import sys
got = open(sys.argv[1], "rb").read()
want = bytes(((o * 7 + (o >> 9) + 1) & 0xff) for o in range(8 << 20))
assert got == want, "pattern differs"
' "$work/copy.img"
fi

# A read-only export: no write features, no multi-conn unless asked.
start ro.sock --size=1048576 --flags=ro,flush
json=$(nbdinfo --json "nbd+unix:///?socket=$sock"); echo "$json"
check "nbdinfo: read-only export flags" python3 -c '
import json, sys
e = json.loads(sys.argv[1])["exports"][0]
assert e["export-size"] == 1 << 20 and e["is_read_only"] is True, e
assert e["can_flush"] is True, e
for k in ("can_fua", "can_trim", "can_zero", "can_fast_zero", "can_multi_conn"):
    assert e[k] is False, k
assert e["block_size_preferred"] == 4096, e
' "$json"
start nolist.sock --flags=no-list
out=$(nbdinfo --list "nbd+unix:///?socket=$sock" 2>&1); rc=$?; echo "$out"
check "listing refused by policy is reported, not a crash" test $rc -ne 0
check "the export is still usable" nbdinfo --size "nbd+unix:///?socket=$sock"

echo "--- server log"; cat "$work/server.log"
echo "$fails failed"
[ $fails -eq 0 ]
