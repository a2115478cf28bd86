#!/bin/bash
# The write-intent bitmap of a served RAID 5 (md-format.md §2.5): writes set
# the bits of the chunks they touch, on the members (what `uraid examine`
# reads back) and in `uraid status`; two idle sweeps later they are clear and
# events_cleared has moved on; while a member is missing no bit clears; the
# member re-added after a short absence takes its slot back and only the
# chunks written meanwhile are rebuilt (the bytes are counted); the data and
# the parity are right afterwards. A former member that can no longer be
# re-added is refused without --force. The same re-add on a RAID 1: only the
# marked chunks are rebuilt, and with the other member failed afterwards the
# data reads back from the re-added one alone.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need nbdcopy nbdinfo qemu-io python3
work_dir bitmap
SEED=${SEED:-20261130}
echo "seed $SEED, work in $work"
uri="nbd+unix:///?socket=$work/b.sock"
# jget EXPR: a value from `uraid status --json b` (d is the document)
jget() { "$URAID" status --json "${ARR:-b}" | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
disk_dirty() { "$URAID" examine "$1" | sed -n 's/.*Bitmap : .*, \([0-9]*\) dirty.*/\1/p'; }
# wait_for SECONDS CONDITION...: poll until the condition holds
wait_for() { local t=$(($1 * 10)); shift; while [ $t -gt 0 ]; do "$@" && return 0; sleep 0.1; t=$((t - 1)); done; return 1; }
bits_are() { [ "$(jget 'd["bitmap"]["dirty_bits"]')" "$1" "$2" ]; }
# sweeps_pass OFFSET-MiB DELAY: two bitmap sweeps of ${ARR:-b} (--delay=DELAY
# seconds apart) have run since the call, proven by the server: each round
# lets DELAY seconds pass (a sweep is due by then), then writes 4 KiB at
# OFFSET-MiB (a chunk of its own, its bit left set) and waits for the idle
# clean marking, which the metadata worker does in the same tick loop as
# the sweeps, 200 ms after that write: a tick, and so the due sweep, ran
# after the wait. Two rounds: a bit that a whole array's sweeps would clear
# (two sweeps after its last write) had its chance.
sweeps_pass() {
    local off=$1 delay=$2 round
    for round in 1 2; do
        sleep "$delay"
        put "$work/witness" "$off" || return 1
        status_until "${ARR:-b}" 30 'd["clean"]' || return 1
    done
}
# readd PREFIX NAME DEV BITS: DEV re-added to NAME; its rebuild must visit
# only the chunks the BITS set bits (256 KiB each) mark and leave 0 mismatches
readd() {
    local l=$1 name=$2 dev=$3 bits=$4 out
    out=$("$URAID" add "$name" "$dev" 2>&1)
    check "${l}the former member is re-added ($out)" bash -c "[ $? -eq 0 ] && grep -q 're-added' <<<\"\$0\"" "$out"
    wait_for 30 bash -c "grep -q 'recovery done' '$work/$name.err'"
    check "${l}its rebuild is done" grep -q "recovery done" "$work/$name.err"
    check "${l}the rebuild visited only the chunks the bitmap marks" python3 -c '
import json, subprocess, sys
d = json.loads(subprocess.check_output([sys.argv[1], "status", "--json", sys.argv[3]]))
lb = d["last_background"]; bits = int(sys.argv[2])
rebuilt = lb["done_bytes"] - lb["skipped_bytes"]
print("  recovery: %d of %d bytes per member rebuilt, %d bits of 256 KiB were set" % (rebuilt, lb["total_bytes"], bits))
assert lb["kind"] == "recovery" and lb["result"] == "completed", lb
assert 0 < rebuilt <= bits * 262144, lb
assert d["degraded"] == 0, d["degraded"]' "$URAID" "$bits" "$name"
    check "${l}a check finds 0 mismatches" bash -c "'$URAID' check --wait $name >/dev/null"
}

# --delay=8: the bits must still be set when a loaded machine gets to look
# at them (at --delay=3, 2 sweeps were 6 s, and a run at a load of 15 found
# them cleared between the write and the checks)
m=()
for i in 0 1 2 3 4; do truncate -s 32M "$work/m$i"; m+=("$work/m$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --bitmap=internal --bitmap-chunk=256 \
    --delay=8 --assume-clean --name=b "${m[@]:0:4}" >/dev/null
serve_bg "$work" b "${m[@]:0:4}"
size=$(nbdinfo --size "$uri")
check "a new array has no bit set" bits_are -eq 0

# put FILE OFFSET-MiB: write FILE there through NBD, and into the expected image
put() {
    qemu-io -f raw -c "write -q -s $1 $(($2 << 20)) $(stat -c %s "$1")" "$uri" >/dev/null &&
        dd if="$1" of="$work/expect" bs=1M seek="$2" conv=notrunc status=none
}
truncate -s "$size" "$work/expect"

# 2 MiB at 4 MiB: stripe rows 21..31 (64 KiB x 3 data chunks each), member
# sectors 2688..4095: bitmap chunks 5, 6 and 7 (256 KiB = 512 sectors each)
randfile "$SEED" 2097152 "$work/w1"
put "$work/w1" 4
check "writes set the bits of their chunks (status: $(jget 'd["bitmap"]["dirty_bits"]'))" bits_are -eq 3
check "and the bits are on the members ($(disk_dirty "${m[0]}") on ${m[0]##*/}, $(disk_dirty "${m[3]}") on ${m[3]##*/})" \
    bash -c "[ '$(disk_dirty "${m[0]}")' = 3 ] && [ '$(disk_dirty "${m[3]}")' = 3 ]"
check "two idle sweeps (--delay=8) later the bits are clear" wait_for 60 bits_are -eq 0
check "on the members too" test "$(disk_dirty "${m[1]}")" = 0
cleared=$(jget 'd["bitmap"]["events_cleared"]')
check "events_cleared moved on ($cleared)" test "$cleared" -gt 0

# data everywhere, then member 2 leaves; writes while it is away
randfile $((SEED + 1)) "$size" "$work/full"
qemu-io -f raw -c "write -q -s $work/full 0 $size" "$uri" >/dev/null && cp "$work/full" "$work/expect"
wait_for 60 bits_are -eq 0
"$URAID" fail "${m[2]}" >/dev/null && "$URAID" remove "${m[2]}" >/dev/null
check "member 2 failed and removed" test "$(jget 'd["degraded"]')" = 1
randfile $((SEED + 2)) 1048576 "$work/w2"
put "$work/w2" 20
randfile $((SEED + 3)) 65536 "$work/w3"
put "$work/w3" 50
randfile $((SEED + 5)) 4096 "$work/witness"
check "two sweeps (--delay=8) ran while degraded (the clean marking after each)" sweeps_pass 60 8
bits=$(jget 'd["bitmap"]["dirty_bits"]')
check "while degraded no bit clears ($bits set: the writes' 3 and the marker's 1)" test "$bits" -ge 4

# re-add: only the marked chunks are rebuilt
readd "" b "${m[2]}" "$bits"
nbdcopy "$uri" "$work/read"
check "the data reads back as written, the re-added member's part included" cmp -s "$work/read" "$work/expect"
check "whole again, the bits clear" wait_for 60 bits_are -eq 0

# a former member whose slot was rebuilt onto another device cannot be re-added
"$URAID" fail "${m[3]}" >/dev/null && "$URAID" remove "${m[3]}" >/dev/null
"$URAID" add b "${m[4]}" >/dev/null
wait_for 30 bash -c "[ \$(grep -c 'recovery done' '$work/b.err') -ge 2 ]"
before=$(md5sum <"${m[3]}")
out=$("$URAID" add b "${m[3]}" 2>&1); rc=$?
echo "  $out"
check "an old member whose slot is taken is refused without --force" \
    bash -c "[ $rc -ne 0 ] && grep -q 'cannot be re-added' <<<\"\$0\"" "$out"
check "and not written to" test "$(md5sum <"${m[3]}")" = "$before"
check "with --force it becomes a spare" bash -c "'$URAID' add --force b '${m[3]}' >/dev/null &&
    [ \"\$('$URAID' status --json b | python3 -c 'import json,sys; print([x[\"state\"] for x in json.load(sys.stdin)[\"members\"] if x[\"device\"].endswith(\"/m3\")][0])')\" = spare ]"
"$URAID" stop b >/dev/null; wait "$spid"; spid=
check "stopped clean" bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : clean'"

# ---- RAID 1: re-add rebuilds only the marked chunks ----
ARR=b1
uri="nbd+unix:///?socket=$work/b1.sock"
m=()
for i in 0 1; do truncate -s 32M "$work/b1.$i"; m+=("$work/b1.$i"); done
"$URAID" create --level=1 --raid-devices=2 --bitmap=internal --bitmap-chunk=256 --delay=3 \
    --assume-clean --name=b1 "${m[@]}" >/dev/null
serve_bg "$work" b1 "${m[@]}"
size=$(nbdinfo --size "$uri")
randfile $((SEED + 4)) "$size" "$work/full1"
qemu-io -f raw -c "write -q -s $work/full1 0 $size" "$uri" >/dev/null && cp "$work/full1" "$work/expect"
check "raid1: the bits clear after the full write" wait_for 20 bits_are -eq 0
"$URAID" fail "${m[1]}" >/dev/null && "$URAID" remove "${m[1]}" >/dev/null
# 1 MiB at 20 MiB and 64 KiB at 25 MiB: bitmap chunks 80..83 and 100 (256 KiB each)
put "$work/w2" 20
put "$work/w3" 25
check "raid1: two sweeps (--delay=3) ran while degraded (the clean marking after each)" sweeps_pass 30 3
bits=$(jget 'd["bitmap"]["dirty_bits"]')
check "raid1: while degraded the written chunks stay marked ($bits bits: 5 and the marker's 1)" test "$bits" -ge 6
readd "raid1: " b1 "${m[1]}" "$bits"
"$URAID" fail "${m[0]}" >/dev/null
nbdcopy "$uri" "$work/read1"
check "raid1: with the other member failed the data reads back from the re-added one" \
    cmp -s "$work/read1" "$work/expect"
"$URAID" stop b1 >/dev/null; wait "$spid"; spid=
echo "$fails failed"
[ $fails -eq 0 ]
