#!/bin/bash
# Finding arrays by superblock: 20 image files of 3 arrays (RAID 5 with a
# spare, RAID 6, RAID 1 with a spare) among blank and foreign files, a FIFO,
# a directory and a link to a member. `examine --scan` prints one ARRAY line
# per array; a configuration file made of that output finds each array's
# members for `serve --scan/--array/--uuid`; wrong configurations and
# ambiguous names are refused with their line; a forgotten member keeps the
# array down (nothing written) until --run.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need nbdinfo
work_dir scan
d=$work/disks
mkdir -p "$d"
mk() {   # mk NAME LEVEL N SPARES: files NAME.0 .. NAME.(N+SPARES-1)
    local name=$1 level=$2 n=$3 x=$4 files=() chunk=(--chunk=64)
    [ "$level" = 1 ] && chunk=()
    for i in $(seq 0 $((n + x - 1))); do truncate -s 12M "$d/$name.$i.img"; files+=("$d/$name.$i.img"); done
    "$URAID" create --level="$level" --raid-devices="$n" --spare-devices="$x" "${chunk[@]}" \
        --name="$name" "${files[@]}" >/dev/null || { echo "FAIL: create $name"; exit 1; }
}
mk alpha 5 7 1      # 8 files
mk beta 6 6 0       # 6 files
mk gamma 1 5 1      # 6 files: 20 in all
truncate -s 12M "$d/blank.img"
randfile 7 $((12 << 20)) "$d/foreign.img"
echo "not a disk" >"$d/notes.img"
mkfifo "$d/fifo.img"
mkdir "$d/dir.img"
ln -s "$d/alpha.0.img" "$d/link-to-alpha.img"
uuid_of() { "$URAID" examine "$d/$1.0.img" | sed -n 's/ *Array UUID : //p'; }
ua=$(uuid_of alpha) ub=$(uuid_of beta) ug=$(uuid_of gamma)
sums() { md5sum "$d"/*.*.img; }
has() { grep -q -- "$1" <<<"$2"; }     # has PATTERN TEXT

# ---- examine --scan ----
out=$(timeout 30 "$URAID" examine --scan "$d/*.img" 2>"$work/ex.err"); rc=$?
echo "$out"
check "examine --scan exits 0" test $rc -eq 0
check "exactly 3 ARRAY lines" test "$(grep -c '^ARRAY ' <<<"$out")" -eq 3
check "no other line" test "$(wc -l <<<"$out")" -eq 3
check "alpha: its UUID, metadata 1.2, its name, 1 spare" \
    grep -qx "ARRAY /dev/md/alpha metadata=1.2 UUID=$ua name=[^ ]*:alpha spares=1" <<<"$out"
check "beta: its UUID and no spares=" grep -qx "ARRAY /dev/md/beta metadata=1.2 UUID=$ub name=[^ ]*:beta" <<<"$out"
check "gamma: its UUID, 1 spare" grep -qx "ARRAY /dev/md/gamma metadata=1.2 UUID=$ug name=[^ ]*:gamma spares=1" <<<"$out"
out=$("$URAID" examine --scan -v "$d/*.img" 2>&1 >/dev/null)
check "-v names the skipped: blank, foreign, FIFO, link" bash -c \
    "grep -q 'blank.img: skipped: no md superblock' <<<'$out' && grep -q 'foreign.img: skipped' <<<'$out' &&
     grep -q 'fifo.img: skipped: not a regular' <<<'$out' && grep -q 'link-to-alpha.img: skipped: the same device' <<<'$out'"
out=$(timeout 10 "$URAID" examine --scan "$d/fifo.img" "$d/alpha.0.img" 2>&1); rc=$?
check "a FIFO named on the command line is refused, not waited on ($rc)" test $rc -eq 1
check "as not a disk ($out)" has "fifo.img: not a regular file or a block device" "$out"
out=$("$URAID" examine --scan "$d/blank.img" "$d/notes.img" 2>&1); rc=$?
check "no array found: exit 1 with a line ($out)" test $rc -eq 1

# ---- a configuration file from that output ----
conf=$work/uraid.conf
{ echo "# made by examine --scan"; echo "DEVICE $d/*.img"; "$URAID" examine --scan "$d/*.img"; } >"$conf"
sed -i "/alpha/s|\$| export=alpha-nbd|" "$conf"
cat "$conf"
check "examine --scan --config reads the DEVICE line" \
    test "$("$URAID" examine --scan --config="$conf" | grep -c '^ARRAY')" -eq 3
out=$("$URAID" serve --list-arrays --config="$conf")
check "--list-arrays: alpha-nbd beta gamma" test "$(echo $out)" = "alpha-nbd beta gamma"

# members_of EXPORT: the member paths `uraid status` shows, sorted
members_of() { "$URAID" status "$1" | grep -oE "$d/[a-z]+\.[0-9]+\.img" | sort | tr '\n' ' '; }
expect() { ls "$d/$1".*.img | sort | tr '\n' ' '; }

serve_bg "$work" al --scan --config="$conf" --array=alpha-nbd || exit 1
check "serve --scan --array=EXPORT: the 8 files of alpha, spare too" \
    test "$(members_of alpha-nbd)" = "$(expect alpha)"
check "the ARRAY line's export= names the export" grep -q "export 'alpha-nbd'" "$work/al.out"
out=$("$URAID" detail --scan)
check "detail --scan: one line, alpha's ($out)" \
    test "$out" = "ARRAY /dev/md/alpha metadata=1.2 spares=1 name=$(sed -n 's/.*name=\([^ ]*:alpha\).*/\1/p' "$conf") UUID=$ua"
check "alpha stops" stop_served alpha-nbd

serve_bg "$work" be --uuid="$ub" --config="$conf" --name=bexp "$d/beta.*.img" "$d/gamma.*.img" || exit 1
check "serve --uuid with globs: beta's 6 files" test "$(members_of bexp)" = "$(expect beta)"
check "beta stops" stop_served bexp
serve_bg "$work" be1 --uuid="$ub" --config="$conf" --name=bexp -- "$d/beta.*.img" || exit 1
check "serve --uuid -- GLOB: the '--' ends the options" test "$(members_of bexp)" = "$(expect beta)"
check "beta stops" stop_served bexp

# ---- two paths to one member (a copy here; an image and its loop device alike) ----
mkdir "$work/copy"
cp "$d/beta.1.img" "$work/copy/beta-again.img"
serve_bg "$work" bc -v --uuid="$ub" --config="$conf" --name=bcopy "$d/beta.*.img" "$work/copy/*.img" || exit 1
check "one device number, two paths: 6 members, not 7" test "$(members_of bcopy)" = "$(expect beta)"
check "-v says which path was dropped" grep -q "beta-again.img: skipped: device number 1 of array '[^']*beta' again, as $d/beta.1.img" "$work/bc.err"
check "beta stops" stop_served bcopy

# ---- ARRAY lines that name an array by devices= only, or by name= without HOST: ----
printf 'DEVICE %s/*.img\nARRAY /dev/md/bdev devices=%s/beta.*.img\nARRAY /dev/md/two devices=%s/beta.0.img,%s/gamma.0.img\n' \
    "$d" "$d" "$d" "$d" >"$work/devs.conf"
out=$("$URAID" serve --list-arrays --config="$work/devs.conf")
check "--list-arrays: bdev two ($out)" test "$(echo $out)" = "bdev two"
serve_bg "$work" bd --array=bdev --config="$work/devs.conf" --name=bdev || exit 1
check "ARRAY with devices= only: the array found on them is served" \
    test "$(members_of bdev)" = "$(expect beta)"
check "bdev stops" stop_served bdev
out=$("$URAID" serve --array=two --config="$work/devs.conf" 2>&1); rc=$?
check "devices= holding two arrays is refused ($rc)" test $rc -ne 0
check "naming them ($out)" has "more than one array on the devices= of line 3" "$out"
printf 'DEVICE %s/*.img\nARRAY name=gamma\n' "$d" >"$work/short.conf"
serve_bg "$work" gs --scan --config="$work/short.conf" --name=gshort || exit 1
check "name=gamma (no HOST:) names the array called HOST:gamma" \
    test "$(members_of gshort)" = "$(expect gamma)"
check "gamma stops" stop_served gshort

# ---- refusals ----
printf 'DEVICE %s/*.img\nARRAY /dev/md/gamma name=x:gamma\n  colour=blue\n' "$d" >"$work/bad.conf"
out=$("$URAID" serve --scan --config="$work/bad.conf" --array=gamma 2>&1); rc=$?
check "an unknown key fails with exit 2, as a usage error ($rc)" test $rc -eq 2
check "with its line ($out)" has "bad.conf:[23]: unknown key 'colour'" "$out"
out=$("$URAID" serve --uuid="$ug" --config="$conf" "$d/gamma.0.img" "$d/nosuch.img" 2>&1); rc=$?
check "a device named (not a glob) that cannot be read is refused ($rc)" test $rc -ne 0
check "with its name ($out)" has "nosuch.img: cannot read" "$out"
out=$("$URAID" serve --scan --config="$work/nonexistent.conf" 2>&1); rc=$?
check "a missing --config file is an error ($out)" test $rc -ne 0
out=$("$URAID" serve --scan --config="$conf" 2>&1); rc=$?
check "plain --scan with 3 configured arrays is refused ($rc)" test $rc -ne 0
check "and asks which ($out)" has "more than one array.*choose one with --uuid" "$out"
out=$("$URAID" serve --array=nosuch --config="$conf" 2>&1); rc=$?
check "an unknown name is refused ($rc)" test $rc -ne 0
check "with the reason ($out)" has "no array named 'nosuch'" "$out"
mkdir "$work/dup"
truncate -s 12M "$work/dup/g0.img" "$work/dup/g1.img"
"$URAID" create --level=1 --raid-devices=2 --name=gamma "$work/dup/g0.img" "$work/dup/g1.img" >/dev/null
: >"$work/empty.conf"
out=$("$URAID" serve --array=gamma --config="$work/empty.conf" "$d/*.img" "$work/dup/*.img" 2>&1); rc=$?
check "two arrays named gamma: refused ($rc)" test $rc -ne 0
check "naming both ($out)" has "more than one array named 'gamma'.*$ug" "$out"

# ---- a forgotten member: refused, nothing written; then --run ----
before=$(sums)
mv "$d/gamma.2.img" "$work/gamma.2.away"
out=$("$URAID" serve --scan --config="$conf" --array=gamma --socket="$work/ga.sock" 2>&1); rc=$?
echo "$out"
check "a forgotten member keeps gamma down" test $rc -ne 0
check "the refusal names the slot" has "slot 2 (device number 2) missing" "$out"
check "and says how to start it anyway" has "degraded anyway with --run" "$out"
mv "$work/gamma.2.away" "$d/gamma.2.img"
check "nothing was written to any member" test "$before" = "$(sums)"
mv "$d/gamma.2.img" "$work/gamma.2.away"
serve_bg "$work" ga --scan --config="$conf" --array=gamma --run || exit 1
check "--run starts it degraded" grep -q "4 of 5 members in sync" "$work/ga.out"
check "with the 5 files found" test "$(members_of gamma | wc -w)" -eq 5
check "gamma stops" stop_served gamma

# ---- degraded before it stopped: starts without --run ----
serve_bg "$work" be2 --array=beta --config="$conf" || exit 1
check "beta: uraid fail + remove of beta.5" \
    bash -c "'$URAID' fail '$d/beta.5.img' >/dev/null && '$URAID' remove '$d/beta.5.img' >/dev/null"
check "beta stops" stop_served beta
mv "$d/beta.5.img" "$work/beta.5.away"
serve_bg "$work" be3 --array=beta --config="$conf" || exit 1
check "an array degraded when it stopped starts without --run" grep -q "5 of 6 members in sync" "$work/be3.out"
check "beta stops again" stop_served beta
echo "$fails failed"
[ $fails -eq 0 ]
