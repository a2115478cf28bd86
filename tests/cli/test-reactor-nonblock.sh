#!/bin/bash
# No blocking metadata write on a reactor thread: `uraid serve` of a RAID 5
# on tmpfs image files (without and with an internal bitmap) is traced with
# strace while fio writes through NBD in bursts with idle gaps longer than
# the idle clean delay (200 ms), so that every burst marks the array active
# again (and, with the bitmap, dirties new bitmap chunks while the sweeps
# clear old ones). The reactor threads are the ones that call io_uring_enter;
# none of them may call pwrite64, pwritev, fdatasync or fsync: superblocks
# and bitmap pages are the metadata worker's (src/engine/md/meta_worker.c).
# Data writes to in-memory members are pwritev2 copies and are allowed.
# NBD block status (nbdinfo --map after the writes) looks for holes with
# lseek(SEEK_DATA/SEEK_HOLE) on the members: the metadata worker's too
# (src/engine/core/allocation.c), never a reactor's.
# A third case runs background jobs under the trace: a repair that rewrites
# parity of an idle (clean) array (its unit waits for the active marking),
# then a rebuild onto a spare after `uraid fail`, under writes with gaps
# (recovery_offset checkpoints, the rebuild's end): their superblock writes
# are the metadata worker's too (src/engine/jobs/sync.c). The last cases
# fail a member in the middle of writes (tests/tools/engine_io, an engine
# with its own threads, a write fault injected half-way): the failure found
# in a completion is recorded by the worker while the piece waits parked
# (src/engine/md/member_state.c, md_fail_slot_parked), RAID 1 and RAID 5.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
ENGINE_IO=$(realpath -m "$BUILD/tests/tools/engine_io")
. "$(dirname "$0")/lib/common.sh"
need strace fio python3
# tracing may be forbidden (no ptrace in a container) or io_uring_enter unknown to strace
strace -f -qq -o /dev/null -e trace=io_uring_enter,pwrite64,fdatasync true 2>/dev/null ||
    { echo "strace cannot trace here"; exit 77; }
work_dir nonblock
# members in memory: on tmpfs when there is one, as the issue asks
mem=/dev/shm
[ -d "$mem" ] && [ -w "$mem" ] || mem=$work
mdir=$(mktemp -d "$mem/uraid-nonblock.XXXXXX") || exit 1
trap '[ -n "${tpid:-}" ] && kill "$tpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work" "$mdir"' EXIT

# run_case NAME CREATE-OPTIONS...: create, serve under strace, write with gaps, check
run_case() {
    local name=$1; shift
    local m=("$mdir/$name.0" "$mdir/$name.1" "$mdir/$name.2")
    truncate -s 40M "${m[@]}"
    "$URAID" create --level=5 --raid-devices=3 --chunk=64 --name="$name" "$@" "${m[@]}" \
        >/dev/null 2>"$work/$name.create" || { cat "$work/$name.create"; fails=$((fails + 1)); return; }
    local trace=$work/$name.trace sock=$work/$name.sock
    rm -f "$work/$name.pid"
    strace -f -qq -o "$trace" \
        -e trace=pwrite64,pwritev,pwritev2,fdatasync,fsync,write,io_uring_enter,prctl,lseek \
        "$URAID" serve --socket="$sock" --threads=2 --pid-file="$work/$name.pid" "${m[@]}" \
        >>"$work/$name.out" 2>>"$work/$name.err" &
    tpid=$!
    for _ in $(seq 150); do [ -s "$work/$name.pid" ] && break; sleep 0.1; done
    [ -s "$work/$name.pid" ] || { echo "serve did not start:"; cat "$work/$name.err"; fails=$((fails + 1)); return; }
    # bursts of 4 random 4 KiB writes, 300 ms apart: the array goes clean in every gap
    (cd "$work" && fio --name=gaps --ioengine=nbd --uri="nbd+unix:///?socket=$sock" \
        --rw=randwrite --bs=4k --iodepth=1 --size=32M --thinktime=300ms --thinktime_blocks=4 \
        --number_ios=40 --randseed=16 --output="$work/$name.fio" >/dev/null 2>&1)
    check "$name: fio wrote with idle gaps" grep -q "err= 0" "$work/$name.fio"
    if command -v nbdinfo >/dev/null; then
        nbdinfo --map "nbd+unix:///?socket=$sock" >"$work/$name.map" 2>&1
        check "$name: nbdinfo --map shows holes and data" \
            bash -c "grep -q hole '$work/$name.map' && grep -q data '$work/$name.map'"
    fi
    "$URAID" stop "$name" >/dev/null || kill "$tpid"
    wait "$tpid"
    tpid=
    check "$name: served and stopped" grep -q . "$trace"
    command -v nbdinfo >/dev/null &&
        check "$name: block status looked for holes (lseek)" grep -q "lseek(" "$trace"
    check_trace "$name" "$trace" 20
}

# check_trace NAME TRACE MIN: no metadata call on a reactor thread, and at
# least MIN metadata writes (pwrite64/pwritev/fdatasync/fsync) by the
# metadata worker (the main thread's at the start and the stop, and lseek,
# are not the ones under test). The threads are known by the names
# they give themselves (prctl PR_SET_NAME, traced): uraid-rN the reactors,
# uraid-meta the metadata worker; a thread that calls io_uring_enter counts
# as a reactor too. Without MIN such writes the trace saw no clean <->
# active marking, no bitmap update, no failure recorded: nothing was tested.
check_trace() {
    python3 - "$2" "$1" "$3" <<'EOF' || fails=$((fails + 1))
import collections, re, sys
trace, name, least = sys.argv[1], sys.argv[2], int(sys.argv[3])
line_re = re.compile(r'^(\d+)\s+(?:<\.\.\. )?(\w+)[( ]')
name_re = re.compile(r'^(\d+)\s+prctl\(PR_SET_NAME, "([^"]*)"')
calls, names, main = [], {}, None
for line in open(trace):
    m = name_re.match(line)
    if m:
        names[int(m.group(1))] = m.group(2)
    m = line_re.match(line)
    if m and 'resumed>' not in line:      # an interrupted call once, not twice
        calls.append((int(m.group(1)), m.group(2), line.rstrip()))
        if main is None:
            main = int(m.group(1))
named = {t for t, n in names.items() if re.fullmatch(r'uraid-r\d+', n)}
reactors = named | {t for t, c, _ in calls if c == 'io_uring_enter'}
meta = [(t, c, l) for t, c, l in calls
        if c in ('pwrite64', 'pwritev', 'fdatasync', 'fsync', 'lseek')]
bad = [(t, c, l) for t, c, l in meta if t in reactors]
writes = collections.Counter(names.get(t, str(t)) for t, c, _ in meta
                             if c != 'lseek' and t not in reactors and t != main)
print(f"{name}: reactor threads {sorted(reactors)} ({len(named)} named uraid-rN); "
      f"{len(meta)} metadata calls (pwrite64/pwritev/fdatasync/fsync/lseek), "
      f"{len(bad)} of them on a reactor thread; metadata writes off the main thread: "
      f"{dict(writes)}")
for _, _, l in bad[:10]:
    print("   ", l)
ok = len(named) >= 2 and not bad and writes['uraid-meta'] >= least
print(("ok: " if ok else "FAIL: ") + f"{name}: no blocking metadata call on a reactor thread"
      f" ({writes['uraid-meta']} metadata writes by uraid-meta, at least {least})")
sys.exit(0 if ok else 1)
EOF
}

# jobs_case: a repair of an idle array with a parity mismatch, then a rebuild
# onto a spare under writes with gaps, all under strace
jobs_case() {
    local name=jobs i
    local m=()
    for i in 0 1 2 3; do truncate -s 24M "$mdir/$name.$i"; m+=("$mdir/$name.$i"); done
    "$URAID" create --level=5 --raid-devices=3 --spare-devices=1 --chunk=64 --assume-clean \
        --bitmap=none --name=$name "${m[@]}" >/dev/null 2>"$work/$name.create" ||
        { cat "$work/$name.create"; fails=$((fails + 1)); return; }
    # a mismatch for the repair to rewrite: junk over data of member 0
    dd if=/dev/urandom of="${m[0]}" bs=64K count=4 seek=160 conv=notrunc status=none
    local trace=$work/$name.trace sock=$work/$name.sock
    rm -f "$work/$name.pid"
    # slow enough for recovery_offset checkpoints (every 3 s) during the rebuild
    strace -f -qq -o "$trace" \
        -e trace=pwrite64,pwritev,pwritev2,fdatasync,fsync,write,io_uring_enter,prctl \
        "$URAID" serve --socket="$sock" --threads=2 --pid-file="$work/$name.pid" \
        --speed-max=5000 "${m[@]}" >>"$work/$name.out" 2>>"$work/$name.err" &
    tpid=$!
    for _ in $(seq 150); do [ -s "$work/$name.pid" ] && break; sleep 0.1; done
    [ -s "$work/$name.pid" ] || { echo "serve did not start:"; cat "$work/$name.err"; fails=$((fails + 1)); return; }
    sleep 0.5       # idle: the array is clean, the repair's rewrite waits for the marking
    local out
    out=$("$URAID" repair --wait $name 2>&1)
    check "$name: the repair rewrote the mismatch ($out)" \
        grep -q "repair done.*mismatch_cnt [1-9]" "$work/$name.err"
    "$URAID" fail "${m[1]}" >/dev/null
    (cd "$work" && fio --name=gaps --ioengine=nbd --uri="nbd+unix:///?socket=$sock" \
        --rw=randwrite --bs=4k --iodepth=1 --size=16M --thinktime=300ms --thinktime_blocks=4 \
        --number_ios=40 --randseed=17 --output="$work/$name.fio" >/dev/null 2>&1)
    check "$name: fio wrote during the rebuild" grep -q "err= 0" "$work/$name.fio"
    for _ in $(seq 300); do grep -q "recovery done" "$work/$name.err" && break; sleep 0.1; done
    check "$name: the rebuild onto the spare completed" grep -q "recovery done" "$work/$name.err"
    out=$("$URAID" check --wait $name 2>&1)
    check "$name: a check after it finds no mismatch ($out)" \
        grep -q "check done.*mismatch_cnt 0" "$work/$name.err"
    "$URAID" stop "$name" >/dev/null || kill "$tpid"
    wait "$tpid"
    tpid=
    check_trace "$name" "$trace" 10
}

run_case plain --bitmap=none
run_case bitmap --bitmap=internal --bitmap-chunk=1M --delay=1
jobs_case

# fail_case NAME LEVEL N: engine_io writes the array with a write fault on
# slot 1 from half-way through, under strace
fail_case() {
    local name=$1 level=$2 n=$3 i
    local m=()
    for ((i = 0; i < n; i++)); do truncate -s 16M "$mdir/$name.$i"; m+=("$mdir/$name.$i"); done
    local chunk=--chunk=64
    [ $level = 1 ] && chunk=
    "$URAID" create --level=$level --raid-devices=$n $chunk --assume-clean --bitmap=none \
        --name=$name "${m[@]}" >/dev/null 2>"$work/$name.create" ||
        { cat "$work/$name.create"; fails=$((fails + 1)); return; }
    local trace=$work/$name.trace
    strace -f -qq -o "$trace" \
        -e trace=pwrite64,pwritev,pwritev2,fdatasync,fsync,write,io_uring_enter,prctl \
        "$ENGINE_IO" write --threads --fail-mid=1 "${m[@]}" 2>"$work/$name.err"
    local rc=$?
    check "$name: the writes went on over the failure (rc $rc)" test $rc -eq 0 ||
        tail -5 "$work/$name.err"
    check "$name: slot 1 failed in the middle of the writes" \
        grep -q "1 slot(s) degraded" "$work/$name.err"
    check "$name: its superblock says so" \
        bash -c "'$URAID' examine '${m[0]}' | grep -q 'Array State : A\\.'"
    check_trace "$name" "$trace" 2
}

if [ -x "$ENGINE_IO" ]; then
    fail_case fail1 1 2
    fail_case fail5 5 3
else
    echo "skip: $ENGINE_IO is not built (make build/tests/tools/engine_io)"
fi

[ $fails -eq 0 ] && echo "all passed" || echo "$fails failed"
[ $fails -eq 0 ]
