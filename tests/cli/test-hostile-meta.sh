#!/bin/bash
# Hostile metadata (issue 15): member images whose superblock or bitmap header
# an attacker edited (checksum fixed by tests/cli/md_craft.py, so only checks
# beyond it can catch the change). Each bad one is refused by `uraid detail`
# and by `uraid serve` with one line naming the member and the field, and no
# member changes (sha256 of every member before and after); among them PPL
# areas crafted on one member only (its ppl.offset into its data or before
# the device start, a ppl.size whose log shape differs from the others'). The
# unusual but harmless ones are run correctly: a bitmap header with sync_size 0 on a
# dirty array resyncs everything (it used to skip everything and mark the
# array clean), and events near 2^64 neither wrap nor leave members out.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
CRAFT="python3 $(realpath "$(dirname "$0")")/md_craft.py"
. "$(dirname "$0")/lib/common.sh"
need python3 qemu-io sha256sum timeout
work_dir hostile
cd "$work" || exit 1

# sums MEMBER...: sha256 of each member; members over 1 GiB (sparse) by their
# first and last 64 MiB, where the metadata is, and their allocated bytes
sums() {
    local m
    for m in "$@"; do
        if [ "$(stat -c %s "$m")" -le $((1 << 30)) ]; then sha256sum "$m"; continue; fi
        echo "$m $(du --block-size=1 "$m" | cut -f1) $(head -c 64M "$m" | sha256sum) $(tail -c 64M "$m" | sha256sum)"
    done
}
# mk NAME LEVEL N METADATA [create options]: fresh members NAME0..NAME(N-1), 16 MiB
mk() {
    local name=$1 level=$2 n=$3 meta=$4; shift 4
    local i; members=()
    for ((i = 0; i < n; i++)); do rm -f "$name$i"; truncate -s "${SIZE:-16M}" "$name$i"; members+=("$name$i"); done
    "$URAID" create --level="$level" --raid-devices="$n" --metadata="$meta" --assume-clean \
        --name="$name" "$@" "${members[@]}" >/dev/null || { echo "create $name failed"; exit 1; }
}
# craft EDIT...: the same edits on every member
craft() { local m; for m in "${members[@]}"; do $CRAFT "$m" "$@" || exit 1; done; }
# refused LABEL PATTERN: detail and serve both refuse, with one line matching
# PATTERN (and naming a member), and leave every member as it was
refused() {
    local label=$1 pattern=$2 before out rc
    before=$(sums "${members[@]}")
    out=$("$URAID" detail "${members[@]}" 2>&1); rc=$?
    echo "  detail: $out"
    check "$label: detail refuses" test $rc -ne 0
    check "$label: detail says why in one line" test "$(wc -l <<<"$out")" -eq 1
    check "$label: the line names the member and matches '$pattern'" \
        bash -c 'grep -qE "$1" <<<"$2" && grep -q "${3%0}" <<<"$2"' _ "$pattern" "$out" "${members[0]}"
    out=$(timeout 20 "$URAID" serve --socket="$work/$label.sock" "${members[@]}" 2>&1); rc=$?
    echo "  serve: $out"
    check "$label: serve refuses (exit $rc)" bash -c "[ $rc -ne 0 ] && [ $rc -ne 124 ]"
    check "$label: serve says why in one line" test "$(wc -l <<<"$out")" -eq 1
    check "$label: serve's line matches '$pattern'" grep -qE "$pattern" <<<"$out"
    check "$label: no member changed" test "$before" = "$(sums "${members[@]}")"
}

echo "== a bitmap header copied into the data area and pointed at (RAID 1, 1.2)"
mk bd 1 2 1.2 --bitmap=internal --bitmap-chunk=256
craft copy-bitmap=2112 sb.bitmap_offset=2104
refused bitmap-in-data "bitmap.*(runs into|overlaps) (the )?data"

echo "== a bitmap that overlaps the superblock (1.2: 4 sectors before it)"
mk bs 1 2 1.2 --bitmap=internal --bitmap-chunk=256
craft copy-bitmap=4 sb.bitmap_offset=-4
refused bitmap-over-sb "bitmap.*overlaps the superblock"

echo "== a bitmap that overlaps the superblock (1.0: it runs into it from below)"
mk bt 1 2 1.0 --bitmap=internal --bitmap-chunk=256
sb0=$(( ($(stat -c %s bt0) / 512 - 16) & ~7 ))
craft copy-bitmap=$((sb0 - 4)) sb.bitmap_offset=-4
refused bitmap-over-sb-1.0 "bitmap.*overlaps the superblock"

echo "== a bad-block log pointed into the data area"
mk bb 1 2 1.2
craft sb.bblog_offset=2048
refused bblog-in-data "bad-block log.*(runs into|overlaps) (the )?data"

echo "== metadata 1.0 with data_offset 2^31 (data_size still fits below the superblock)"
mk od 1 2 1.0
craft sb.data_offset=0x80000000
refused data-offset-1.0 "data_offset 2147483648"

echo "== metadata 1.2 with data_offset past the device end"
mk oe 1 2 1.2
craft sb.data_offset=0x80000000
refused data-offset-1.2 "data_offset 2147483648"

echo "== metadata 1.2 with data_size past the device end"
mk os 0 2 1.2
craft sb.data_size=0x100000
refused data-size-1.2 "data_size 1048576"

echo "== a chunk of 8 GiB (RAID 5 of three 17 GiB sparse members)"
SIZE=17G mk hc 5 3 1.2 --chunk=512K
craft sb.chunksize=$((1 << 24)) sb.size=$((1 << 25))
refused huge-chunk "chunk.*8388608 KiB|chunk.*16777216 sectors"
rm -f hc0 hc1 hc2

# md reads ppl.offset and ppl.size from each member's own superblock (mdadm
# places the area per device): one member's crafted, the others' valid
echo "== PPL: one member's ppl.offset puts its log into the data (RAID 5, 1.2)"
mk pd 5 3 1.2 --consistency-policy=ppl
$CRAFT pd1 sb.ppl_offset=5000 || exit 1
refused ppl-into-data "pd1: the partial parity log \(ppl.offset 5000: .*runs into the data"

echo "== PPL: one member's ppl.offset before the device start (1.2: -16 from sector 8)"
mk pb 5 3 1.2 --consistency-policy=ppl
$CRAFT pb2 sb.ppl_offset=-16 || exit 1
refused ppl-before-start "pb2: ppl.offset -16 puts the partial parity log before the device start"

echo "== PPL: one member's ppl.size holds one log where the others' hold two"
mk pm 5 3 1.2 --consistency-policy=ppl
$CRAFT pm1 sb.ppl_size=264 || exit 1
refused ppl-mixed-shapes "pm0: its ppl.size of 2048 sectors holds two logs where .*pm1's \(264 sectors used\) holds one"

echo "== events at 2^64-1 on every member: detail runs it, serve (writing) refuses"
mk ev 1 2 1.2
craft sb.events=0xffffffffffffffff
out=$("$URAID" detail "${members[@]}" 2>&1); rc=$?
echo "$out" | head -20
check "events 2^64-1: detail accepts" test $rc -eq 0
check "events 2^64-1: both members in sync" test "$(grep -c in-sync <<<"$out")" -eq 2
before=$(sums "${members[@]}")
out=$(timeout 20 "$URAID" serve --socket="$work/ev.sock" "${members[@]}" 2>&1); rc=$?
echo "  serve: $out"
check "events 2^64-1: serve refuses to write on (exit $rc)" bash -c "[ $rc -ne 0 ] && [ $rc -ne 124 ]"
check "events 2^64-1: in one line naming the events" bash -c '[ "$(wc -l <<<"$1")" -eq 1 ] && grep -q "events 18446744073709551615" <<<"$1"' _ "$out"
check "events 2^64-1: no member changed" test "$before" = "$(sums "${members[@]}")"

echo "== events 2^64-1 and 2^64-2: one behind is in sync, not left out"
mk ew 1 2 1.2
$CRAFT ew0 sb.events=0xffffffffffffffff && $CRAFT ew1 sb.events=0xfffffffffffffffe
out=$("$URAID" detail "${members[@]}" 2>&1)
check "events 2^64-1/2^64-2: both members in sync" test "$(grep -c in-sync <<<"$out")" -eq 2

echo "== events 2^64-3: served, written, stopped: the count moves without wrapping"
mk ex 1 2 1.2
craft sb.events=0xfffffffffffffffd
serve_bg "$work" ex "${members[@]}" || exit 1
check "events 2^64-3: a write goes through" \
    qemu-io -f raw -c "write -q -P 0x5a 0 64k" "nbd+unix:///?socket=$work/ex.sock"
stop_served ex
ev=$("$URAID" examine ex0 | sed -n 's/ *Events : //p')
echo "  events now $ev"
check "events 2^64-3: events moved on and did not wrap" python3 -c "import sys; assert 2**64-3 <= int(sys.argv[1]) < 2**64" "$ev"
check "events 2^64-3: clean after the stop" bash -c "'$URAID' detail ex0 ex1 | grep -q 'State : clean'"

echo "== a dirty RAID 1 whose bitmap header says sync_size 0: everything is resynced"
mk sz 1 2 1.2 --bitmap=internal --bitmap-chunk=256
craft sb.resync_offset=0 bm.sync_size=0
out=$("$URAID" detail "${members[@]}" 2>&1); rc=$?
echo "$out" | head -30
check "sync_size 0: detail accepts" test $rc -eq 0
serve_bg "$work" sz "${members[@]}" || exit 1
# the resync ended (last_background is in every status: waiting for the
# key alone waited for nothing, and a loaded machine caught it running)
status_until sz 60 'd["last_background"]["kind"] == "resync" and not d["last_background"]["running"]'
check "sync_size 0: the resync visited every chunk (none skipped)" python3 -c '
import json, subprocess, sys
d = json.loads(subprocess.check_output([sys.argv[1], "status", "--json", "sz"]))
lb = d["last_background"]
print("  resync:", lb)
assert lb["kind"] == "resync" and lb["result"] == "completed", lb
assert lb["skipped_bytes"] == 0 and lb["done_bytes"] == lb["total_bytes"] > 0, lb' "$URAID"
stop_served sz
check "sync_size 0: the header's sync_size is the array's now" \
    bash -c "'$URAID' examine sz0 | grep -q 'Bitmap : 60 bits'"

echo "$fails failed"
[ $fails -eq 0 ]
