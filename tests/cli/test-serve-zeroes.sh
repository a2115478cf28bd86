#!/bin/bash
# WRITE_ZEROES and FAST_ZERO through uraid serve, as NBD's spec asks: a
# FAST_ZERO that would be no faster than a write (NO_HOLE, a part of a RAID
# 5 row) fails at once with ENOTSUP and changes nothing; whole rows are
# zeroed by punching holes; plain WRITE_ZEROES zeroes any range. Then the
# array's parity still matches its data (uraid check).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
need python3
work_dir zeroes
m=()
for i in 0 1 2 3; do truncate -s 16M "$work/z$i.img"; m+=("$work/z$i.img"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --bitmap=none --name=zr "${m[@]}" >/dev/null
serve_bg "$work" zr "${m[@]}" || exit 1
check "WRITE_ZEROES and FAST_ZERO cases (rows of 192 KiB)" \
    python3 "$here/nbd_zeroes.py" "$work/zr.sock" $((3 * 65536))
out=$("$URAID" check --wait zr 2>&1); rc=$?
check "then a check finds 0 mismatches ($out)" test $rc -eq 0
check "stopped" stop_served zr
echo "$fails failed"
[ $fails -eq 0 ]
