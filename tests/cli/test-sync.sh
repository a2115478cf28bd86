#!/bin/bash
# Background work on served RAID 4/5/6 arrays: check counts the parity pages
# that do not match (md's mismatch_cnt, in sectors, known exactly here);
# repair fixes them and a second check finds 0; a dirty array resyncs by itself
# at start, a resync stopped half-way continues from resync_offset after a
# restart (the superblock shows the offset), the result is checked with 0
# mismatches while fio verifies through NBD; throttling limits hold; refusals;
# a failed member is rebuilt onto the spare by itself, the rebuild survives a
# restart (recovery_offset) and, on RAID 6, a second failure.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need nbdinfo nbdcopy qemu-img fio python3
work_dir sync
SEED=${SEED:-20261129}
echo "seed $SEED, work in $work"
# members NAME N SIZE-MiB: random contents from the seed (so parity is wrong)
members() {
    m=()
    for i in $(seq 0 $(($2 - 1))); do
        randfile "$((SEED + i))" $(($3 << 20)) "$work/$1.$i"
        m+=("$work/$1.$i")
    done
}
serve() { serve_bg "$work" "$@"; }   # serve NAME ARGS...
stop() { stop_served "$1"; }

# ---- check, repair, check on RAID 5 and RAID 6 assembled with wrong parity ----
for level in 5 6; do
    name=ck$level
    members "$name" 4 24
    "$URAID" create --level=$level --raid-devices=4 --chunk=64 --assume-clean --name=$name \
        "${m[@]}" >/dev/null
    # RAID 6 on 3 reactors: three rows at a time, one per lane, ending in
    # any order (the count must still be exact)
    threads=(); [ $level = 6 ] && threads=(--threads=3)
    serve $name "${threads[@]}" "${m[@]}"
    dev=$(( ($("$URAID" status --json $name | python3 -c 'import json,sys; print(json.load(sys.stdin)["array_bytes"])') / (4 - (level - 4)) ) / 512 ))
    out=$("$URAID" check --wait $name); rc=$?
    echo "$out"
    # random data: every 4 KiB page of every row mismatches, so the count is
    # the member's data size in sectors (as md counts)
    check "raid$level: check finds every page ($dev sectors) wrong and exits 1" \
        bash -c "[ $rc -eq 1 ] && grep -q 'mismatch_cnt $dev\$' <<<\"\$0\"" "$out"
    check "raid$level: repair completes" bash -c "'$URAID' repair --wait $name >/dev/null"
    out=$("$URAID" check --wait $name); rc=$?
    check "raid$level: a second check finds 0 mismatches ($out)" \
        bash -c "[ $rc -eq 0 ] && grep -q 'mismatch_cnt 0\$' <<<\"\$0\"" "$out"
    js=$("$URAID" status --json $name)
    check "raid$level: status --json reports the last check" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); lb = d["last_background"]
assert lb["kind"] == "check" and lb["result"] == "completed" and lb["mismatch_sectors"] == 0, lb
assert lb["done_bytes"] == lb["total_bytes"] > 0, lb' "$js"
    check "raid$level: stopped with status 0" stop $name
done

# ---- RAID 6: P wrong in one page of a row and Q in another: 2 pages (md
# counts a page once when P or Q or both differ there) ----
off=$("$URAID" examine "${m[0]}" | sed -n 's/ *Data Offset : \([0-9]*\) sectors/\1/p')
pq=$(python3 - "$((off * 512))" "${m[@]}" <<'PY'
import sys, itertools
off, paths = int(sys.argv[1]), sys.argv[2:]
ch = [open(p, "rb").read()[off:off + 65536] for p in paths]
# row 0: P is the chunk that is the XOR of two others; the last one is Q
for i, j, k in itertools.permutations(range(4), 3):
    if i < j and bytes(a ^ b for a, b in zip(ch[i], ch[j])) == ch[k]:
        print(k, ({0, 1, 2, 3} - {i, j, k}).pop())
        break
PY
)
read -r pslot qslot <<<"$pq"
check "raid6: P and Q of row 0 found (members $pslot and $qslot)" test -n "$qslot"
if [ -n "$qslot" ]; then
    printf 'P%.0s' $(seq 4096) | dd of="${m[$pslot]}" bs=4096 seek=$((off / 8 + 1)) conv=notrunc status=none
    printf 'Q%.0s' $(seq 4096) | dd of="${m[$qslot]}" bs=4096 seek=$((off / 8 + 2)) conv=notrunc status=none
    serve ck6 "${m[@]}"
    out=$("$URAID" check --wait ck6); rc=$?
    check "raid6: P wrong in page 1 and Q in page 2 of a row count 16 sectors ($out)" \
        bash -c "[ $rc -eq 1 ] && grep -q 'mismatch_cnt 16\$' <<<\"\$0\"" "$out"
    stop ck6
fi

# ---- check and repair of a range: only the rows that hold it ----
# RAID 5 x4, chunk 64 KiB: a row is 192 KiB of the array, 64 KiB per member.
# A page of member 0 is spoilt in row 2 and in row 100; a range check of
# the first MiB counts the first (8 sectors), a range repair mends it, a
# check of everything then counts only the other.
m=()
for i in 0 1 2 3; do truncate -s 32M "$work/rg.$i"; m+=("$work/rg.$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --bitmap=none --name=rg \
    "${m[@]}" >/dev/null
off=$("$URAID" examine "${m[0]}" | sed -n 's/ *Data Offset : \([0-9]*\) sectors/\1/p')
for row in 2 100; do
    printf 'X%.0s' $(seq 4096) |
        dd of="${m[0]}" bs=4096 seek=$(( (off * 512 + row * 65536) / 4096 )) conv=notrunc status=none
done
serve rg "${m[@]}"
out=$("$URAID" check --wait --range=0-1M rg); rc=$?
check "check --range=0-1M counts row 2 only ($out)" \
    bash -c "[ $rc -eq 1 ] && grep -q 'mismatch_cnt 8\$' <<<\"\$0\"" "$out"
out=$("$URAID" check --wait --range=18M- rg); rc=$?
check "check --range=18M- (rows 96 on) counts row 100 only, starting past 0 ($out)" \
    bash -c "[ $rc -eq 1 ] && grep -q 'mismatch_cnt 8\$' <<<\"\$0\" &&
             grep -q 'check started at [1-9]' '$work/rg.err'" "$out"
out=$("$URAID" repair --wait --range=256K-512K rg); rc=$?
check "repair --range=256K-512K mends row 2 ($out)" test $rc -eq 0
out=$("$URAID" check --wait rg); rc=$?
check "then a check of everything counts row 100 only ($out)" \
    bash -c "[ $rc -eq 1 ] && grep -q 'mismatch_cnt 8\$' <<<\"\$0\"" "$out"
out=$("$URAID" check --range=1T- rg 2>&1); rc=$?
check "a range past the end is refused: exit 1 ($out)" \
    bash -c "[ $rc -eq 1 ] && grep -q 'past the array' <<<\"\$0\"" "$out"
out=$("$URAID" check --range=2M-1M rg 2>&1); rc=$?
check "a range that ends before it starts is a usage error ($out)" test $rc -eq 2
# check --wait follows its own job: with a resync needed and held (stopped
# by hand), the resync resumes as soon as the check ends, and --wait reports
# the check (its range), not the resync that follows
writes_bg "$work" rg --bs=64k --iodepth=8
# the writes marked the array active (dirty) on disk: the kill leaves a resync
status_until rg 60 'not d["clean"]'
kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null
serve rg --speed-max=2000 "${m[@]}"
for _ in $(seq 300); do grep -q "resync started" "$work/rg.err" && break; sleep 0.1; done
"$URAID" check --cancel rg >/dev/null
status_until rg 30 'not d["background"]'
out=$("$URAID" check --wait --range=0-1M rg); rc=$?
check "check --wait reports its own job, not the resync resumed after it ($out)" \
    bash -c "[ $rc -eq 0 ] && grep -q '^check completed: 0 of 0 MiB' <<<\"\$0\"" "$out"
stop rg

# ---- refusals ----
members deg 3 8
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --name=deg "${m[@]}" missing >/dev/null
serve deg "${m[@]}"
out=$("$URAID" check deg 2>&1); rc=$?
check "check of a degraded RAID 5 is refused: exit 1, not a usage error ($out)" \
    bash -c "[ $rc -eq 1 ] && grep -q degraded <<<\"\$0\"" "$out"
out=$("$URAID" check --cancel deg 2>&1); rc=$?
check "cancel with nothing running is refused ($out)" test $rc -ne 0
out=$("$URAID" speed --min=5000 --max=100 deg 2>&1); rc=$?
check "speed with min above max is refused ($out)" test $rc -ne 0
out=$("$URAID" speed --min=300000 deg 2>&1); rc=$?
check "speed with a min above the max in effect (200000) is refused with it ($out)" \
    bash -c "[ $rc -eq 1 ] && grep -q 200000 <<<\"\$0\"" "$out"
"$URAID" speed --max=5000 deg >/dev/null
out=$("$URAID" speed --max=500 deg 2>&1); rc=$?
check "speed with a max below the min in effect (1000) is refused ($out)" \
    bash -c "[ $rc -eq 1 ] && grep -q 1000 <<<\"\$0\"" "$out"
check "and the limits are as they were" \
    bash -c "'$URAID' status deg | grep -q '1000..5000 KiB/s'"
stop deg
out=$(timeout 20 "$URAID" serve --socket="$work/x.sock" --speed-min=50000 --speed-max=1000 "${m[@]}" 2>&1); rc=$?
check "serve with --speed-min above --speed-max is a usage error ($out)" test $rc -eq 2
out=$(timeout 20 "$URAID" serve --socket="$work/x.sock" --speed-min=300000 "${m[@]}" 2>&1); rc=$?
check "serve with --speed-min above the default maximum is refused ($out)" \
    bash -c "[ $rc -eq 2 ] && grep -q 200000 <<<\"\$0\"" "$out"
members mir 2 8
"$URAID" create --level=1 --raid-devices=2 --assume-clean --name=mir "${m[@]}" >/dev/null
serve mir "${m[@]}"
truncate -s 4M "$work/mir.new"
out=$("$URAID" replace "${m[0]}" "$work/mir.new" 2>&1); rc=$?
check "replace on RAID 1 with a device too small is refused ($out)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'too small' <<<\"\$0\"" "$out"
check "and the array is as it was: 2 in sync, no replacement" \
    bash -c "'$URAID' status --json mir | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"degraded\"] == 0 and [m[\"state\"] for m in d[\"members\"]] == [\"in-sync\", \"in-sync\"], d'"
stop mir

# ---- resync of a dirty array: by itself at start, throttled, stopped, continued ----
members rs 4 32
"$URAID" create --level=6 --raid-devices=4 --chunk=64 --name=rs "${m[@]}" >/dev/null
check "created dirty (resync needed)" bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : active'"
serve rs --speed-max=8000 "${m[@]}"
# under way and its rate measured (a fixed 1.5 s found neither on a loaded machine)
status_until rs 30 'd["background"] and d["background"][0]["rate_bytes_per_s"] and d["background"][0]["done_bytes"]'
js=$("$URAID" status --json rs)
check "a resync runs by itself, at most 8000 KiB/s" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); b = d["background"]
assert len(b) == 1 and b[0]["kind"] == "resync", d
assert b[0]["rate_bytes_per_s"] <= 8000 * 1024 * 1.25, b
assert 0 < b[0]["done_bytes"] < b[0]["total_bytes"], b' "$js"
check "status shows a progress bar" bash -c "'$URAID' status rs | grep -q 'resync \['"
# no clients, so the array is not active on disk: the resync's checkpoints
# reach the superblocks while it runs, and a kill -9 keeps its progress
"$URAID" speed --max=2000 rs >/dev/null
roff=
for _ in $(seq 150); do
    roff=$("$URAID" examine "${m[0]}" | sed -n 's/ *Resync Offset : \([0-9]*\) sectors/\1/p')
    [ -n "$roff" ] && [ "$roff" -gt 0 ] && break
    sleep 0.1
done
check "while it runs, the superblock's resync_offset moves ($roff sectors)" \
    bash -c "[ -n '$roff' ] && [ '$roff' -gt 0 ]"
kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=
# the dead server's listening socket can outlive it for a moment (its
# io_uring is torn down after the exit) and look in use: a fresh one
rm -f "$work/rs.sock"
starts=$(grep -c "resync started at" "$work/rs.err")
serve rs --speed-max=2000 "${m[@]}"
for _ in $(seq 50); do [ "$(grep -c "resync started at" "$work/rs.err")" -gt "$starts" ] && break; sleep 0.1; done
check "after kill -9 the resync goes on from the superblock's offset" \
    bash -c "grep 'resync started at' '$work/rs.err' | tail -1 | grep -q 'started at [1-9]'"
check "stopped half-way with status 0" stop rs
off=$("$URAID" examine --json "${m[0]}" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["resync_offset_sectors"])' 2>/dev/null ||
      "$URAID" examine "${m[0]}" | sed -n 's/ *Resync Offset : \([0-9]*\) sectors/\1/p')
check "the superblock keeps how far the resync got ($off sectors)" \
    bash -c "[ -n '$off' ] && [ '$off' -gt 0 ] && [ '$off' -lt 65536 ]"
starts=$(grep -c "resync started at" "$work/rs.err")
serve rs "${m[@]}"
# (the log holds the start after the kill -9 too: this restart's line is judged)
check "after a restart the resync goes on from there" \
    eval 'log_more rs "resync started at" $starts &&
          grep "resync started at" "$work/rs.err" | tail -1 | grep -q "started at [1-9]"' 
size=$(nbdinfo --size "nbd+unix:///?socket=$work/rs.sock")
(cd "$work" && fio --ioengine=nbd --uri="nbd+unix:///?socket=$work/rs.sock" --rw=randrw \
    --bssplit=4k/50:64k/50 --iodepth=16 --verify=crc32c --verify_fatal=1 --verify_state_save=0 \
    --randseed="$SEED" --size=$((size / 1048576))M --name=during --output="$work/fio.out" \
    >/dev/null 2>&1)
check "fio verify through NBD while the resync runs" grep -q "err= 0" "$work/fio.out"
for _ in $(seq 300); do grep -q "resync done" "$work/rs.err" && break; sleep 0.1; done
check "the resync completes" grep -q "resync done" "$work/rs.err"
out=$("$URAID" check --wait rs); rc=$?
check "then a check finds 0 mismatches ($out)" test $rc -eq 0
check "stopped with status 0" stop rs
check "and the array is clean" bash -c "'$URAID' examine '${m[0]}' | grep -q 'State : clean'"

# ---- recovery onto a spare: by itself when a member fails, under fio, resumed ----
for level in 5 6; do
    name=rb$level
    m=()
    for i in 0 1 2 3 4 5; do truncate -s 32M "$work/$name.$i"; m+=("$work/$name.$i"); done
    "$URAID" create --level=$level --raid-devices=5 --spare-devices=1 --chunk=64 --name=$name \
        "${m[@]}" >/dev/null
    serve $name --speed-max=3000 "${m[@]}"
    uri="nbd+unix:///?socket=$work/$name.sock"
    size=$(nbdinfo --size "$uri")
    randfile "$SEED" "$size" "$work/data"
    nbdcopy "$work/data" "$uri"
    "$URAID" fail "${m[1]}" >/dev/null
    status_until $name 30 'd["background"] and d["background"][0]["kind"] == "recovery"'
    check "raid$level: a failed member starts a rebuild onto the spare" \
        bash -c "'$URAID' status $name | grep -q 'recovery \['"
    check "raid$level: status shows the spare rebuilding slot 1" \
        bash -c "'$URAID' status $name | grep -qE '^ +1  rebuilding .*$name.5'"
    check "raid$level: data reads back intact during the rebuild" \
        qemu-img compare -q -f raw -F raw "$work/data" "$uri"
    check "raid$level: stopped during the rebuild" stop $name
    off=$("$URAID" examine "${m[5]}" | sed -n 's/ *Recovery Offset : \([0-9]*\) sectors/\1/p')
    check "raid$level: the spare's superblock keeps recovery_offset ($off sectors)" \
        bash -c "[ -n '$off' ] && [ '$off' -gt 0 ]" ||
        { "$URAID" examine "${m[5]}"; tail -5 "$work/$name.err"; }
    serve $name "${m[@]}"
    check "raid$level: after a restart the rebuild goes on from there" \
        log_more $name "rebuilding slot 1 onto it, from member sector [1-9]" 0
    if [ $level = 6 ]; then
        "$URAID" fail "${m[3]}" >/dev/null
        check "raid6: a second member fails during the rebuild: the array goes on" \
            qemu-img compare -q -f raw -F raw "$work/data" "$uri"
    fi
    for _ in $(seq 300); do grep -q "recovery done" "$work/$name.err" && break; sleep 0.1; done
    check "raid$level: the rebuild completes" grep -q "recovery done" "$work/$name.err"
    check "raid$level: the data is intact after the rebuild" \
        qemu-img compare -q -f raw -F raw "$work/data" "$uri"
    if [ $level = 5 ]; then
        out=$("$URAID" check --wait $name); rc=$?
        check "raid5: then a check finds 0 mismatches ($out)" test $rc -eq 0
    fi
    check "raid$level: stopped" stop $name
    check "raid$level: the rebuilt member holds slot 1" \
        bash -c "'$URAID' examine '${m[5]}' | grep -q 'Device Role : Active device 1'"
done

# ---- a rebuild under fio's writes and verifies; the new member fails in its own rebuild ----
m=()
for i in 0 1 2 3 4 5; do truncate -s 32M "$work/ld.$i"; m+=("$work/ld.$i"); done
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --assume-clean --name=ld "${m[@]:0:4}" >/dev/null
serve ld --speed-min=4000 --speed-max=4000 "${m[@]:0:4}"
size=$(nbdinfo --size "nbd+unix:///?socket=$work/ld.sock")
w0=$(writes_of ld)
# one pass over the array per run (fio's verify is exact within a pass), runs
# back to back for the length of the scenario, each with its seed
(cd "$work" && for r in 1 2 3 4 5 6; do
    fio --ioengine=nbd --uri="nbd+unix:///?socket=$work/ld.sock" --rw=randrw \
        --bssplit=4k/50:64k/50 --iodepth=16 --verify=crc32c --verify_fatal=1 --verify_state_save=0 \
        --randseed=$((SEED + r)) --size=$((size / 1048576))M --name=load$r \
        --output="$work/fio.$r.out" >/dev/null 2>&1
done) &
fpid=$!
# fio is writing before the fail
status_until ld 60 "sum(m['writes'] for m in d['members']) > $w0"
"$URAID" fail "${m[1]}" >/dev/null && "$URAID" add ld "${m[4]}" >/dev/null
status_until ld 30 'd["background"] and d["background"][0]["kind"] == "recovery"'
check "a rebuild runs under the load" bash -c "'$URAID' status ld | grep -q 'recovery \['"
"$URAID" fail "${m[4]}" >/dev/null
log_more ld 'recovery stopped' 0
status_until ld 30 'd["degraded"] == 1 and not d["background"]'
check "the new member failed during its own rebuild: the rebuild stops, the array goes on" \
    bash -c "grep -q 'recovery stopped' '$work/ld.err' &&
             '$URAID' status --json ld | grep -q '\"degraded\": 1'"
"$URAID" remove "${m[4]}" "${m[1]}" >/dev/null && "$URAID" add ld "${m[5]}" >/dev/null
for _ in $(seq 600); do grep -q "recovery done" "$work/ld.err" && break; sleep 0.1; done
check "another spare is rebuilt under the load" grep -q "recovery done" "$work/ld.err"
wait $fpid
check "fio verified its writes through NBD throughout ($(cat "$work"/fio.*.out | grep -c 'err= 0') of 6 runs)" \
    test "$(cat "$work"/fio.*.out | grep -c 'err= 0')" = 6
out=$("$URAID" check --wait ld); rc=$?
check "then a check finds 0 mismatches ($out)" test $rc -eq 0
stop ld

# ---- uraid add: refusals, then a new device takes the missing slot ----
m=()
for i in 0 1 2 3 4; do truncate -s 32M "$work/ad.$i"; m+=("$work/ad.$i"); done
truncate -s 8M "$work/small"
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=ad "${m[@]:0:4}" >/dev/null
serve ad "${m[@]:0:4}"
"$URAID" fail "${m[1]}" >/dev/null && "$URAID" remove "${m[1]}" >/dev/null
sum=$(md5sum <"${m[1]}")
out=$("$URAID" add ad "${m[1]}" 2>&1); rc=$?
check "add of a device holding an md superblock is refused without --force ($out)" \
    bash -c "[ $rc -ne 0 ] && [ \"\$(md5sum <'${m[1]}')\" = '$sum' ]"
out=$("$URAID" add ad "$work/small" 2>&1); rc=$?
check "add of a device too small is refused ($out)" test $rc -ne 0
check "add of a new device" bash -c "'$URAID' add ad '${m[4]}' >/dev/null"
for _ in $(seq 300); do grep -q "recovery done" "$work/ad.err" && break; sleep 0.1; done
check "the missing slot is rebuilt onto it" grep -q "recovery done" "$work/ad.err"
out=$("$URAID" check --wait ad); rc=$?
check "then a check finds 0 mismatches ($out)" test $rc -eq 0
check "stopped" stop ad
check "mdadm --examine: the added device holds slot 1" \
    bash -c "mdadm --examine '${m[4]}' | grep -q 'Device Role : Active device 1'"

# ---- uraid add on metadata 1.0 (superblock, bitmap and log at the end), a larger device ----
m=()
for i in 0 1 2 3; do truncate -s 32M "$work/e.$i"; m+=("$work/e.$i"); done
truncate -s 40M "$work/e.4"
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --metadata=1.0 --bitmap=internal \
    --bitmap-chunk=1024 --assume-clean --name=e "${m[@]}" >/dev/null
serve e "${m[@]}"
size=$(nbdinfo --size "nbd+unix:///?socket=$work/e.sock")
randfile $((SEED + 5)) "$size" "$work/e.data"
nbdcopy "$work/e.data" "nbd+unix:///?socket=$work/e.sock"
"$URAID" fail "${m[2]}" >/dev/null && "$URAID" remove "${m[2]}" >/dev/null
check "1.0: add of a larger device" bash -c "'$URAID' add e '$work/e.4' >/dev/null"
for _ in $(seq 300); do grep -q "recovery done" "$work/e.err" && break; sleep 0.1; done
check "1.0: the missing slot is rebuilt onto it" grep -q "recovery done" "$work/e.err"
out=$("$URAID" check --wait e); rc=$?
check "1.0: then a check finds 0 mismatches ($out)" test $rc -eq 0
"$URAID" fail "${m[0]}" >/dev/null
check "1.0: with another member failed the data reads back through it" \
    qemu-img compare -q -f raw -F raw "$work/e.data" "nbd+unix:///?socket=$work/e.sock"
stop e
check "1.0: mdadm --examine: slot 2, superblock at the end of the larger device, bitmap below it" \
    bash -c "mdadm --examine '$work/e.4' | grep -q 'Device Role : Active device 2' &&
             mdadm --examine '$work/e.4' | grep -q 'Super Offset : 81904 sectors' &&
             mdadm --examine '$work/e.4' | grep -q 'Internal Bitmap : -16 sectors from superblock'"

echo "$fails failed"
[ $fails -eq 0 ]
