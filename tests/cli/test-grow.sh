#!/bin/bash
# uraid grow on served arrays of image files: md's takeovers (RAID 4 <-> 5,
# 5 -> 6 with a spare holding Q (parity-last: rebuilt; left-symmetric: the
# restripe to the RAID 6 layout at once fills it, as md) and 6 -> 5, 5 parity-last -> 0 once its
# parity member is out, 0 -> 5 rebuilt from a spare, 1 -> 5 -> 1), RAID 1
# 2 -> 3 mirrors, --size=max after the images grew, --array-size; RAID 5 of 3
# -> RAID 6 of 5 in one restripe (--level=6 --raid-devices=5 --add two, as
# mdadm: the takeover, then layout and member count at once) with fio's
# blocks verified during it, kill -9 half-way and served again. While a
# 5 -> 6 restripe runs, status says degraded 1 as md's sysfs (the Q member
# is not in sync until the end), text and --json. After each:
# the data written first reads back the same (a fixed seed), fio's writes
# running through the change verify, `uraid check` finds 0 mismatches where
# there is redundancy, and mdadm --examine shows md's fields. Refusals: exit
# 1, one line, and every member image byte-identical (sha256).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/grow.sh"
need fio nbdcopy python3 mdadm sha256sum
work_dir grow
echo "work in $work"

SEED=1802
echo "data seed $SEED"
randfile $SEED $((4 << 20)) "$work/data"

# fio_bg (lib/grow.sh) writes and verifies 8 MiB past the data while a grow runs
FIO_OFFSET=8M FIO_SIZE=8M FIO_LOOPS=3
# wait until the array has no background job and no missing slot
settled_whole() { settled "$1" 300 "Degraded : 0 of"; }
# restriped MEMBER LAYOUT NAME: the superblock has LAYOUT and no job runs
restriped() {
    for _ in $(seq 300); do
        [ "$(examine "$1" Layout)" = "$2" ] && "$URAID" status "$3" | grep -q "Background : none" &&
            return 0
        sleep 0.2
    done
    "$URAID" status "$3"
    return 1
}

# ---- RAID 4 <-> 5 -> 6 -> 5 -> 0 ----
mem=("$work/a0" "$work/a1" "$work/a2" "$work/a3")
truncate -s 40M "${mem[@]}" "$work/as"
"$URAID" create --level=4 --raid-devices=4 --chunk=64 --name=ga --run "${mem[@]}" >/dev/null
serve_bg "$work" ga "${mem[@]}"
nbdcopy "$work/data" "$(uri ga)"

fio_bg ga
out=$("$URAID" grow ga --level=5); rc=$?
check "RAID 4 -> 5 (rc $rc): $out" test $rc -eq 0
check "  says the takeover" grep -q "takeover RAID 4 -> RAID 5" <<<"$out"
wait $fpid; frc=$?
check "  fio's writes through the takeover verify (rc $frc)" test $frc -eq 0
check "  data" data_ok ga
check "  examine: raid5" test "$(examine "${mem[0]}" "Raid Level")" = raid5
check "  examine: parity-last" test "$(examine "${mem[0]}" Layout)" = parity-last
check "  0 mismatches" check_zero ga

refused ga "RAID 5 -> 10" --level=10
refused ga "RAID 5 4 -> 5 members without a spare" --raid-devices=5
refused ga "--size above the members" --size=100M
refused ga "--size with another change" --size=max --level=6
refused ga "RAID 5 -> 6 without a spare" --level=6
out=$("$URAID" grow ga --chunk=3 2>&1); rc=$?
check "a chunk that is not a power of two is a usage error (rc $rc)" test $rc -eq 2

out=$("$URAID" grow ga --level=4); rc=$?
check "RAID 5 parity-last -> 4 (rc $rc): $out" test $rc -eq 0
check "  examine: raid4" test "$(examine "${mem[0]}" "Raid Level")" = raid4
"$URAID" grow ga --level=5 >/dev/null

ev0=$(examine "${mem[0]}" Events)
fio_bg ga
out=$("$URAID" grow ga --level=6 --add "$work/as"); rc=$?
check "RAID 5 -> 6 with --add (rc $rc): $out" test $rc -eq 0
check "  the spare added first" grep -q "added to 'ga' as a spare" <<<"$out"
wait $fpid; frc=$?
check "  fio verifies (rc $frc)" test $frc -eq 0
check "  Q rebuilt onto the spare" settled_whole ga
check "  data" data_ok ga
check "  examine: raid6, 5 devices" \
    test "$(examine "${mem[0]}" "Raid Level")/$(examine "${mem[0]}" "Raid Devices")" = raid6/5
check "  events went forward" test "$(examine "${mem[0]}" Events)" -gt "$ev0"
check "  0 mismatches" check_zero ga

out=$("$URAID" grow ga --level=5); rc=$?
check "RAID 6 (parity-last) -> 5 (rc $rc): $out" test $rc -eq 0
check "  the Q member is a spare" test "$(examine "$work/as" "Device Role")" = spare
check "  examine: raid5, 4 devices" \
    test "$(examine "${mem[0]}" "Raid Level")/$(examine "${mem[0]}" "Raid Devices")" = raid5/4
check "  data" data_ok ga

refused ga "RAID 5 -> 0 with the parity member in" --level=0
# the spare out first: it would rebuild the parity slot
"$URAID" remove ga "$work/as" >/dev/null
"$URAID" fail ga "${mem[3]}" >/dev/null && "$URAID" remove ga "${mem[3]}" >/dev/null
out=$("$URAID" grow ga --level=0); rc=$?
check "RAID 5 parity-last, parity out -> 0 (rc $rc): $out" test $rc -eq 0
check "  examine: raid0, 3 devices" \
    test "$(examine "${mem[0]}" "Raid Level")/$(examine "${mem[0]}" "Raid Devices")" = raid0/3
check "  data" data_ok ga
size0=$("$URAID" status --json ga | python3 -c 'import json,sys; print(json.load(sys.stdin)["array_bytes"])')

# ---- RAID 0 -> 5: the parity slot rebuilt from a spare ----
mem=("$work/a0" "$work/a1" "$work/a2")
"$URAID" add --force ga "$work/as" >/dev/null
out=$("$URAID" grow ga --level=5); rc=$?
check "RAID 0 -> 5 (rc $rc): $out" test $rc -eq 0
check "  parity rebuilt onto the spare" settled_whole ga
check "  data" data_ok ga
check "  0 mismatches" check_zero ga
check "  says the restripe to left-symmetric follows" grep -q "then, when the new slot is rebuilt: restripe RAID 5: layout parity-last -> left-symmetric" <<<"$out"
check "  then restriped to left-symmetric, as mdadm's" restriped "${mem[0]}" left-symmetric ga
check "  examine: raid5, 4 devices" \
    test "$(examine "${mem[0]}" "Raid Level")/$(examine "${mem[0]}" "Raid Devices")" = raid5/4
check "  data" data_ok ga
check "  0 mismatches" check_zero ga

# ---- --array-size ----
out=$("$URAID" grow ga --array-size=32M); rc=$?
check "--array-size=32M (rc $rc): $out" test $rc -eq 0
check "  status shows 32 MiB" grep -q "Array Size : 32 MiB" <<<"$("$URAID" status ga)"
check "  NBD exports 32 MiB" test "$(nbdinfo --size "$(uri ga)" 2>/dev/null || echo none)" = $((32 << 20))
check "  data" data_ok ga
"$URAID" grow ga --array-size=max >/dev/null
check "--array-size=max: the full size again" \
    test "$("$URAID" status --json ga | python3 -c 'import json,sys; print(json.load(sys.stdin)["array_bytes"])')" = "$size0"
stop_served ga

# ---- restripes through grow-core's reshape: RAID 5 3 -> 4, then 5 -> 6 md's way ----
mem=("$work/c0" "$work/c1" "$work/c2")
truncate -s 40M "${mem[@]}" "$work/c3" "$work/c4"
"$URAID" create --level=5 --raid-devices=3 --chunk=64 --name=gc --run "${mem[@]}" >/dev/null
serve_bg "$work" gc "${mem[@]}"
nbdcopy "$work/data" "$(uri gc)"
fio_bg gc
out=$("$URAID" grow gc --raid-devices=4 --add "$work/c3"); rc=$?
check "RAID 5 3 -> 4 with --add (rc $rc): $out" test $rc -eq 0
check "  says the restripe started" grep -q "restripe RAID 5: 3 -> 4 members: started" <<<"$out"
wait $fpid; frc=$?
check "  fio verifies through the restripe (rc $frc)" test $frc -eq 0
mem+=("$work/c3")
check "  restripe done" settled_whole gc
check "  examine: 4 devices" test "$(examine "${mem[0]}" "Raid Devices")" = 4
check "  NBD exports the new size" test "$(nbdinfo --size "$(uri gc)")" -gt $((100 << 20))
check "  data" data_ok gc
check "  0 mismatches" check_zero gc
fio_bg gc
"$URAID" tune gc --speed-min=1000 --speed-max=3000 >/dev/null
out=$("$URAID" grow gc --level=6 --add "$work/c4"); rc=$?
check "RAID 5 -> 6 (rc $rc): $out" test $rc -eq 0
st=$("$URAID" status gc)
check "  status while it runs: degraded 1 of 5, as md (the Q member not in sync yet)" \
    eval 'grep -q "Degraded : 1 of 5 slots" <<<"$st" && grep -q "Background : reshape" <<<"$st"'
check "  the Q member shown rebuilding in slot 4 (md: spare rebuilding)" \
    grep -qE "^ +4 +rebuilding .*/c4$" <<<"$st"
check "  --json says degraded 1" test "$("$URAID" status --json gc |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["degraded"])')" = 1
"$URAID" tune gc --speed-max=200000 >/dev/null
check "  takeover with the -6 layout first" grep -q "takeover RAID 5 -> RAID 6 (4 -> 5 slots, layout left-symmetric-6)" <<<"$out"
check "  and the restripe at once, the spare in the Q slot (md's way: no rebuild first)" \
    grep -q "restripe RAID 6: layout left-symmetric-6 -> left-symmetric: started" <<<"$out"
check "  nothing left waiting" test -z "$(grep 'then, when' <<<"$out")"
mem+=("$work/c4")
check "  then restriped to left-symmetric" restriped "${mem[0]}" left-symmetric gc
wait $fpid; frc=$?
check "  fio verifies through the takeover and the restripe (rc $frc)" test $frc -eq 0
check "  the Q member in slot 4, in sync" test "$(examine "$work/c4" "Device Role")" = "Active device 4"
check "  no recovery offset left on it" test -z "$(examine "$work/c4" "Recovery Offset")"
check "  degraded 0 once it ended" grep -q "Degraded : 0 of 5 slots" <<<"$("$URAID" status gc)"
check "  examine: raid6, 5 devices" \
    test "$(examine "${mem[0]}" "Raid Level")/$(examine "${mem[0]}" "Raid Devices")" = raid6/5
check "  data" data_ok gc
check "  0 mismatches" check_zero gc
stop_served gc

# ---- RAID 5 of 3 -> RAID 6 of 5 in one restripe, kill -9 half-way ----
mem=("$work/h0" "$work/h1" "$work/h2")
truncate -s 40M "${mem[@]}" "$work/h3" "$work/h4"
"$URAID" create --level=5 --raid-devices=3 --chunk=64 --bitmap=none --assume-clean --name=gh \
    --run "${mem[@]}" >/dev/null
serve_bg "$work" gh "${mem[@]}"
old_bytes=$(nbdinfo --size "$(uri gh)")
hjob() {   # the same fio job each time over the whole old size: same blocks, same data
    (cd "$work" && fio --name=h --ioengine=nbd --uri="$(uri gh)" --rw=randwrite \
        --bssplit=4k/50:64k/50 --iodepth=8 --verify=crc32c --verify_fatal=1 \
        --randseed="$SEED" --size="$old_bytes" "$@" >"$work/fio-gh.out" 2>&1)
}
hjob --do_verify=0 --end_fsync=1
check "fio wrote RAID 5 of 3 ($old_bytes bytes, seed $SEED)" grep -q "err= 0" "$work/fio-gh.out"
"$URAID" tune gh --speed-min=1000 --speed-max=3000 >/dev/null
out=$("$URAID" grow gh --level=6 --raid-devices=5 --add "$work/h3" "$work/h4" 2>&1); rc=$?
check "RAID 5 of 3 -> RAID 6 of 5 with --add two (rc $rc): $out" test $rc -eq 0
check "  the takeover, then one restripe: layout and 4 -> 5 members" \
    eval 'grep -q "takeover RAID 5 -> RAID 6 (3 -> 4 slots, layout left-symmetric-6)" <<<"$out" &&
          grep -q "restripe RAID 6: .*4 -> 5 members.*started" <<<"$out"'
mem+=("$work/h3" "$work/h4")
ex=$(mdadm --examine "${mem[0]}" 2>&1)
check "  examine: raid6, 18 -> 2 (left-symmetric-6 -> left-symmetric), delta 1, forwards (0x44)" \
    eval 'grep -q "Raid Level : raid6" <<<"$ex" && grep -q "Delta Devices : 1" <<<"$ex" &&
          grep -q "Feature Map : 0x44" <<<"$ex" && grep -q "New Layout : left-symmetric$" <<<"$ex"'
mdadm --examine "${mem[0]}" | grep -E "Feature Map|Raid Devices|Layout|Offset|Reshape|Delta" |
    sed 's/^/  /'
check "  the Q slot's member: role 3, not in sync (0x2)" \
    eval '[ "$(examine "$work/h3" "Device Role")" = "Active device 3" ] &&
          [ "$(examine "$work/h3" "Feature Map")" = 0x46 ]'
check "  the new member: role 4, in sync" \
    eval '[ "$(examine "$work/h4" "Device Role")" = "Active device 4" ] &&
          [ "$(examine "$work/h4" "Feature Map")" = 0x44 ]'
check "  status: degraded 1 of 5 while it runs" \
    grep -q "Degraded : 1 of 5 slots" <<<"$("$URAID" status gh)"
hjob --verify_only
check "  every block verifies through NBD during the restripe" grep -q "err= 0" "$work/fio-gh.out"
check "  the restripe was still running then" \
    bash -c "'$URAID' status gh | grep -q 'Background : reshape'"
kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
pos=$(examine "${mem[0]}" "Reshape pos'n")
echo "  killed at $pos"
check "killed in mid-restripe (a checkpoint on disk)" test -n "$pos"
serve_bg "$work" gh "${mem[@]}"
check "  served again: degraded 1 (the Q slot still being filled)" \
    grep -q "Degraded : 1 of 5 slots" <<<"$("$URAID" status gh)"
hjob --verify_only
check "  every block verifies after the restart" grep -q "err= 0" "$work/fio-gh.out"
"$URAID" tune gh --speed-max=200000 >/dev/null
check "  it goes on from the checkpoint and ends whole" settled_whole gh
check "  examine: raid6, left-symmetric, 5 devices, no reshape" \
    eval '[ "$(examine "${mem[0]}" "Raid Level")/$(examine "${mem[0]}" Layout)/$(examine "${mem[0]}" "Raid Devices")" = raid6/left-symmetric/5 ] &&
          ! mdadm --examine "${mem[0]}" | grep -q Reshape'
check "  the Q member in sync, no recovery offset" \
    eval '[ "$(examine "$work/h3" "Feature Map")" = 0x0 ] && [ -z "$(examine "$work/h3" "Recovery Offset")" ]'
hjob --verify_only
check "  every block verifies after it" grep -q "err= 0" "$work/fio-gh.out"
check "  0 mismatches" check_zero gh
check "  NBD exports 3/2 of the size" test "$(nbdinfo --size "$(uri gh)")" -eq $((old_bytes * 3 / 2))
stop_served gh

# ---- RAID 0 2 -> 3 members: through RAID 4 and back, as mdadm ----
mem=("$work/e0" "$work/e1")
truncate -s 40M "${mem[@]}"
truncate -s 48M "$work/e2"      # larger: RAID 0 at the end must not use the extra
"$URAID" create --level=0 --raid-devices=2 --chunk=64 --name=ge --run "${mem[@]}" >/dev/null
serve_bg "$work" ge "${mem[@]}"
nbdcopy "$work/data" "$(uri ge)"
out=$("$URAID" grow ge --raid-devices=3 --add "$work/e2"); rc=$?
check "RAID 0 2 -> 3 (rc $rc): $out" test $rc -eq 0
check "  takeover, restripe, and the takeover back waiting" \
    grep -q "then, when the restripe ends: takeover RAID 4 -> RAID 0" <<<"$out"
back_to_0() {
    for _ in $(seq 300); do
        [ "$(examine "$1" "Raid Level")" = raid0 ] && return 0
        sleep 0.2
    done
    "$URAID" status ge
    return 1
}
check "  RAID 0 again at the end" back_to_0 "${mem[0]}"
check "  examine: 3 devices, data offset moved as mdadm's (1664)" \
    test "$(examine "${mem[0]}" "Raid Devices")/$(examine "${mem[0]}" "Data Offset")" = "3/1664 sectors"
check "  NBD exports 3 members' worth" test "$(nbdinfo --size "$(uri ge)")" -gt $((100 << 20))
check "  the larger member's data size is the others' (md's dev_sectors; one zone)" \
    test "$(examine "$work/e2" "Avail Dev Size")" = "$(examine "${mem[0]}" "Avail Dev Size")"
check "  data" data_ok ge
stop_served ge

# ---- RAID 0 -> 5 on an array served as RAID 0 (no rebuild hook at open) ----
mem=("$work/f0" "$work/f1")
truncate -s 40M "${mem[@]}" "$work/f2"
"$URAID" create --level=0 --raid-devices=2 --chunk=64 --name=gf --run "${mem[@]}" >/dev/null
serve_bg "$work" gf "${mem[@]}"
nbdcopy "$work/data" "$(uri gf)"
out=$("$URAID" grow gf --level=5 --add "$work/f2"); rc=$?
check "RAID 0 served as such -> 5 with --add (rc $rc): $out" test $rc -eq 0
mem+=("$work/f2")
check "  the parity slot rebuilt onto the spare, then restriped" \
    restriped "${mem[0]}" left-symmetric gf
check "  whole" settled_whole gf
check "  examine: raid5, 3 devices, f2 active" \
    test "$(examine "${mem[0]}" "Raid Level")/$(examine "${mem[0]}" "Raid Devices")/$(examine "$work/f2" "Device Role")" = "raid5/3/Active device 2"
check "  data" data_ok gf
check "  0 mismatches" check_zero gf
stop_served gf

# ---- RAID 0 (2) -> 5 without a spare: mdadm's degraded restripe at once ----
mem=("$work/g0" "$work/g1")
truncate -s 40M "${mem[@]}" "$work/g2"
"$URAID" create --level=0 --raid-devices=2 --chunk=64 --name=gg --run "${mem[@]}" >/dev/null
serve_bg "$work" gg "${mem[@]}"
nbdcopy "$work/data" "$(uri gg)"
fio_bg gg
out=$("$URAID" grow gg --level=5 2>&1); rc=$?
check "RAID 0 (2) -> 5 without a spare (rc $rc): $out" test $rc -eq 0
check "  the restripe started at once" grep -q "layout parity-last -> left-symmetric: started" <<<"$out"
check "  restriped to left-symmetric, degraded" restriped "${mem[0]}" left-symmetric gg
wait $fpid; frc=$?
check "  fio verifies through takeover and restripe (rc $frc)" test $frc -eq 0
check "  examine: raid5, 3 devices" \
    test "$(examine "${mem[0]}" "Raid Level")/$(examine "${mem[0]}" "Raid Devices")" = raid5/3
check "  data" data_ok gg
"$URAID" add gg "$work/g2" >/dev/null
check "  a spare added later rebuilds the parity slot" settled_whole gg
check "  0 mismatches" check_zero gg
stop_served gg

# ---- RAID 10 near=2 -> 0: mdadm fails and removes the second of each pair ----
mem=("$work/d0" "$work/d1" "$work/d2" "$work/d3")
truncate -s 40M "${mem[@]}"
"$URAID" create --level=10 --raid-devices=4 --chunk=64 --name=gd --run "${mem[@]}" >/dev/null
serve_bg "$work" gd "${mem[@]}"
nbdcopy "$work/data" "$(uri gd)"
out=$("$URAID" grow gd --level=0); rc=$?
check "RAID 10 -> 0 (rc $rc): $out" test $rc -eq 0
check "  the second of each pair out first" grep -q "second member of each pair failed and removed" <<<"$out"
check "  examine: raid0, 2 devices, d2 is slot 1" \
    test "$(examine "${mem[0]}" "Raid Level")/$(examine "${mem[0]}" "Raid Devices")/$(examine "${mem[2]}" "Device Role")" = "raid0/2/Active device 1"
check "  data" data_ok gd
stop_served gd
check "  serves again from d0 and d2 alone" serve_bg "$work" gd "${mem[0]}" "${mem[2]}"
check "  data" data_ok gd
stop_served gd

# ---- RAID 1: 2 -> 3 mirrors, -> 5 and back, --size=max ----
mem=("$work/b0" "$work/b1")
truncate -s 40M "${mem[@]}" "$work/b2"
"$URAID" create --level=1 --raid-devices=2 --name=gb --run "${mem[@]}" >/dev/null
serve_bg "$work" gb "${mem[@]}"
nbdcopy "$work/data" "$(uri gb)"
out=$("$URAID" grow gb --raid-devices=3 --add "$work/b2"); rc=$?
check "RAID 1 2 -> 3 with --add (rc $rc): $out" test $rc -eq 0
check "  the new mirror rebuilt" settled_whole gb
check "  examine: 3 devices" test "$(examine "${mem[0]}" "Raid Devices")" = 3
check "  0 mismatches" check_zero gb
refused gb "RAID 1 -> 5 with 3 members" --level=5
refused gb "RAID 1 3 -> 2 with slot 2 in use" --raid-devices=2
"$URAID" fail gb "$work/b2" >/dev/null && "$URAID" remove gb "$work/b2" >/dev/null
out=$("$URAID" grow gb --raid-devices=2); rc=$?
check "RAID 1 3 -> 2 once slot 2 is empty (rc $rc): $out" test $rc -eq 0
out=$("$URAID" grow gb --level=5); rc=$?
check "RAID 1 -> 5 (rc $rc): $out" test $rc -eq 0
check "  examine: raid5, 2 devices" \
    test "$(examine "${mem[0]}" "Raid Level")/$(examine "${mem[0]}" "Raid Devices")" = raid5/2
check "  data" data_ok gb
check "  0 mismatches" check_zero gb
out=$("$URAID" grow gb --level=1); rc=$?
check "RAID 5 -> 1 (rc $rc): $out" test $rc -eq 0
check "  examine: raid1" test "$(examine "${mem[0]}" "Raid Level")" = raid1

# the images grow (used by --size=max below; with a bitmap: test-grow-size-bitmap.sh)
before=$(examine "${mem[0]}" "Array Size" | cut -d' ' -f1)
truncate -s 60M "${mem[@]}"

# --bitmap internal -> none -> internal, with writes between
out=$("$URAID" grow gb --bitmap=internal); rc=$?
check "--bitmap=internal (rc $rc): $out" test $rc -eq 0
check "  examine: feature 0x1, bitmap at +8" \
    test "$(examine "${mem[0]}" "Feature Map")/$(examine "${mem[0]}" "Internal Bitmap")" = "0x1/8 sectors from superblock"
check "  the header on the member" test "$(dd if="${mem[0]}" bs=512 skip=16 count=1 2>/dev/null | head -c 4)" = bitm
check "  status shows it" grep -q "Bitmap : internal" <<<"$("$URAID" status gb)"
# before any write: no bit is set that the bitmap daemon would clear meanwhile
refused gb "--bitmap=internal twice" --bitmap=internal
nbdcopy "$work/data" "$(uri gb)"
out=$("$URAID" grow gb --bitmap=none); rc=$?
check "--bitmap=none (rc $rc): $out" test $rc -eq 0
check "  examine: feature 0x0" test "$(examine "${mem[0]}" "Feature Map")" = 0x0
nbdcopy "$work/data" "$(uri gb)"
out=$("$URAID" grow gb --bitmap=internal); rc=$?
check "--bitmap=internal again (rc $rc): $out" test $rc -eq 0
check "  data" data_ok gb
check "  0 mismatches" check_zero gb
"$URAID" grow gb --bitmap=none >/dev/null

# --size=max after the images grew
out=$("$URAID" grow gb --size=max); rc=$?
check "--size=max after the images grew (rc $rc): $out" test $rc -eq 0
check "  the new part resynced" settled_whole gb
after=$(examine "${mem[0]}" "Array Size" | cut -d' ' -f1)
check "  examine: Array Size grew ($before -> $after KiB)" test "$after" -gt "$before"
check "  NBD exports the new size" \
    test "$(nbdinfo --size "$(uri gb)")" -gt $((50 << 20))
check "  data" data_ok gb
check "  0 mismatches" check_zero gb
stop_served gb
check "the array serves again after the grows" serve_bg "$work" gb "${mem[@]}"
check "  data" data_ok gb
stop_served gb

echo "$fails failures"
[ "$fails" -eq 0 ]
