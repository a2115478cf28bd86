#!/bin/bash
# uraid create refuses bad requests with one clear line, a non-zero exit, and
# without changing a byte of any member; uraid examine reports damage
# precisely and writes nothing.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
work=$(mktemp -d /tmp/uraid-refusals.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fails=0 checks=0

images() {   # images SIZE NAME...
    local size=$1; shift
    for f in "$@"; do rm -f "$f"; truncate -s "$size" "$f"; done
}

snapshot() { md5sum ./*.img 2>/dev/null; }

# refuse "expected message part" uraid-args...: fails with that message, in one
# line for create (examine also prints what it could decode), and nothing changes.
refuse() {
    local want=$1; shift
    local before after out rc
    checks=$((checks + 1))
    before=$(snapshot)
    if [ "$1" = "setpriv" ]; then out=$("$@" 2>&1); else out=$("$URAID" "$@" 2>&1); fi
    rc=$?
    after=$(snapshot)
    if [ $rc -eq 0 ]; then
        echo "FAIL: accepted: uraid $*"; fails=$((fails + 1)); return
    fi
    if [[ $out != *"$want"* ]]; then
        echo "FAIL: uraid $*: expected '$want', got: $out"; fails=$((fails + 1)); return
    fi
    if [ "$1" != examine ] && [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then
        echo "FAIL: uraid $*: more than one line: $out"; fails=$((fails + 1)); return
    fi
    if [ "$before" != "$after" ]; then
        echo "FAIL: uraid $*: a member changed"; fails=$((fails + 1)); return
    fi
    echo "ok (exit $rc): $(printf '%s\n' "$out" | head -n1)"
}

accept() {
    local out
    checks=$((checks + 1))
    if ! out=$("$URAID" "$@" 2>&1); then
        echo "FAIL: refused: uraid $*: $out"; fails=$((fails + 1)); return 1
    fi
    echo "ok: $out"
}

images 32M a.img b.img c.img d.img e.img
images 1M tiny.img

refuse "unknown RAID level 'raid7'" create --level=raid7 -n 3 a.img b.img c.img
refuse "--raid-devices is required" create --level=5 a.img b.img c.img
refuse "raid6 needs at least 4 members" create --level=6 -n 3 a.img b.img c.img
refuse "3 devices given, but --raid-devices=4" create --level=5 -n 4 a.img b.img c.img
refuse "a.img is given twice" create --level=5 -n 3 a.img b.img a.img
ln -s a.img link.img
refuse "link.img is given twice (also as a.img)" create --level=1 -n 2 a.img link.img
refuse "layout 'n2' does not exist for raid5" create --level=5 -n 3 --layout=n2 a.img b.img c.img
refuse "layout 'left-symmetric-6' does not exist for raid5" create -l5 -n3 -p left-symmetric-6 a.img b.img c.img
refuse "layout 'bogus' does not exist for raid6" create --level=6 -n 4 --layout=bogus a.img b.img c.img d.img
refuse "not valid for raid10 with 2 members" create --level=10 -n 2 --layout=n3 a.img b.img
refuse "raid1 has no layouts" create --level=1 -n 2 --layout=left-symmetric a.img b.img
refuse "raid1 has no chunks" create --level=1 -n 2 --chunk=64K a.img b.img
refuse "not a multiple of 4 KiB" create --level=5 -n 3 --chunk=2K a.img b.img c.img
refuse "not a power of two" create --level=5 -n 3 --chunk=96K a.img b.img c.img
refuse "bad chunk size '12X'" create --level=5 -n 3 --chunk=12X a.img b.img c.img
refuse "tiny.img is too small" create --level=1 -n 2 a.img tiny.img
refuse "smaller than --size" create --level=5 -n 3 --size=64M a.img b.img c.img
refuse "cannot open nothere.img" create --level=1 -n 2 a.img nothere.img
mkdir adir.img
refuse "neither a block device nor a regular file" create --level=1 -n 2 a.img adir.img
rmdir adir.img
refuse "survives 1 missing, not 2" create --level=5 -n 4 a.img missing b.img missing
refuse "no member can be missing" create --level=0 -n 2 a.img missing
refuse "a spare cannot be 'missing'" create --level=1 -n 2 -x 1 a.img b.img missing
refuse "every member is 'missing'" create --level=1 -n 2 missing missing
refuse "bitmap is not meaningful for raid0" create --level=0 -n 2 --bitmap=internal a.img b.img
refuse "spares are pointless" create --level=0 -n 2 -x 1 a.img b.img c.img
refuse "metadata '0.90' is not supported" create --level=1 -n 2 --metadata=0.90 a.img b.img
refuse "hold every copy of chunk" create --level=10 -n 4 --layout=n2 a.img b.img missing missing

refuse "--size applies to levels with redundancy" create --level=0 -n 2 --size=10M a.img b.img
refuse "is longer than 31 characters" create --level=1 -n 2 --name=abcdefghijklmnopqrstuvwxyz0123456 a.img b.img
images 16M small.img
refuse "small.img is smaller than --size" create --level=5 -n 3 -x 1 --size=20M a.img b.img c.img small.img
images 300M big0.img big1.img
refuse "bitmap chunk 4 KiB is too small for this array: at least 16 KiB" create --level=1 -n 2 --bitmap=internal --bitmap-chunk=4 big0.img big1.img
rm -f small.img big0.img big1.img

# As an unprivileged user, a read-only image cannot be opened for writing.
chmod 777 "$work"; chmod 666 ./*.img; chmod 444 e.img
if command -v setpriv >/dev/null; then
    refuse "cannot open e.img read-write: Permission denied" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$URAID" create --level=1 -n 2 a.img e.img
fi
chmod 644 e.img

# mdadm's rule: a RAID 6 created degraded is clean (md could not resync it).
printf 'data' | dd of=c.img bs=1 seek=$((5 << 20)) conv=notrunc status=none
accept create --level=6 -n 4 a.img b.img c.img missing
checks=$((checks + 1))
if "$URAID" examine --json a.img | grep -q '"state": "clean"'; then
    echo "ok: degraded raid6 is born clean"
else
    echo "FAIL: degraded raid6 is not clean"; fails=$((fails + 1))
fi
images 32M a.img b.img c.img

# --force wipes the old superblock wherever it was: a 1.0 array re-created as 1.2
# shows only the new array (same second, so a leftover 1.0 would win mdadm's probe).
accept create --level=1 -n 2 --metadata=1.0 --name=old a.img b.img
accept create --level=1 -n 2 --metadata=1.2 --name=new --force a.img b.img
checks=$((checks + 1))
if "$URAID" examine --json a.img | grep -q '"name": ".*:new"' &&
   ! "$URAID" examine --json a.img | grep -q '"version": "1.0"'; then
    echo "ok: --force left no old superblock behind"
else
    echo "FAIL: the old 1.0 superblock survived --force"; fails=$((fails + 1))
fi
images 32M a.img b.img

# Members of an existing array are protected unless --force.
accept create --level=5 -n 3 --name=first a.img b.img c.img
refuse "a.img is a member of raid5 array" create --level=1 -n 2 a.img d.img
refuse "b.img is a member of raid5 array" create --level=1 -n 2 d.img b.img
accept create --level=1 -n 2 --force a.img d.img
checks=$((checks + 1))
if "$URAID" examine --json a.img | grep -q '"level": "raid1"'; then
    echo "ok: --force replaced the raid5 superblock"
else
    echo "FAIL: a.img is not a raid1 member after --force"; fails=$((fails + 1))
fi

# A damaged superblock: examine names the failed check and exits 1; create refuses it.
images 32M a.img b.img c.img d.img
accept create --level=5 -n 3 a.img b.img c.img
printf '\x01' | dd of=b.img bs=1 seek=$((4096 + 100)) conv=notrunc status=none
refuse "checksum" examine b.img
refuse "b.img holds a damaged md superblock (metadata 1.2: checksum" create --level=1 -n 2 b.img d.img
out=$("$URAID" examine --json b.img 2>/dev/null)
checks=$((checks + 1))
if [[ $out == *'"superblock": "damaged"'* && $out == *'"correct": false'* ]]; then
    echo "ok: examine --json reports the damage"
else
    echo "FAIL: examine --json of a damaged member: $out"; fails=$((fails + 1))
fi
refuse "no md superblock (looked for 1.0, 1.1 and 1.2 metadata)" examine d.img
refuse "cannot open: No such file or directory" examine nothere.img

# md 0.90 superblocks (64 KiB from the end) are recognised and protected.
images 32M e.img
printf '\xfc\x4e\x2b\xa9' | dd of=e.img bs=1 seek=$(((32 << 20) - 65536)) conv=notrunc status=none
refuse "holds an md 0.90 superblock" examine e.img
refuse "e.img holds an md 0.90 superblock; use --force" create --level=1 -n 2 d.img e.img

# --dry-run checks and describes but writes nothing.
images 32M a.img b.img
before=$(snapshot)
accept create --level=1 -n 2 --dry-run a.img b.img
checks=$((checks + 1))
[ "$before" = "$(snapshot)" ] || { echo "FAIL: --dry-run wrote"; fails=$((fails + 1)); }

# Members of an array being served belong to that server: a second server
# (even read-only), a create and a bench that writes are refused, with no
# write. (Image files have no O_EXCL: uraid locks them while it uses them.)
images 32M f.img g.img h.img
accept create --level=5 -n 3 --bitmap=none --name=inuse f.img g.img h.img
export URAID_RUN_DIR=$work/run
"$URAID" serve --socket="$work/inuse.sock" --pid-file="$work/inuse.pid" f.img g.img h.img \
    >/dev/null 2>"$work/inuse.err" &
spid=$!
for _ in $(seq 100); do [ -s "$work/inuse.pid" ] && break; sleep 0.1; done
refuse "f.img is in use by another uraid" serve --socket="$work/second.sock" f.img g.img h.img
refuse "f.img is in use by another uraid" serve --read-only --socket="$work/ro.sock" f.img g.img h.img
refuse "g.img is in use by another uraid" create --level=1 -n 2 --force d.img g.img
refuse "h.img is in use by another uraid" bench --force-write --rw=randwrite --runtime=0.1 h.img
refuse "f.img is in use by another uraid" bench --array --force-write --runtime=0.1 f.img g.img h.img
accept detail f.img g.img h.img     # a look only: it locks nothing
"$URAID" stop inuse >/dev/null || kill "$spid"
wait "$spid"
# once it is stopped, the members are free again; a bench may name a file
# twice (two workers on it): it claims it once, not against itself
accept bench --force-write --rw=randwrite --runtime=0.1 d.img
accept bench --force-write --rw=randwrite --runtime=0.1 d.img d.img

echo "$checks checks, $fails failed"
[ $fails -eq 0 ]
