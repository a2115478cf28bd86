#!/bin/bash
# The planner against the figures of the classic SSD RAID reviews. The SATA
# SSD of those articles, from its data sheet and the single-drive figures
# they printed: 489 MB/s sequential read, ~77K 4 KiB random read IOPS,
# ~65.5K random write IOPS, 480 GB (447 GiB). Its sequential write is not in
# them: taken as the read figure. The chipset link measured there with six
# drives as JBOD (370K read IOPS, 311K write IOPS, 1600 MB/s read) is given
# as the link's limit where the articles used that controller.
#
# Each line prints the article's figure, the planner's, and their ratio.
# The model is not tuned to these: the test fails only when the planner
# gives no answer (an error, or no IOPS), never on the distance.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need python3
SSD="read_iops=77000,write_iops=65500,read_mib_s=466,write_mib_s=466,capacity=480GB,name=SATA-SSD"
CHIPSET_READ="--link-iops=370000 --link-mib-s=1526"
CHIPSET_WRITE="--link-iops=311000"

# ref LABEL ARTICLE UNIT(iops|mb_s) LEVEL MEMBERS plan-args...
ref() {
    local label=$1 article=$2 unit=$3 level=$4 n=$5 out
    shift 5
    # shellcheck disable=SC2068
    out=$("$URAID" plan --drive="$SSD" --drives="$n" --level="$level" --members="$n" \
        --chunks=64K --spares=0 --failures=0 --json "$@" 2>&1)
    if ! python3 "$label" "$article" "$unit" <<<"$out"; then
        echo "FAIL: $label: $out" | head -3; fails=$((fails + 1))
    fi
}
PYCODE='
import json, sys
label, article, unit = sys.argv[1], float(sys.argv[2]), sys.argv[3]
c = json.load(sys.stdin)["candidates"][0]
p = c["predicted"]
v = p["iops"] if unit == "iops" else p["bw_bytes_per_s"] / 1e6
assert v > 0
print("%-58s article %9.0f %-5s planner %9.0f  ratio %5.2f  (%s, bound %s)" % (label, article,
      "IOPS" if unit == "iops" else "MB/s", v, v / article, c["name"], p["bound"]))
'
python3() { command python3 -c "$PYCODE" "$@"; }

echo "== chipset RAID (host software RAID: its CPU cost per I/O is not given), 2 workers x QD 32"
ref "RAID 0 x4, 4 KiB random read" 300000 iops 0 4 --profile=4k-random-read --iodepth=32 --numjobs=2 $CHIPSET_READ
ref "RAID 0 x6, 4 KiB random read" 300000 iops 0 6 --profile=4k-random-read --iodepth=32 --numjobs=2 $CHIPSET_READ
ref "RAID 0 x6, 4 KiB random write" 276000 iops 0 6 --profile=4k-random-write --iodepth=32 --numjobs=2 $CHIPSET_WRITE
ref "RAID 0 x2, 128 KiB sequential read" 925 mb_s 0 2 --profile=128k-seq-read --iodepth=32 --numjobs=2 $CHIPSET_READ
ref "RAID 0 x3, 128 KiB sequential read" 1300 mb_s 0 3 --profile=128k-seq-read --iodepth=32 --numjobs=2 $CHIPSET_READ
for n in 3 4 5 6; do
    ref "RAID 5 x$n, 4 KiB random write (host software limit, not given)" 10000 iops 5 "$n" --profile=4k-random-write --iodepth=32 --numjobs=2 $CHIPSET_WRITE
done
echo "== hardware RAID controller, 8 SSDs, QD 8 per drive"
ref "RAID 1 x8, 4 KiB random read (> 200K)" 200000 iops 1 8 --profile=4k-random-read --qd-per-drive=8
ref "RAID 5 x8, 4 KiB random read" 300000 iops 5 8 --profile=4k-random-read --qd-per-drive=8
ref "RAID 5 x8, 4 KiB random 70 % read" 75000 iops 5 8 --bs=4k --rw=randrw --rwmixread=70 --qd-per-drive=8
ref "RAID 5 x8, 4 KiB random 90 % read" 140000 iops 5 8 --bs=4k --rw=randrw --rwmixread=90 --qd-per-drive=8
ref "RAID 5 x8, 128 KiB sequential read" 2300 mb_s 5 8 --profile=128k-seq-read --qd-per-drive=8
echo "(24 SSDs in md RAID 0: the articles do not name those drives, so no line for them)"
echo "$fails failed"
[ "$fails" -eq 0 ]
