#!/bin/bash
# md's write journal (raid5-cache): `uraid create --write-journal` for RAID 5
# and RAID 6, the journal shown as such (examine, status); served without it:
# refused, or read-only with --force as md does; a log left by a crash
# between the journal write and the member writes (tests/tools/
# journal_inject writes it as md does, members stale) is replayed when the
# array is served: every logged row is on the members afterwards, `uraid
# check` finds 0 mismatches, and the next start finds a
# clean log (the tail moved on); so too for a log longer than the replay's
# read window and one that wraps the ring's end. A corrupt page ends the replay
# at its block; another array's journal is refused.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
INJECT=$(realpath "$BUILD/tests/tools/journal_inject")
. "$(dirname "$0")/lib/common.sh"
need nbdcopy python3
work_dir journal
SEED=${SEED:-20261202}
echo "seed $SEED, work in $work"
serve() { serve_bg "$work" s "$@"; }
uri="nbd+unix:///?socket=$work/s.sock"

# refusals: one line each, nothing written
for i in 0 1 2; do truncate -s 16M "$work/r$i"; done
truncate -s 16K "$work/rj"
refused() {   # refused WHAT EXPECTED ARGS...
    local what=$1 want=$2; shift 2
    local before out rc
    before=$(md5sum "$work"/r*)
    out=$("$URAID" create "$@" 2>&1); rc=$?
    check "create refuses $what ($out)" bash -c '[ "$1" -ne 0 ] && [ "$(wc -l <<<"$2")" -eq 1 ] &&
        grep -q -- "$3" <<<"$2" && [ "$4" = "$(md5sum "$5"/r*)" ]' _ "$rc" "$out" "$want" "$before" "$work"
}
refused "a journal on RAID 1" "for RAID 4, 5 and 6" --level=1 --raid-devices=2 \
    --write-journal="$work/rj" "$work/r0" "$work/r1"
refused "a journal with a bitmap" "--bitmap=internal" --level=5 --raid-devices=3 --bitmap=internal \
    --write-journal="$work/rj" "$work/r0" "$work/r1" "$work/r2"
refused "a member as the journal" "as the write journal" --level=5 --raid-devices=3 \
    --write-journal="$work/r1" "$work/r0" "$work/r1" "$work/r2"
refused "a journal too small" "too small" --level=5 --raid-devices=3 \
    --write-journal="$work/rj" "$work/r0" "$work/r1" "$work/r2"
refused "a journal with PPL" "one or the other" --level=5 --raid-devices=3 \
    --consistency-policy=ppl --write-journal="$work/rj" "$work/r0" "$work/r1" "$work/r2"

for level in 5 6; do
    m=()
    for i in 0 1 2 3 4; do truncate -s 48M "$work/m$level.$i"; m+=("$work/m$level.$i"); done
    j=$work/j$level
    truncate -s 8M "$j"
    out=$("$URAID" create --level=$level --raid-devices=5 --chunk=64 --name=j$level \
        --write-journal="$j" "${m[@]}")
    check "raid$level: created with a journal ($out)" grep -q "Write journal on" <<<"$out"
    check "raid$level: examine shows the journal's role" \
        bash -c "'$URAID' examine '$j' | grep -q 'Device Role : Journal'"
    check "raid$level: feature 0x200 on the members" \
        bash -c "'$URAID' examine '${m[0]}' | grep -q 'Feature Map : 0x200'"

    # without the journal: refused, read-only when forced
    err=$("$URAID" serve --socket="$work/x.sock" "${m[@]}" 2>&1); rc=$?
    check "raid$level: served without its journal: refused, naming --force ($err)" \
        bash -c '[ "$1" -ne 0 ] && grep -q -- --force <<<"$2"' _ "$rc" "$err"
    serve --force "${m[@]}"
    check "raid$level: --force without the journal: read-only, said" \
        grep -q "write journal missing: served read-only" "$work/s.err"
    head -c 4096 /dev/urandom >"$work/page"
    check "raid$level: --force without the journal: a write fails" \
        bash -c "! nbdcopy '$work/page' '$uri' 2>/dev/null"
    stop_served j$level

    # data written through the journal array, then a crash's log on top
    randfile "$SEED" $((8 << 20)) "$work/data"
    serve "${m[@]}" "$j"
    check "raid$level: status lists the journal member" \
        bash -c "'$URAID' status j$level | grep -q 'journal .*$(basename "$j")'"
    nbdcopy "$work/data" "$uri"
    stop_served j$level
    "$INJECT" inject "$SEED" 24 "$work/exp" "$j" "${m[@]}"
    check "raid$level: before the replay the members are stale" \
        bash -c "! '$INJECT' check '$work/exp' ${m[*]} >/dev/null 2>&1"
    serve "${m[@]}" "$j"
    check "raid$level: the replay wrote the 24 rows" grep -q "24 rows written" "$work/s.err"
    out=$("$URAID" check --wait j$level); rc=$?
    check "raid$level: check finds 0 mismatches after the replay ($out)" test $rc -eq 0
    stop_served j$level
    check "raid$level: every logged row is on the members" "$INJECT" check "$work/exp" "${m[@]}"
    serve "${m[@]}" "$j"
    check "raid$level: the next start finds a clean log" grep -q "1 meta blocks .* 0 rows written" "$work/s.err"
    stop_served j$level
done

# a log longer than the replay's read window (256 KiB) and a second one that
# wraps the ring's end: RAID 5 x4, a 10 MiB journal, 400 rows of 5 pages
# (meta block, 3 data, parity) injected twice, each replayed and checked
m=()
for i in 0 1 2 3; do rm -f "$work/b$i"; truncate -s 48M "$work/b$i"; m+=("$work/b$i"); done
j=$work/bj; rm -f "$j"; truncate -s 10M "$j"
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=b --write-journal="$j" "${m[@]}" >/dev/null
for k in 1 2; do
    "$INJECT" inject $((SEED + 10 + k)) 400 "$work/bexp" "$j" "${m[@]}" >/dev/null
    serve "${m[@]}" "$j"
    check "long log $k: the replay wrote the 400 rows" bash -c "grep 'rows written' '$work/s.err' | tail -1 | grep -q ': 400 rows written'"
    stop_served b
    check "long log $k: every logged row is on the members" "$INJECT" check "$work/bexp" "${m[@]}"
done
serve "${m[@]}" "$j"
out=$("$URAID" check --wait b); rc=$?
check "long logs: check finds 0 mismatches ($out)" test $rc -eq 0
stop_served b

# write-through at run time: fio writes the array through the journal;
# then journal_acks.py writes (each write logged when sent and when
# acknowledged, data unique to each write and sector) and uraid is killed
# (kill_whole) 1 s after 200 acknowledgements; served again, the journal is
# replayed, every acknowledged write reads back (or a later one never
# acknowledged), check finds 0 mismatches; killed again the same way (whole
# 4 KiB pages only: a write logged as FLUSH is as exposed as without a
# journal), and served degraded (a member left out, --force): the rows the
# journal held make parity match its data, so the lost member's data reads
# back right (the write hole closed). Rounds of JOURNAL_SEEDS seeds.
# (Not fio's verify_state: after a kill it expects writes issued, not
# completed; and fio rewriting its own first pass writes the same data, so
# a write lost or torn would not show.)
need fio
JS=${JOURNAL_SEEDS:-2}
for s in $(seq "$SEED" $((SEED + JS - 1))); do
    m=()
    for i in 0 1 2 3; do rm -f "$work/w$i"; truncate -s 40M "$work/w$i"; m+=("$work/w$i"); done
    j=$work/wj; rm -f "$j"; truncate -s 8M "$j"
    "$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=w --write-journal="$j" "${m[@]}" >/dev/null
    serve "${m[@]}" "$j"
    (cd "$work" && fio --ioengine=nbd --uri="$uri" --rw=randwrite --bssplit=4k/50:16k/25:64k/25 \
        --iodepth=16 --verify=crc32c --randseed="$s" --size=100M --name=w --do_verify=0 \
        --end_fsync=1 >"$work/fio.out" 2>&1)
    check "seed $s: a first pass through the journal" grep -q "err= 0" "$work/fio.out"
    # 4 KiB aligned writes on a whole array: every one logged whole (FLUSH-only
    # units are counted at close)
    stop_served w
    check "seed $s: no write logged as FLUSH only" bash -c "! grep 'logged as FLUSH only' '$work/s.err'"
    serve "${m[@]}" "$j"
    k1=$((s * 10 + 1)); rm -rf "$work/acks1"
    check "seed $s: 200 writes acknowledged before the kill (journal_acks seed $k1)" \
        acks_kill "$work/s.sock" "$work/acks1" "$k1"
    serve "${m[@]}" "$j"
    check "seed $s: killed mid-write, the journal replayed at the restart" \
        bash -c "grep 'journal:' '$work/s.err' | tail -1 | grep -q ' rows written'"
    check "seed $s: every acknowledged write reads back (journal_acks seed $k1)" acks_verify "$work/s.sock" "$work/acks1" "$k1" ||
        grep 'journal' "$work/s.err" | tail -4
    out=$("$URAID" check --wait w); rc=$?
    check "seed $s: check finds 0 mismatches ($out)" test $rc -eq 0
    # again, and then a member lost: the data it held must come from parity
    k2=$((s * 10 + 2)); rm -rf "$work/acks2"
    check "seed $s: 200 writes acknowledged before the kill (journal_acks seed $k2, aligned)" \
        acks_kill "$work/s.sock" "$work/acks2" "$k2" aligned
    serve --force --run "${m[0]}" "${m[1]}" "${m[3]}" "$j"
    check "seed $s: served degraded after the kill (member 2 left out)" \
        bash -c "grep 'journal:' '$work/s.err' | tail -1 | grep -q ' rows written'"
    check "seed $s: degraded, every acknowledged write reads back (write hole closed; seed $k2)" \
        acks_verify "$work/s.sock" "$work/acks2" "$k2" || grep 'journal' "$work/s.err" | tail -4
    stop_served w
done

# a corrupt page: its block and what follows are not replayed
m=("$work"/m5.*); j=$work/j5
"$INJECT" inject $((SEED + 1)) 4 "$work/exp2" "$j" "${m[@]}" >/dev/null
python3 - "$j" <<'EOF'
import struct, sys
# the first logged page after the tail block's successor (journal data_offset from the superblock)
f = open(sys.argv[1], "r+b")
f.seek(4096 + 128); do = struct.unpack("<Q", f.read(8))[0]          # data_offset (1.2: sb at 4 KiB)
f.seek(4096 + 152); tail = struct.unpack("<Q", f.read(8))[0]        # recovery_offset = journal_tail
pos = (do + tail + 16) * 512                                        # tail block, next meta, its first page
f.seek(pos); b = bytearray(f.read(1)); f.seek(pos); f.write(bytes([b[0] ^ 1]))
EOF
serve "${m[@]}" "$j"
check "raid5: a corrupt page ends the replay, said" grep -q "does not match its checksum" "$work/s.err"
check "raid5: nothing after it replayed" grep -q "0 rows written" "$work/s.err"
stop_served j5

# another array's journal
err=$("$URAID" serve --socket="$work/x.sock" "${m[@]}" "$work/j6" 2>&1); rc=$?
check "another array's journal refused ($err)" \
    bash -c '[ "$1" -ne 0 ] && grep -q "another array" <<<"$2"' _ "$rc" "$err"

# a member partway through its rebuild when the journal is replayed: the
# replay writes the in-sync members only, so that member's rebuild goes back
# to the lowest row replayed; once rebuilt, every logged row is on every
# member (before that fix, rows below its offset stayed stale)
m=()
for i in 0 1 2 3; do rm -f "$work/rb$i"; truncate -s 16M "$work/rb$i"; m+=("$work/rb$i"); done
j=$work/rbj; rm -f "$j"; truncate -s 4M "$j"
"$URAID" create --level=5 --raid-devices=4 --chunk=64 --name=rb --write-journal="$j" "${m[@]}" \
    >/dev/null
"$INJECT" inject "$SEED" 24 "$work/rbexp" "$j" "${m[@]}" >/dev/null
python3 - "${m[1]}" <<'EOF'
import struct, sys
# member 1: rebuilt up to sector 16000 only (md's feature 0x2 and recovery_offset)
f = open(sys.argv[1], "r+b"); base = 4096
f.seek(base); sb = bytearray(f.read(4096))
struct.pack_into("<I", sb, 8, struct.unpack_from("<I", sb, 8)[0] | 2)
struct.pack_into("<Q", sb, 152, 16000)
max_dev = struct.unpack_from("<I", sb, 220)[0]
struct.pack_into("<I", sb, 216, 0)
n = 256 + 2 * max_dev; t = 0
for i in range(0, n - n % 4, 4): t += struct.unpack_from("<I", sb, i)[0]
if n % 4: t += struct.unpack_from("<H", sb, n - 2)[0]
struct.pack_into("<I", sb, 216, ((t & 0xffffffff) + (t >> 32)) & 0xffffffff)
f.seek(base); f.write(sb)
EOF
serve "${m[@]}" "$j"
check "rebuilding member: its rebuild goes back to the rows replayed" \
    grep -q "rebuild goes back from sector 16000" "$work/s.err"
for _ in $(seq 300); do "$URAID" status --test rb >/dev/null 2>&1 && break; sleep 0.1; done
check "rebuilding member: rebuilt" "$URAID" status --test rb
stop_served rb
check "rebuilding member: every logged row on every member" "$INJECT" check "$work/rbexp" "${m[@]}"

echo "$fails failed"
[ $fails -eq 0 ]
