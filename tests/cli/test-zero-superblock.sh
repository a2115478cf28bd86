#!/bin/bash
# uraid zero-superblock: erases the md superblock (only its own size: the
# rest of the device is unchanged) so that examine finds nothing after;
# refuses a member of a served array (untouched), a device without a
# superblock, and a damaged superblock unless --force; a wrong DEVICE among
# good ones changes nothing; a superblock copy inside the data area is data
# and stays; the same device named twice is zeroed once.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need python3 sha256sum
work_dir zero-sb
echo "work in $work"

sum() { sha256sum "$1" | cut -d' ' -f1; }
# outside PATH OFF LEN: sha256 of PATH with the LEN bytes at OFF left out
outside() {
    python3 -c 'import hashlib, sys
d = open(sys.argv[1], "rb").read(); o, n = int(sys.argv[2]), int(sys.argv[3])
print(hashlib.sha256(d[:o] + d[o + n:]).hexdigest())' "$@"
}
# sb_bytes PATH OFF: the bytes of the superblock at OFF (256 + 2 per role, in 512s)
sb_bytes() {
    python3 -c 'import struct, sys
f = open(sys.argv[1], "rb"); f.seek(int(sys.argv[2]) + 220)
n = struct.unpack("<I", f.read(4))[0]; print((256 + 2 * n + 511) // 512 * 512)' "$@"
}

m=("$work/a.img" "$work/b.img" "$work/c.img")
truncate -s 16M "${m[@]}"
"$URAID" create --level=5 --raid-devices=3 --name=z --bitmap=internal "${m[@]}" >/dev/null || exit 1
serve_bg "$work" z "${m[@]}" || exit 1

# ---- a member of a served array is refused and untouched ----
before=$(sum "${m[1]}")
out=$("$URAID" zero-superblock "${m[1]}" 2>&1); rc=$?
check "a served member is refused, exit $rc ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q \"served array 'z'\" <<<\"\$0\"" "$out"
check "  in one line" one_line "$out"
out=$("$URAID" zero-superblock --force "${m[1]}" 2>&1); rc=$?
check "  even with --force, exit $rc" test $rc -ne 0
check "  the member is untouched (checksum)" test "$(sum "${m[1]}")" = "$before"
stop_served z || { echo "the server did not stop cleanly"; fails=$((fails + 1)); }

# ---- no superblock: an error; one wrong device changes nothing ----
truncate -s 4M "$work/plain.img"
out=$("$URAID" zero-superblock "$work/plain.img" 2>&1); rc=$?
check "no md superblock: exit $rc, one line ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'no md superblock' <<<\"\$0\"" "$out"
before=$(sum "${m[0]}")
out=$("$URAID" zero-superblock "${m[0]}" "$work/plain.img" 2>&1); rc=$?
check "a good DEVICE then a bad one: exit $rc, the good one untouched" \
    bash -c "[ $rc -ne 0 ] && [ '$(sum "${m[0]}")' = '$before' ]"
out=$("$URAID" zero-superblock "$work/nothere.img" 2>&1); rc=$?
check "a missing path: exit $rc" test $rc -ne 0
check "  in one line" one_line "$out"

# ---- a member of a stopped array: only the superblock's own bytes change ----
sbb=$(sb_bytes "${m[0]}" 4096)
echo "the 1.2 superblock of ${m[0]} is $sbb bytes"
# what follows it up to 4 KiB stands in for a bitmap placed at +2 sectors
python3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(4096 + int(sys.argv[2]))
f.write(b"\xa5" * (4096 - int(sys.argv[2])))' "${m[0]}" "$sbb"
rest=$(outside "${m[0]}" 4096 "$sbb")
"$URAID" examine "${m[0]}" >/dev/null
check "before: examine finds the 1.2 superblock" test $? -eq 0
out=$("$URAID" zero-superblock "${m[0]}" 2>&1); rc=$?
check "zero-superblock of a member of a stopped array: exit $rc ($out)" \
    bash -c "[ $rc -eq 0 ] && grep -q 'md 1.2 superblock erased ($sbb bytes' <<<\"\$0\"" "$out"
out=$("$URAID" examine "${m[0]}" 2>&1); rc=$?
check "examine then finds nothing (exit $rc: $out)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'no md superblock' <<<\"\$0\"" "$out"
check "every byte outside the superblock's $sbb is unchanged (what follows it, bitmap, data)" \
    test "$(outside "${m[0]}" 4096 "$sbb")" = "$rest"
check "the superblock's bytes are zero" python3 -c '
import sys
n = int(sys.argv[2])
d = open(sys.argv[1], "rb").read()[4096:4096 + n]
assert d == bytes(n)' "${m[0]}" "$sbb"
out=$("$URAID" zero-superblock "${m[0]}" 2>&1); rc=$?
check "a second time: no superblock left, exit $rc" test $rc -ne 0

# ---- metadata 1.0 (at the end) and 1.1 (at the start) ----
for meta in 1.0 1.1; do
    d=("$work/m$meta.0" "$work/m$meta.1")
    truncate -s 8M "${d[@]}"
    "$URAID" create --level=1 --raid-devices=2 --metadata=$meta --name=m "${d[@]}" >/dev/null
    out=$("$URAID" zero-superblock "${d[@]}" 2>&1); rc=$?
    check "metadata $meta: both erased, exit $rc" \
        bash -c "[ $rc -eq 0 ] && [ \$(grep -c 'md $meta superblock erased' <<<\"\$0\") -eq 2 ]" "$out"
    check "  examine finds nothing on either" \
        bash -c "! '$URAID' examine '${d[0]}' 2>/dev/null && ! '$URAID' examine '${d[1]}' 2>/dev/null"
done

# ---- a 1.0 member whose data area begins with a copy of a 1.2 superblock ----
# (the array's data holds an image of another member): only the 1.0
# superblock is erased, the data area is unchanged byte for byte
truncate -s 8M "$work/src.0" "$work/src.1" "$work/r10.0" "$work/r10.1"
"$URAID" create --level=1 --raid-devices=2 --metadata=1.2 --name=src \
    "$work/src.0" "$work/src.1" >/dev/null || exit 1
sleep 1     # the copy is older: the 1.0 superblock is the one the member is by
"$URAID" create --level=1 --raid-devices=2 --metadata=1.0 --name=r10 \
    "$work/r10.0" "$work/r10.1" >/dev/null || exit 1
dd if="$work/src.0" of="$work/r10.0" bs=4096 count=2 conv=notrunc status=none
data=$(python3 -c 'import hashlib, struct, sys
d = open(sys.argv[1], "rb").read(); at = ((len(d) // 512 - 16) & ~7) * 512
off, size = struct.unpack("<QQ", d[at + 128:at + 144])
print(off, size, hashlib.sha256(d[off * 512:(off + size) * 512]).hexdigest())' "$work/r10.0")
echo "1.0 data area (offset, size in sectors, sha256): $data"
out=$("$URAID" zero-superblock "$work/r10.0" 2>&1); rc=$?
check "the 1.0 superblock erased, the 1.2 copy in the data left and said so, exit $rc ($out)" \
    bash -c "[ $rc -eq 0 ] && grep -q 'md 1.0 superblock erased' <<<\"\$0\" &&
             grep -q 'md 1.2 superblock at byte 4096 left' <<<\"\$0\" &&
             ! grep -q 'md 1.2 superblock erased' <<<\"\$0\"" "$out"
after=$(python3 -c 'import hashlib, sys
d = open(sys.argv[1], "rb").read(); off, size = int(sys.argv[2]), int(sys.argv[3])
print(off, size, hashlib.sha256(d[off * 512:(off + size) * 512]).hexdigest())' "$work/r10.0" ${data% *})
check "  the data area is unchanged byte for byte" test "$after" = "$data"

# ---- the same device named twice (./ and a symlink): zeroed once ----
ln -s "$work/r10.1" "$work/link.img"
out=$(cd "$work" && "$URAID" zero-superblock "$work/r10.1" ./r10.1 link.img 2>&1); rc=$?
check "one device under three names: exit $rc, erased once ($out)" \
    bash -c "[ $rc -eq 0 ] && [ \$(grep -c 'superblock erased' <<<\"\$0\") -eq 1 ]" "$out"
check "  examine finds nothing" bash -c "! '$URAID' examine '$work/r10.1' >/dev/null 2>&1"

# ---- a damaged superblock: only with --force ----
python3 -c '
import sys
f = open(sys.argv[1], "r+b"); f.seek(4096 + 0x60); b = f.read(1); f.seek(4096 + 0x60)
f.write(bytes([b[0] ^ 0xff]))' "${m[1]}"         # a byte of the checksummed part
out=$("$URAID" zero-superblock "${m[1]}" 2>&1); rc=$?
check "a damaged superblock without --force: refused, exit $rc ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'damaged' <<<\"\$0\"" "$out"
out=$("$URAID" zero-superblock --force "${m[1]}" 2>&1); rc=$?
check "  erased with --force, exit $rc ($out)" test $rc -eq 0
check "  examine finds nothing" bash -c "! '$URAID' examine '${m[1]}' >/dev/null 2>&1"

# ---- a superblock place that cannot be read: an error, even with --force ----
# (an LD_PRELOAD shim fails every read of the 1.2 place with EIO)
if command -v cc >/dev/null; then
    cat >"$work/eio.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>
ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, void *, size_t, off_t);
	if (!real)
		real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
	if (off == 4096) {
		errno = EIO;
		return -1;
	}
	return real(fd, buf, n, off);
}
ssize_t pread64(int fd, void *buf, size_t n, off_t off) { return pread(fd, buf, n, off); }
C
    cc -shared -fPIC -o "$work/eio.so" "$work/eio.c" -ldl
    before=$(sum "${m[2]}")
    # (ASan, in make check-asan, wants to be loaded first: let the preload go first)
    out=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
          LD_PRELOAD="$work/eio.so" "$URAID" zero-superblock --force "${m[2]}" 2>&1); rc=$?
    check "a read error at the 1.2 place with --force: refused, exit $rc ($out)" \
        bash -c "[ $rc -ne 0 ] && grep -q 'read error' <<<\"\$0\"" "$out"
    check "  nothing written (checksum)" test "$(sum "${m[2]}")" = "$before"
else
    echo "no cc: the read-error case is not run"
fi

out=$("$URAID" zero-superblock --bogus "${m[2]}" 2>&1); rc=$?
check "a wrong option: one line pointing to --help, exit $rc" \
    bash -c "[ $rc -eq 2 ] && grep -q 'zero-superblock --help' <<<\"\$0\"" "$out"
out=$("$URAID" --zero-superblock "${m[2]}" 2>&1); rc=$?
check "mdadm's --zero-superblock gets the verb to use ($out)" \
    bash -c "[ $rc -eq 2 ] && grep -q 'uraid zero-superblock DEVICE' <<<\"\$0\"" "$out"

[ $fails -eq 0 ]
