#!/bin/bash
# ext4 over the write-back cache, across a crash of the server: RAID 5 (four
# members) served with --write-cache=back, reached through nbdfuse and a loop
# device; mkfs.ext4, files written and `sync`ed (ext4 commits with FLUSH and
# FUA: loop turns them into fsync of the nbdfuse file, nbdfuse into NBD
# FLUSH), then more files written without a sync while the server is killed
# with SIGKILL. After a restart (dirty: the array resyncs by itself; it may
# have been marked clean while idle, the cache's dirty data lost) the file
# system is mounted (the kernel replays its journal), every file synced
# before the kill reads back with its checksum, and after the unmount
# `e2fsck -fn` finds it clean; `uraid check` finds 0 mismatches once the
# resync is done. CACHE_SEEDS rounds (the seeds, printed, choose the files'
# sizes and contents).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need python3 nbdfuse mkfs.ext4 e2fsck losetup
[ -c /dev/fuse ] || { echo "no /dev/fuse"; exit 77; }
losetup -f >/dev/null 2>&1 || { echo "no free loop device (or not permitted)"; exit 77; }
work_dir cache-ext4
SEEDS=${CACHE_SEEDS:-2}
BASE=${SEED:-20261202}
echo "seeds $BASE..$((BASE + SEEDS - 1)), work in $work"
sock=$work/s.sock
fuse=$work/fuse fs=$work/fs
mkdir -p "$fuse" "$fs"
fpid= loop= wpid=
cleanup() {
    [ -n "$wpid" ] && kill "$wpid" 2>/dev/null
    mountpoint -q "$fs" && umount -l "$fs"
    [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
    [ -n "$fpid" ] && kill "$fpid" 2>/dev/null
    mountpoint -q "$fuse" && { fusermount3 -u -z "$fuse" 2>/dev/null || umount -l "$fuse"; }
    [ -n "$spid" ] && kill -9 "$spid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fuse_up() {
    nbdfuse "$fuse" --unix "$sock" >>"$work/nbdfuse.log" 2>&1 &
    fpid=$!
    for _ in $(seq 50); do [ -e "$fuse/nbd" ] && break; sleep 0.1; done
    loop=$(losetup -f --show "$fuse/nbd")
}
# fuse_down: detach everything (after a crash the kernel's writes to the
# dead export fail: lazy unmounts, nbdfuse killed)
fuse_down() {
    mountpoint -q "$fs" && { umount "$fs" 2>/dev/null || umount -l "$fs"; }
    [ -n "$loop" ] && losetup -d "$loop"
    loop=
    kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null; fpid=
    fusermount3 -u "$fuse" 2>/dev/null || umount -l "$fuse" 2>/dev/null
    sleep 0.2
}
# files SEED PREFIX N: N files of pseudo-random sizes (4 KiB .. 3 MiB) and
# contents in $fs, named PREFIX.0 ...
files() {
    python3 - "$1" "$fs" "$2" "$3" <<'PY'
import os, random, sys
seed, d, prefix, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
rng = random.Random(seed)
for i in range(n):
    size = rng.randrange(1, 768) * 4096 - rng.randrange(0, 4096)
    with open(os.path.join(d, "%s.%d" % (prefix, i)), "wb") as f:
        f.write(rng.randbytes(size))
PY
}

m=()
for i in 0 1 2 3; do truncate -s 64M "$work/m.$i"; m+=("$work/m.$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --bitmap=none --assume-clean --name=x4 \
    "${m[@]}" >/dev/null || exit 1
for s in $(seq "$BASE" $((BASE + SEEDS - 1))); do
    serve_bg "$work" s --write-cache=back --cache-size=32M "${m[@]}" || { fails=$((fails + 1)); break; }
    fuse_up
    check "seed $s: nbdfuse + losetup: a loop device on the export ($loop)" test -b "$loop"
    if [ "$s" = "$BASE" ]; then
        check "mkfs.ext4 on the write-back export" bash -c "mkfs.ext4 -q -F '$loop' >/dev/null 2>&1"
    fi
    check "seed $s: mounted" mount "$loop" "$fs"
    mkdir -p "$fs/$s"
    files "$s" "$s/synced" 24
    sync
    (cd "$fs/$s" && md5sum synced.*) >"$work/synced.$s.md5"
    echo "  synced: $(wc -l <"$work/synced.$s.md5") files, $(du -sk "$fs/$s" | cut -f1) KiB;" \
        "write_cache: $("$URAID" status --json x4 | python3 -c 'import json, sys; print(json.load(sys.stdin).get("write_cache"))')"
    # files after the sync, and one rewritten over and over, until the kill
    # (O_DIRECT, so that they reach the export now, not at the page cache's
    # next writeback)
    (cd "$fs/$s" && for k in $(seq 1000); do
        dd if=/dev/urandom of="unsynced.$k" bs=64k count=$((k % 7 * 4 + 1)) oflag=direct \
            status=none 2>/dev/null || exit 0
        dd if=/dev/urandom of=scratch bs=64k count=4 conv=notrunc oflag=direct status=none 2>/dev/null
    done) &
    wpid=$!
    sleep 1.5
    echo "  at the kill: $(ls "$fs/$s" | grep -c unsynced) files written after the sync;" \
        "write_cache: $("$URAID" status --json x4 | python3 -c 'import json, sys; print(json.load(sys.stdin).get("write_cache"))')"
    kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
    kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null; wpid=
    fuse_down
    # dirty or clean as the superblocks say: the array may have been marked
    # clean (idle) with dirty data in the cache; that data is lost, nothing
    # on the members is half written
    state=$("$URAID" examine "${m[0]}" | sed -n 's/^ *State : //p')
    before=$(grep -c "resync started" "$work/s.err")
    done_before=$(grep -c "resync done" "$work/s.err")
    serve_bg "$work" s --write-cache=back --cache-size=32M "${m[@]}" || { fails=$((fails + 1)); break; }
    for _ in $(seq 100); do
        [ "$(grep -c "resync started" "$work/s.err")" -gt "$before" ] && break
        sleep 0.05
    done
    if [ "$state" = active ]; then
        check "seed $s: restarted dirty (State : $state), the resync started by itself" \
            test "$(grep -c 'resync started' "$work/s.err")" -gt "$before"
    else
        check "seed $s: restarted clean (State : $state), no resync needed" \
            test "$("$URAID" status --json x4 | python3 -c 'import json, sys; print(json.load(sys.stdin)["resync_needed"])')" = False
        done_before=-1
    fi
    fuse_up
    check "seed $s: mounted again (the journal replayed)" mount "$loop" "$fs"
    check "seed $s: every file synced before the kill reads back ($(wc -l <"$work/synced.$s.md5") files)" \
        bash -c "cd '$fs/$s' && md5sum -c --quiet '$work/synced.$s.md5'"
    for p in $(seq "$BASE" $((s - 1))); do
        check "seed $s: and those of seed $p" \
            bash -c "cd '$fs/$p' && md5sum -c --quiet '$work/synced.$p.md5'"
    done
    umount "$fs"
    e2fsck -fn "$loop" >"$work/fsck.$s" 2>&1
    rc=$?
    check "seed $s: e2fsck -fn finds the file system clean (exit $rc: $(tail -1 "$work/fsck.$s"))" test $rc -eq 0
    [ $rc -eq 0 ] || cat "$work/fsck.$s"
    fuse_down
    for _ in $(seq 600); do
        [ "$(grep -c 'resync done' "$work/s.err")" -gt "$done_before" ] && break
        sleep 0.1
    done
    out=$("$URAID" check --wait x4 2>&1); rc=$?
    check "seed $s: after the resync, check finds 0 mismatches ($out)" test $rc -eq 0
    check "seed $s: stopped cleanly" stop_served x4
done
echo "$fails failed"
[ $fails -eq 0 ]
