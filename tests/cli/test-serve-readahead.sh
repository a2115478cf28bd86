#!/bin/bash
# uraid serve --read-ahead: the window set, shown by status (human and
# JSON), sequential reads through NBD served from it and verified (fio
# writes a pattern with checksums, then reads it back in order), off shown
# as off, and bad sizes refused with one line before anything starts.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
need fio
work_dir readahead
m=("$work/a0.img" "$work/a1.img" "$work/a2.img" "$work/a3.img")
for f in "${m[@]}"; do truncate -s 64M "$f"; done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --bitmap=none --name=ra \
    "${m[@]}" >/dev/null

# status --json's read_ahead.KEY
ra() { "$URAID" status --json ra | python3 -c 'import json, sys; print(json.load(sys.stdin)["read_ahead"][sys.argv[1]])' "$1"; }
# ra_is KEY VALUE, ra_above KEY N
ra_is() { [ "$(ra "$1")" = "$2" ]; }
ra_above() { [ "$(ra "$1")" -gt "$2" ]; }
status_says() { "$URAID" status ra | grep -q "$1"; }

for bad in 3K 65M abc -1 1M2; do
    out=$("$URAID" serve --socket="$work/bad.sock" --read-ahead=$bad "${m[@]}" 2>&1)
    rc=$?
    check "--read-ahead=$bad: refused (exit 2)" [ $rc -eq 2 ]
    check "--read-ahead=$bad: one line" one_line "$out"
    check "--read-ahead=$bad: nothing served" bash -c "[ ! -e '$work/bad.sock' ]"
done

# Members on tmpfs or ramfs are copied inline: read-ahead then reads nothing
# ahead by design (readahead.c), so what it read and served is not checked.
fs=$(stat -f -c %T "$work")
in_memory=false
case $fs in tmpfs|ramfs) in_memory=true ;; esac

if serve_bg "$work" ra --read-ahead=1M "${m[@]}"; then
    check "status --json: window 1 MiB" ra_is window_bytes 1048576
    check "status: a Read-ahead line" status_says 'Read-ahead : 1 MiB per stream'
    check "fio: 32 MiB written, then read back in order and verified" \
        fio --name=v --ioengine=nbd --uri="nbd+unix:///?socket=$work/ra.sock" --rw=write --bs=128k \
            --size=32M --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 --output="$work/fio.out"
    if $in_memory; then
        echo "skip: $work is on $fs (members in memory): nothing is read ahead there"
        check "status --json: members in memory" ra_is members_in_memory True
    else
        check "status --json: members not in memory" ra_is members_in_memory False
        check "the verifying reads were read ahead" ra_above prefetched_bytes 0
        check "and served from read-ahead" ra_above served_bytes 0
    fi
    check "stopped" stop_served ra
else
    fails=$((fails + 1))
fi
# serve reads ahead unless told not to (the library's default is off)
if serve_bg "$work" ra "${m[@]}"; then
    check "serve's default: read-ahead on" ra_above window_bytes 0
    check "stopped" stop_served ra
else
    fails=$((fails + 1))
fi
if serve_bg "$work" ra --read-ahead=off "${m[@]}"; then
    check "--read-ahead=off: status --json says so" ra_is enabled False
    check "--read-ahead=off: status says off" status_says 'Read-ahead : off'
    check "stopped" stop_served ra
else
    fails=$((fails + 1))
fi
echo "$fails failed"
[ $fails -eq 0 ]
