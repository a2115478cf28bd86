#!/bin/bash
# uraid grow on a served linear array: members appended as md's linear_add
# (mdadm --grow --add). A linear of 2 image files gets 4 MiB of fixed-seed
# data and fio's verified writes on its old range; `grow --add` appends a
# smaller third image: the export grows by its data area (nbdinfo on a new
# connection), fio writes and verifies across the whole new range, the
# array is served again and still reads the same, and mdadm --examine shows
# linear with 3 devices and the new member in role 2. Refusals (exit 1, one
# line, every member byte-identical): fewer members, a chunk change, more
# members without spares, a device too small, a device with another
# array's superblock (then taken with --force).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/grow.sh"
need fio nbdcopy nbdinfo python3 mdadm sha256sum
work_dir grow-linear
echo "work in $work"

SEED=1818
echo "data seed $SEED"
randfile $SEED $((4 << 20)) "$work/data"

nbd_size() { nbdinfo --size "$(uri "$1")" 2>/dev/null || echo none; }
# fio over [OFF, OFF+SIZE) bytes: sequential writes with crc32c, verified
# (MODE write) or only verified (MODE verify, the same job read back)
fio_range() {
    local mode=$1 name=$2 off=$3 size=$4 extra=
    [ "$mode" = verify ] && extra=--verify_only
    (cd "$work" && fio --name=v --ioengine=nbd --uri="$(uri "$name")" --rw=write --bs=64k \
        --offset="$off" --size="$size" --iodepth=4 --verify=crc32c --verify_fatal=1 \
        --randseed=$SEED $extra --output="$work/fio-$name-$mode.log" >/dev/null 2>&1)
}

mem=("$work/l0" "$work/l1")
others=("$work/l2" "$work/tiny" "$work/f0")
truncate -s 24M "${mem[@]}"
truncate -s 12M "$work/l2" "$work/f0" "$work/f1"
truncate -s 1M "$work/tiny"
# another array's members: a superblock uraid add refuses without --force
"$URAID" create --level=1 --raid-devices=2 --name=other --run "$work/f0" "$work/f1" >/dev/null

"$URAID" create --level=linear --raid-devices=2 --name=gl --run "${mem[@]}" >/dev/null
serve_bg "$work" gl "${mem[@]}"
nbdcopy "$work/data" "$(uri gl)"
size0=$(nbd_size gl)
echo "size before: $size0"
check "fio writes and verifies the old range" fio_range write gl 4M $((size0 - (4 << 20)))
check "  data" data_ok gl

refused gl "fewer members" --raid-devices=1
refused gl "a chunk change" --chunk=128
refused gl "--raid-devices=3 (mdadm: only --add)" --raid-devices=3
refused gl "a device too small (1 MiB)" --add "$work/tiny"
refused gl "another array's member without --force" --add "$work/f0"

ev0=$(examine "${mem[0]}" Events)
out=$("$URAID" grow gl --add "$work/l2"); rc=$?
check "grow --add appends (rc $rc): $out" test $rc -eq 0
check "  says linear 2 -> 3" grep -q "linear 2 -> 3 members" <<<"$out"
mem+=("$work/l2")
others=("$work/tiny" "$work/f0")
size1=$(nbd_size gl)
# the new member's data area, in bytes (mdadm: Avail Dev Size in sectors),
# rounded down to the chunk (Rounding) when there is one
avail=$(examine "$work/l2" "Avail Dev Size" | cut -d' ' -f1)
round=$(examine "$work/l2" "Rounding" | tr -dc 0-9)
want=$((avail * 512))
[ -n "$round" ] && [ "$round" -gt 0 ] && want=$((want - want % (round * 1024)))
echo "size after: $size1 (grew by $want: avail $avail sectors, rounding ${round:-0}K)"
check "  NBD exports the old size + the new member's data area" \
    test "$size1" = $((size0 + want))
check "  status says the same size" \
    test "$("$URAID" status --json gl | python3 -c 'import json,sys; print(json.load(sys.stdin)["array_bytes"])')" = "$size1"
check "  events went forward" test "$(examine "${mem[0]}" Events)" -gt "$ev0"
check "  data" data_ok gl
check "  the old range still verifies" fio_range verify gl 4M $((size0 - (4 << 20)))
check "fio writes and verifies the whole new range" fio_range write gl 4M $((size1 - (4 << 20)))
check "  data" data_ok gl

stop_served gl
for m in "${mem[@]}"; do
    check "examine $(basename "$m"): linear, 3 devices" \
        test "$(examine "$m" "Raid Level")/$(examine "$m" "Raid Devices")" = linear/3
done
check "examine l2: Active device 2" test "$(examine "$work/l2" "Device Role")" = "Active device 2"
check "the array serves again with 3 members" serve_bg "$work" gl "${mem[@]}"
check "  the size is kept" test "$(nbd_size gl)" = "$size1"
check "  data" data_ok gl
check "  the whole range verifies" fio_range verify gl 4M $((size1 - (4 << 20)))

# with --force: another array's member is appended too
out=$("$URAID" grow gl --add "$work/f0" --force); rc=$?
check "grow --add --force appends another array's member (rc $rc): $out" test $rc -eq 0
mem+=("$work/f0")
check "  NBD exports more" test "$(nbd_size gl)" -gt "$size1"
check "  data" data_ok gl
check "  the range before verifies" fio_range verify gl 4M $((size1 - (4 << 20)))
stop_served gl
check "examine f0: linear, 4 devices, Active device 3" \
    test "$(examine "$work/f0" "Raid Level")/$(examine "$work/f0" "Raid Devices")/$(examine "$work/f0" "Device Role")" = "linear/4/Active device 3"

# Metadata 1.0 (superblock at the end), with an older spare there (grow
# --add killed after its add; md keeps none in a linear array): --raid-devices is refused as
# mdadm refuses it, so the older spare is never taken; grow --add appends
# exactly the device named; mdadm --examine reads 1.0 fields that agree.
mem=("$work/e0" "$work/e1")
others=("$work/es" "$work/en")
truncate -s 16M "${mem[@]}" "$work/es"
truncate -s 10M "$work/en"
"$URAID" create --level=linear --metadata=1.0 --raid-devices=2 --name=gle --run "${mem[@]}" >/dev/null
serve_bg "$work" gle "${mem[@]}"
nbdcopy "$work/data" "$(uri gle)"
esize0=$(nbd_size gle)
echo "1.0 size before: $esize0"
# uraid add on a linear: md keeps no linear spares (the kernel's linear_add
# takes an added disk at once and refuses a spare's role: mdadm --add fails
# with EINVAL), so uraid refuses and names the append
# (the array is live: its superblocks turn clean after the copy, so it is
# quiet first; the members are judged by their bytes and role count too)
check "1.0: gle is quiet first" quiet gle
before=$(sums "${mem[@]}") esum=$(sums "$work/es")
out=$("$URAID" add gle "$work/es" 2>&1); rc=$?
check "1.0: uraid add on a linear is refused (rc $rc)" test $rc -eq 1
check "  in one line naming uraid grow --add: $out" \
    eval 'one_line "$out" && grep -q "uraid grow ARRAY --add" <<<"$out"'
check "  the refused device unchanged" test "$(sums "$work/es")" = "$esum"
check "  the members unchanged" test "$(sums "${mem[@]}")" = "$before"
check "  the array keeps its 2 members and no spare" test "$("$URAID" status --json gle | python3 -c '
import json,sys
d=json.load(sys.stdin)
print(len(d["members"]), sum(m["slot"] is None for m in d["members"]))')" = "2 0"
# the state a grow --add killed between its add and its append leaves: the
# spare, added as grow --add adds it (the control socket's add ... append)
out=$(python3 - "$work/gle.sock.ctl" "$work/es" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(("add\t%s\t-\tappend\n" % sys.argv[2]).encode())
s.settimeout(10)
got = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    got += b
print(" ".join(got.decode().split()))
PY
); rc=$?
check "1.0: an older spare added as grow --add adds it (rc $rc): $out" \
    eval 'test $rc -eq 0 && grep -q " ok .*as a spare" <<<"$out"'
others=("$work/es" "$work/en")
refused gle "1.0: --raid-devices=3 with a spare there (mdadm: only --add)" --raid-devices=3
out=$("$URAID" grow gle --raid-devices=3 2>&1)
check "  in mdadm's words: $out" grep -q "Only --add is supported for LINEAR" <<<"$out"
refused gle "1.0: --raid-devices=3 --add (mdadm refuses it too)" --raid-devices=3 --add "$work/en"
out=$("$URAID" grow gle --add "$work/en"); rc=$?
check "1.0: grow --add appends (rc $rc): $out" test $rc -eq 0
check "  says linear 2 -> 3" grep -q "linear 2 -> 3 members" <<<"$out"
esize1=$(nbd_size gle)
eavail=$(examine "$work/en" "Avail Dev Size" | cut -d' ' -f1)
eround=$(examine "$work/en" "Rounding" | tr -dc 0-9)
ewant=$((eavail * 512))
[ -n "$eround" ] && [ "$eround" -gt 0 ] && ewant=$((ewant - ewant % (eround * 1024)))
echo "1.0 size after: $esize1 (grew by $ewant: avail $eavail sectors, rounding ${eround:-0}K)"
check "  NBD exports the old size + the named device's data area" \
    test "$esize1" = $((esize0 + ewant))
spares=$("$URAID" status --json gle | python3 -c '
import json,sys
d=json.load(sys.stdin)
print(" ".join(m["device"].rsplit("/",1)[-1] for m in d["members"] if m["slot"] is None))')
check "  the older spare is still a spare (spares: $spares)" test "$spares" = es
check "  data" data_ok gle
check "  fio writes and verifies the whole new range" fio_range write gle 4M $((esize1 - (4 << 20)))
check "  data" data_ok gle
stop_served gle
for m in "${mem[@]}" "$work/en"; do
    check "examine $(basename "$m"): 1.0, linear, 3 devices" \
        test "$(examine "$m" Version)/$(examine "$m" "Raid Level")/$(examine "$m" "Raid Devices")" = 1.0/linear/3
done
check "examine en: Active device 2" test "$(examine "$work/en" "Device Role")" = "Active device 2"
check "examine es: spare" test "$(examine "$work/es" "Device Role")" = "spare"
# 1.0: the superblock in the last 8 KiB of the device (mdadm prints no Data
# Offset for 1.0: the data starts at 0), the data area below it
soff=$(examine "$work/en" "Super Offset" | cut -d' ' -f1)
doff=$(examine "$work/en" "Data Offset" | cut -d' ' -f1)
check "examine en: Super Offset $soff in the last 8 KiB of 10 MiB, data from ${doff:-0}" \
    test "${doff:-0}" = 0 -a "$soff" -ge $((10 * 2048 - 16)) -a "$soff" -lt $((10 * 2048))
check "examine en: Avail Dev Size $eavail below the superblock" test "$eavail" -lt "$soff"
check "the 1.0 array serves again with 3 members and the spare" \
    serve_bg "$work" gle "${mem[@]}" "$work/en" "$work/es"
check "  the size is kept" test "$(nbd_size gle)" = "$esize1"
check "  data" data_ok gle
check "  the whole range verifies" fio_range verify gle 4M $((esize1 - (4 << 20)))
stop_served gle

echo "$fails failures"
[ "$fails" -eq 0 ]
