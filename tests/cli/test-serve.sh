#!/bin/bash
# uraid serve refereed by real NBD clients: nbdinfo (size, block sizes, flags,
# --list), nbdcopy round trips of random data (cmp, qemu-img compare), fio's
# nbd engine with verify=crc32c over two connections at QD 32, for every level
# healthy and degraded; fio verify while `uraid fail` takes a member away;
# the control commands (status, fail, remove, stop and their refusals);
# SIGTERM marks the array clean; read-only; TCP; the socket's mode.
# Seeds are fixed and printed.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
for t in nbdinfo nbdcopy qemu-img fio python3; do
    command -v $t >/dev/null || { echo "$t not installed (make deps)"; exit 77; }
done
work=$(mktemp -d /tmp/uraid-serve.XXXXXX)
export URAID_RUN_DIR=$work/run
SEED=${SEED:-20261129}
echo "seed $SEED, work in $work"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fails=0
check() {   # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

# serve NAME ARGS...: start uraid serve on $work/NAME.sock, wait until ready
serve() {
    local name=$1; shift
    sock=$work/$name.sock
    "$URAID" serve --socket="$sock" --threads=2 --ready-fd=3 "$@" 3>"$work/$name.ready" \
        >"$work/$name.out" 2>"$work/$name.err" &
    spid=$!
    pids+=("$spid")
    for _ in $(seq 100); do
        grep -q ready "$work/$name.ready" 2>/dev/null && return 0
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.1
    done
    echo "uraid serve did not start:"; cat "$work/$name.out" "$work/$name.err"
    return 1
}
# stop_serve: SIGTERM, expect exit 0
stop_serve() {
    kill -TERM "$spid"
    wait "$spid"
}
uri() { echo "nbd+unix:///?socket=$sock"; }

# make_array NAME LEVEL N [create options...]: members $work/NAME.[0..N-1], 48 MiB each
make_array() {
    local name=$1 level=$2 n=$3; shift 3
    members=()
    for i in $(seq 0 $((n - 1))); do
        truncate -s 48M "$work/$name.$i"
        members+=("$work/$name.$i")
    done
    "$URAID" create --level="$level" --raid-devices="$n" --name="$name" --run "$@" \
        "${members[@]}" >/dev/null 2>"$work/$name.create" ||
        { echo "create failed:"; cat "$work/$name.create"; return 1; }
}

# fio_verify JOBNAME SIZE-BYTES [extra fio args]: two jobs (connections), one per
# half. Options before the first --name are global (fio's command line rule).
fio_verify() {
    local half=$(( $2 / 2 / 1048576 ))M
    (cd "$work" && fio --ioengine=nbd --uri="$(uri)" --rw=randrw --rwmixread=50 \
        --bssplit=4k/40:8k/20:64k/20:512k/10:1m/10 --iodepth=32 \
        --verify=crc32c --verify_fatal=1 --verify_state_save=0 --randseed="$SEED" \
        --group_reporting --output="$work/fio.out" "${@:3}" \
        --name="$1-a" --offset=0 --size="$half" --name="$1-b" --offset="$half" --size="$half" \
        >/dev/null 2>&1)
    local rc=$?
    [ $rc -eq 0 ] || tail -20 "$work/fio.out"
    grep -q "err= 0" "$work/fio.out" && [ $rc -eq 0 ] &&
        [ "$(grep -c "fio: connected to NBD server" "$work/fio.out")" -le 2 ]
}

# ---- every level, healthy and degraded: nbdinfo, nbdcopy, qemu-img, fio verify ----
run_level() {   # run_level NAME LEVEL N MISSING [create options]
    local name=$1 level=$2 n=$3 missing=$4; shift 4
    make_array "$name" "$level" "$n" "$@" || { fails=$((fails + 1)); return; }
    local given=("${members[@]}") run=()
    # a degraded start on purpose: --run (without it a forgotten member is refused)
    [ "$missing" -gt 0 ] && { given=("${members[@]:$missing}"); run=(--run); }
    serve "$name" "${run[@]}" "${given[@]}" || { fails=$((fails + 1)); return; }
    local size
    size=$(nbdinfo --size "$(uri)")
    check "$name: nbdinfo size ($size) is the array's" test "$size" -gt $((40 << 20))
    python3 -c '
import json, sys
d = json.loads(sys.argv[1]); e = d["exports"][0]
assert e["block_size_minimum"] == 512 and e["block_size_maximum"] == 32 << 20, e
# the stripe width (RAID 10: the chunk; linear, RAID 1: 4096; 64 KiB chunks
# here) rounded down to a power of two, as docs/uraid.8 says
lv, n, chunk = sys.argv[2], int(sys.argv[3]), 64 << 10
w = {"0": chunk * n, "4": chunk * (n - 1), "5": chunk * (n - 1), "6": chunk * (n - 2),
     "10": chunk}.get(lv, 4096)
assert e["block_size_preferred"] == 1 << (w.bit_length() - 1), (e, w)
for k in ("can_flush", "can_fua", "can_trim", "can_zero", "can_fast_zero", "can_multi_conn"):
    assert e[k] is True, k
assert e["is_read_only"] is False, e
' "$(nbdinfo --json "$(uri)")" "$level" "$n"
    check "$name: nbdinfo block sizes and flags" test $? -eq 0
    head -c "$size" /dev/urandom >"$work/rnd"
    nbdcopy "$work/rnd" "$(uri)" && nbdcopy "$(uri)" "$work/back"
    check "$name: nbdcopy round trip is byte-identical" cmp -s "$work/rnd" "$work/back"
    check "$name: qemu-img compare" qemu-img compare -q -f raw -F raw "$work/rnd" "$(uri)"
    check "$name: fio nbd verify=crc32c, 2 connections x QD 32" fio_verify "$name" "$size"
    stop_serve
    check "$name: SIGTERM stops the server with status 0" test $? -eq 0
    check "$name: the array is marked clean" \
        bash -c "'$URAID' examine '${given[0]}' | grep -q 'State : clean'"
    check "$name: the sockets are gone" test ! -e "$sock" -a ! -e "$sock.ctl"
    rm -f "${members[@]}"
}
run_level lin linear 2 0
run_level r0 0 3 0 --chunk=64
run_level r1 1 2 0
run_level r1deg 1 3 1
run_level r10 10 4 0 --chunk=64
run_level r10f 10 3 0 --layout=f2 --chunk=64
run_level r10deg 10 4 1 --chunk=64
run_level r5 5 4 0 --chunk=64
run_level r5deg 5 4 1 --chunk=64
run_level r6 6 5 0 --chunk=64
run_level r6deg 6 5 2 --chunk=64
run_level r4 4 3 0 --chunk=64

# ---- misbehaving clients: the right errors, other clients unharmed, data intact ----
make_array abuse 5 4 --chunk=64
serve abuse "${members[@]}"
size=$(nbdinfo --size "$(uri)")
head -c "$size" /dev/urandom >"$work/rnd"
nbdcopy "$work/rnd" "$(uri)"
nbdinfo --size "$(uri)" >/dev/null 2>&1 &   # a well-behaved client alongside
python3 "$(dirname "$0")/nbd_abuse.py" "$sock" "$size"
check "bad clients get the spec's answers" test $? -eq 0
check "the server still serves" bash -c "nbdinfo --size '$(uri)' >/dev/null"
check "the data is intact after the bad clients" qemu-img compare -q -f raw -F raw "$work/rnd" "$(uri)"
eighth=$(( size / 8 / 1048576 ))M
(cd "$work" && fio --ioengine=nbd --uri="$(uri)" --rw=randrw --bssplit=4k/50:64k/50 --iodepth=16 \
    --numjobs=8 --size="$eighth" --offset_increment="$eighth" --verify=crc32c --verify_fatal=1 \
    --verify_state_save=0 --randseed="$SEED" --output="$work/fio-many.out" --name=many \
    >/dev/null 2>&1)
check "8 connections at once, fio verify (8 jobs, no error)" test "$(grep -c "err= 0" "$work/fio-many.out")" = 8
stop_serve
check "stopped cleanly after the bad clients" test $? -eq 0
rm -f "${members[@]}"

# ---- a file system over nbdfuse + loop: mkfs, files, e2fsck, restart, read back ----
if command -v nbdfuse >/dev/null && [ -c /dev/fuse ] && command -v mkfs.ext4 >/dev/null &&
        losetup -f >/dev/null 2>&1; then
    make_array fs 5 4 --chunk=64
    mnt=$work/fuse; mkdir -p "$mnt" "$work/fsmnt"
    fuse_up() {
        nbdfuse "$mnt" --unix "$sock" >/dev/null 2>&1 &
        for _ in $(seq 300); do [ -e "$mnt/nbd" ] && break; sleep 0.1; done
        loop=$(losetup -f --show "$mnt/nbd")
    }
    fuse_down() {
        losetup -d "$loop"
        fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt"
        sleep 0.2
    }
    serve fs "${members[@]}"
    fuse_up
    check "nbdfuse + losetup: a loop device on the export ($loop)" test -b "$loop"
    mkfs.ext4 -q -F "$loop" >/dev/null 2>&1
    check "mkfs.ext4 on the export" test $? -eq 0
    mount "$loop" "$work/fsmnt" && {
        for i in 1 2 3 4 5; do head -c $((i * 700000)) /dev/urandom >"$work/fsmnt/f$i"; done
        (cd "$work/fsmnt" && md5sum f*) >"$work/fs.md5"
        umount "$work/fsmnt"
    }
    check "files written on the mounted file system" test -s "$work/fs.md5"
    check "e2fsck -fn finds the file system clean" bash -c "e2fsck -fn $loop >$work/fsck.out 2>&1"
    fuse_down
    stop_serve
    check "stopped with the file system on it" test $? -eq 0
    serve fs "${members[@]}"
    fuse_up
    mount -o ro "$loop" "$work/fsmnt" &&
        (cd "$work/fsmnt" && md5sum -c --quiet "$work/fs.md5") && umount "$work/fsmnt"
    check "after a restart of uraid serve the files read back" test $? -eq 0
    fuse_down
    stop_serve
    rm -f "${members[@]}"
else
    echo "note: nbdfuse, /dev/fuse, mkfs.ext4 or loop devices missing: file system test not run"
fi

# ---- a member fails under fio load: verify goes on passing ----
for level in 5 6; do
    name=fl$level
    make_array "$name" "$level" 5 --chunk=64 || { fails=$((fails + 1)); continue; }
    serve "$name" "${members[@]}" || { fails=$((fails + 1)); continue; }
    size=$(nbdinfo --size "$(uri)")
    fio_verify "$name-fill" "$size" --rw=write --bs=1m >/dev/null
    fio_verify "$name" "$size" --time_based --runtime=6 --verify_backlog=64 &
    fpid=$!
    sleep 2
    "$URAID" fail "${members[1]}" >/dev/null
    check "raid$level: uraid fail under load" test $? -eq 0
    if [ "$level" = 6 ]; then
        sleep 1
        "$URAID" fail "${members[3]}" >/dev/null
        check "raid6: a second uraid fail under load" test $? -eq 0
    fi
    wait $fpid
    check "raid$level: fio verify passed while members failed" test $? -eq 0
    check "raid$level: fio verify-only pass over the whole array afterwards" \
        fio_verify "$name-check" "$size" --rw=read --verify_only=1
    st=$("$URAID" status --json "$name")
    check "raid$level: status --json shows the failed members" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); lv = int(sys.argv[2])
assert d["degraded"] == (2 if lv == 6 else 1), d
faulty = [m for m in d["members"] if m["state"] == "faulty"]
assert len(faulty) == d["degraded"], d
assert d["server"]["export_name"] == sys.argv[3], d
' "$st" "$level" "$name"
    stop_serve
    check "raid$level: stopped cleanly after failures" test $? -eq 0
    rm -f "${members[@]}"
done

# ---- control commands and their refusals ----
make_array ctl 5 4 --chunk=64
truncate -s 48M "$work/spare" && "$URAID" create --level=1 --raid-devices=2 --run \
    --name=other "$work/spare" missing >/dev/null 2>&1
serve ctl "${members[@]}"
out=$("$URAID" status)
check "status lists the served array" grep -q "^ctl .*raid5" <<<"$out"
check "status ARRAY (human) shows members and the export" \
    bash -c "'$URAID' status ctl | grep -q \"Export : 'ctl'\""
check "status by export socket" bash -c "'$URAID' status '$sock' >/dev/null"
out=$("$URAID" remove "${members[2]}" 2>&1); rc=$?
check "remove of an in-sync member is refused ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'fail it first' <<<\"\$0\"" "$out"
out=$("$URAID" fail "$work/spare" 2>&1); rc=$?
check "fail of a path that is no member is refused ($out)" test $rc -ne 0
check "fail of a member" bash -c "'$URAID' fail '${members[2]}' >/dev/null"
out=$("$URAID" fail "${members[0]}" 2>&1); rc=$?
check "failing a second RAID 5 member needs --force ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q -- --force <<<\"\$0\"" "$out"
check "the array still serves data" nbdcopy "$(uri)" "$work/back"
check "remove of the faulty member" bash -c "'$URAID' remove '${members[2]}' >/dev/null"
ex=$("$URAID" examine "${members[0]}")
check "the others' superblocks forget it (slot 2 missing)" \
    bash -c "grep -q \"Array State : AA.A\" <<<\"\$0\"" "$ex"
out=$("$URAID" status --json ctl)
check "status --json after remove: 3 members, degraded 1" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert len(d["members"]) == 3 and d["degraded"] == 1, d' "$out"
check "bad control request is refused" bash -c "! '$URAID' status --json /nonexistent/x.ctl 2>/dev/null"
check "stop by name" bash -c "'$URAID' stop ctl >/dev/null"
wait "$spid"
check "serve exited 0 after uraid stop" test $? -eq 0
check "no served array left" bash -c "'$URAID' status | grep -q 'no array'"

# ---- refusals at start: nothing written, clear message ----
make_array ref 5 4 --chunk=64
sums=$(md5sum "${members[@]}")
out=$("$URAID" serve --socket="$work/x.sock" "${members[@]}" "$work/spare" 2>&1); rc=$?
check "serve of members of two arrays is refused ($out)" test $rc -ne 0
check "no socket is left behind" test ! -e "$work/x.sock"
out=$("$URAID" serve --socket="$work/x.sock" --listen=127.0.0.1:0 "${members[@]}" 2>&1); rc=$?
check "--socket with --listen is a usage error" test $rc -eq 2
check "the members are unchanged" bash -c "[ \"\$(md5sum $(printf '%q ' "${members[@]}"))\" = \"\$0\" ]" "$sums"

# ---- read-only: writes refused, members untouched; socket mode 0600 ----
serve ro --read-only "${members[@]}"
check "the socket is mode 0600" test "$(stat -c %a "$sock")" = 600
check "nbdinfo: read-only" bash -c "nbdinfo --json '$(uri)' | grep -q '\"is_read_only\": true'"
check "a write to a read-only export fails" bash -c "! nbdcopy '$work/rnd' '$(uri)' 2>/dev/null"
stop_serve
check "read-only: the members are unchanged" \
    bash -c "[ \"\$(md5sum $(printf '%q ' "${members[@]}"))\" = \"\$0\" ]" "$sums"

# ---- TCP on loopback ----
exec 4>"$work/tcp.ready"
"$URAID" serve --listen=127.0.0.1:0 --threads=2 --ready-fd=4 --control="$work/tcp.ctl" \
    "${members[@]}" >"$work/tcp.out" 2>"$work/tcp.err" &
spid=$!; pids+=("$spid"); exec 4>&-
for _ in $(seq 100); do grep -q ready "$work/tcp.ready" && break; sleep 0.1; done
port=$(sed -n 's/.*on tcp:127.0.0.1:\([0-9]*\).*/\1/p' "$work/tcp.out")
check "TCP: serving on a port ($port)" test -n "$port"
check "TCP: nbdinfo over nbd://127.0.0.1:$port" bash -c "nbdinfo --size nbd://127.0.0.1:$port >/dev/null"
stop_serve

echo "$fails failed"
[ $fails -eq 0 ]
