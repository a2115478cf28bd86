#!/bin/bash
# Referee for RAID 50 volumes in a pool (docs/pools.md, "RAID 50 and 60
# volumes"): uraid makes a pool on six images with a RAID 50 volume
# (--resiliency=parity --groups=2: inner arrays big-0 and big-1 of three
# partitions each, a RAID 0 named big over them) and a RAID 1 volume m;
# one `uraid serve --pool` serves both, a seeded pattern is written through
# each export, the second drive is failed (big-0 and m degrade) and a
# seventh image added to the served pool (each rebuilds onto a partition
# of it), and the server stops. In the guest, with the seven disks (the
# failed one's stale partitions included), `mdadm --assemble --scan` starts
# the inner arrays from the partitions and then the RAID 0 from them (a
# second scan, if the first did not), big and m read back the same bytes
# (sha256), the spare's partition is a member of big-0, and a check of each
# inner array and of m finds mismatch_cnt 0. Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
command -v nbdcopy >/dev/null && command -v nbdinfo >/dev/null ||
    { echo "SKIP: nbdcopy/nbdinfo not installed"; exit 77; }
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
interop_tmpdir || exit 1
tmp=$INTEROP_TMP
interop_images "$tmp" 7 48M || exit 1
SEED=5051
echo "seed $SEED"
export URAID_RUN_DIR=$tmp/run
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; exit 1; }
d=("$tmp"/disk{0..5}.img)
spare=$tmp/disk6.img

"$URAID" pool create tank "${d[@]}" >/dev/null || fail "pool create"
"$URAID" volume create tank big --resiliency=parity --groups=2 --size=48M "${d[@]}" >/dev/null ||
    fail "volume create big (RAID 50)"
"$URAID" volume create tank m --level=1 --drives=2 --size=8M "${d[@]}" >/dev/null ||
    fail "volume create m"
# the spare joins the pool now: pool add wants every drive of the pool
"$URAID" pool add tank "$spare" "${d[@]}" >/dev/null || fail "pool add"

"$URAID" serve --pool=tank --socket="$tmp/tank.sock" --threads=1 --pid-file="$tmp/tank.pid" \
    "${d[@]}" "$spare" >"$tmp/tank.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -s "$tmp/tank.pid" ] && break; sleep 0.1; done
sums=$tmp/sums
: >"$sums"
n=0
for v in big m; do
    n=$((n + 1))
    size=$(nbdinfo --size "nbd+unix:///$v?socket=$tmp/tank.sock") ||
        fail "$v: not served: $(cat "$tmp/tank.out")"
    python3 -c 'import random, sys
r = random.Random(int(sys.argv[1])); left = int(sys.argv[2])
while left:
    k = min(left, 1 << 20); sys.stdout.buffer.write(r.randbytes(k)); left -= k' \
        $((SEED + n)) "$size" >"$tmp/$v.pat"
    nbdcopy "$tmp/$v.pat" "nbd+unix:///$v?socket=$tmp/tank.sock" || fail "$v: write"
    echo "$v $size $(sha256sum <"$tmp/$v.pat" | cut -d' ' -f1)" >>"$sums"
done
cat "$sums"
# disk1 holds a partition of big-0 (the first three drives) and of m
"$URAID" fail tank "${d[1]}" >/dev/null || fail "uraid fail tank disk1"
"$URAID" add tank "$spare" >"$tmp/add.out" 2>&1 || fail "uraid add tank disk6: $(cat "$tmp/add.out")"
whole() {   # every inner array of big and m: all slots present (pool status)
    "$URAID" pool status --json tank "${d[@]}" "$spare" | python3 -c 'import json,sys
vs = {v["name"]: v for v in json.load(sys.stdin)["volumes"]}
ok = all(g["present"] == g["raid_disks"] for g in vs["big"]["inner"]) and vs["m"]["health"] != "" and not vs["m"]["health"].startswith("degraded")
sys.exit(0 if ok else 1)'
}
for _ in $(seq 600); do whole && break; sleep 0.2; done
whole || fail "not rebuilt: $("$URAID" pool status tank "${d[@]}" "$spare")"
for v in big m; do
    nbdcopy "nbd+unix:///$v?socket=$tmp/tank.sock" "$tmp/$v.back" && cmp "$tmp/$v.pat" "$tmp/$v.back" ||
        fail "$v: not the same bytes after the rebuild"
done
"$URAID" stop tank >/dev/null || kill "$pid"
wait "$pid"
pid=

cat >"$tmp/guest.sh" <<'GUEST'
mdadm --assemble --scan --run 2>&1
# the RAID 0 lies on the inner arrays: a second pass finds it if the first did not
grep -q raid0 /proc/mdstat || mdadm --assemble --scan --run 2>&1
cat /proc/mdstat
mdof() {   # the md device whose array is named $1
    local b
    for b in /sys/block/md*; do
        [ -e "$b/md/level" ] || continue
        if mdadm --detail --export "/dev/${b##*/}" 2>/dev/null | grep -qx "MD_NAME=$1"; then
            echo "${b##*/}"
            return 0
        fi
    done
    return 1
}
for v in big-0 big-1 big m; do
    md=$(mdof "$v") || { echo "vol-$v=missing"; continue; }
    echo "md-$v=$md level=$(cat /sys/block/$md/md/level)"
    want=$(cat /sys/block/$md/md/raid_disks)
    have=$(cat /sys/block/$md/md/dev-*/state 2>/dev/null | grep -c in_sync)
    [ "$want" = "$have" ] && echo "complete-$v=yes" || echo "complete-$v=no ($have of $want)"
    ls /sys/block/$md/md/ | grep '^dev-' | tr '\n' ' '
    echo
done
big=$(mdof big) && ls /sys/block/$big/md/ | grep -q '^dev-md' && echo "stacked-big=yes"
b0=$(mdof big-0) && ls /sys/block/$b0/md/ | grep -q '^dev-vdg' && echo "spare-big-0=yes"
while read -r v size sum; do
    md=$(mdof "$v") || continue
    got=$(dd if=/dev/$md bs=1M 2>/dev/null | head -c "$size" | sha256sum | cut -d' ' -f1)
    [ "$got" = "$sum" ] && echo "vol-$v=same" || echo "vol-$v=differs"
done </host/sums
checked=
for v in big-0 big-1 m; do
    md=$(mdof "$v") || continue
    echo check >/sys/block/$md/md/sync_action
    checked="$checked $v:$md"
done
sleep 1
for vm in $checked; do
    mdadm --wait "/dev/${vm#*:}" || true
    echo "mismatch-${vm%%:*}=$(cat /sys/block/${vm#*:}/md/mismatch_cnt)"
done
mdadm --stop --scan 2>&1
mdadm --stop --scan 2>&1
GUEST
bash -n "$tmp/guest.sh" || fail "guest script syntax"

out=$(interop_run -f "$sums" "$tmp/guest.sh" "${d[@]}" "$spare")
rc=$?
echo "$out"
[ $rc = 0 ] || fail "guest script exit $rc"
for v in big-0 big-1 big m; do
    grep -qx "complete-$v=yes" <<<"$out" || fail "$v: md assembled it without every member"
done
grep -qx "stacked-big=yes" <<<"$out" || fail "big: md's RAID 0 is not over the inner md arrays"
grep -qx "spare-big-0=yes" <<<"$out" || fail "big-0: the spare's partition is not a member in md"
for v in big m; do
    grep -qx "vol-$v=same" <<<"$out" || fail "$v: md did not read the bytes uraid wrote"
done
for v in big-0 big-1 m; do
    grep -qx "mismatch-$v=0" <<<"$out" || fail "$v: md's check found mismatches"
done
echo "PASS: md assembled the RAID 50 volume's inner arrays from the partitions, then its RAID 0, with the spare in the failed drive's place; same bytes, check 0"
