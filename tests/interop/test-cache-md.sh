#!/bin/bash
# Referee for the write-back cache: uraid serve --write-cache=back (a cache
# smaller than the array, so it destages under pressure too) takes known
# patterns through NBD: the whole array in 4 KiB .. 64 KiB pieces in random
# order, then 4 KiB .. 64 KiB overwrites at random places (writes onto dirty
# data), no FLUSH; uraid serve reads the whole export back (nbdcopy: what it
# serves). Then 256 more overwrites and, right after the last one, `uraid
# stop`, which drains the cache (the dirty bytes it held are printed). The
# real md driver in the guest then assembles the members, its check finds 0
# mismatches (mismatch_cnt), and every byte it reads is what was written
# (and what uraid served, but for the last overwrites). RAID 1 (two), 5
# (four), 6 (five), 10 (near 2, four). One boot. Exit 0 pass, 77 skip, else
# fail.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_serving 20261202
command -v nbdcopy >/dev/null || { echo "nbdcopy missing (make deps)"; exit 77; }

# w.py all|tail LIB SOCKET SEED DATA [URAID NAME]: "all" writes the whole
# array in pieces of 4 .. 64 KiB in random order, then as many overwrites of
# 4 .. 64 KiB at random places (onto dirty data), no FLUSH; "tail" writes
# 256 more overwrites and, right after the last reply, reads the cache's
# dirty bytes (status --json) and runs uraid stop. DATA: what the array holds.
cat >"$tmp/w.py" <<'PY'
import random, subprocess, sys, json
sys.path.insert(0, sys.argv[2])
from nbd_wire import CMD_WRITE, connect, go, reply, request
mode, sock, seed, path = sys.argv[1], sys.argv[3], int(sys.argv[4]), sys.argv[5]
s = connect(sock)
size, _ = go(s)
rng = random.Random(seed if mode == "all" else seed + 1)
data = bytearray(rng.randbytes(size)) if mode == "all" else bytearray(open(path, "rb").read())
writes = 0
def put(off, n):
    global writes
    writes += 1
    request(s, CMD_WRITE, off, n, writes, payload=bytes(data[off:off + n]))
    err, c = reply(s)
    assert err == 0 and c == writes, "write at %d: error %d" % (off, err)
def overwrites(count):
    for _ in range(count):
        n = rng.randrange(1, 17) * 4096
        off = rng.randrange(0, (size - n) // 4096 + 1) * 4096
        data[off:off + n] = rng.randbytes(n)
        put(off, n)
if mode == "all":
    pieces, off = [], 0
    while off < size:
        n = min(rng.randrange(1, 17) * 4096, size - off)
        pieces.append((off, n))
        off += n
    rng.shuffle(pieces)
    for off, n in pieces:
        put(off, n)
    overwrites(len(pieces))
    open(path, "wb").write(data)
    print("%d writes, %d MiB" % (writes, size >> 20))
else:
    overwrites(256)
    open(path, "wb").write(data)
    st = json.loads(subprocess.check_output([sys.argv[6], "status", "--json", sys.argv[7]]))
    print("dirty at the stop: %d bytes" % st["write_cache"]["dirty_bytes"])
    print("stopped: %d" % subprocess.call([sys.argv[6], "stop", sys.argv[7]], stdout=subprocess.DEVNULL))
PY
# name level n [create args]
arrays=("c1 1 2" "c5 5 4 --chunk=64" "c6 6 5 --chunk=64" "c10 10 4 --chunk=64 --layout=n2")
disks=() names=() mddevs=() want=()
letters=({a..z})
k=0
for spec in "${arrays[@]}"; do
    set -- $spec
    name=$1 level=$2 n=$3; shift 3
    members=()
    for i in $(seq 0 $((n - 1))); do truncate -s 24M "$tmp/$name.$i"; members+=("$tmp/$name.$i"); done
    "$URAID" create --level="$level" --raid-devices="$n" --name="$name" --assume-clean --bitmap=none \
        "$@" "${members[@]}" >/dev/null || exit 1
    serve "$name" --write-cache=back --cache-size=8M "${members[@]}" || exit 1
    python3 "$tmp/w.py" all "$INTEROP_DIR/../cli/lib" "$tmp/$name.sock" "$((SEED + k))" "$tmp/$name.data" || exit 1
    nbdcopy "nbd+unix:///?socket=$tmp/$name.sock" "$tmp/$name.served" || exit 1
    check "$name: uraid serves what was written" cmp -s "$tmp/$name.data" "$tmp/$name.served"
    python3 "$tmp/w.py" tail "$INTEROP_DIR/../cli/lib" "$tmp/$name.sock" "$((SEED + k))" "$tmp/$name.data" \
        "$URAID" "$name" >"$tmp/$name.tail" 2>&1
    check "$name: more overwrites, then at once uraid stop, which drains the cache ($(cat "$tmp/$name.tail"))" \
        bash -c "grep -q '^stopped: 0$' '$tmp/$name.tail'"
    wait "$spid"; spid=
    want+=("$name=$(sha256sum <"$tmp/$name.data" | cut -d' ' -f1)")
    devs=""
    for m in "${members[@]}"; do
        devs="$devs /dev/vd${letters[${#disks[@]}]}"
        disks+=("$m")
    done
    mddevs+=("$devs")
    names+=("$name")
    k=$((k + 1))
done
for k in "${!names[@]}"; do echo "${names[$k]}:${mddevs[$k]}"; done >"$tmp/mdlist"

cat >"$tmp/guest.sh" <<'GUEST'
i=0; rc=0
while IFS=: read -r name devs; do
    mdadm --assemble /dev/md$i $devs >/dev/null 2>&1 ||
        { echo "$name: md refused to assemble"; rc=1; i=$((i + 1)); continue; }
    echo check >/sys/block/md$i/md/sync_action
    sleep 0.2
    mdadm --wait /dev/md$i >/dev/null 2>&1 || true
    mm=$(cat /sys/block/md$i/md/mismatch_cnt)
    a=$(sha256sum </dev/md$i | cut -d' ' -f1)
    echo "$name md=$a mismatch_cnt=$mm last=$(cat /sys/block/md$i/md/last_sync_action) state=$(cat /sys/block/md$i/md/array_state)"
    mdadm --stop /dev/md$i >/dev/null 2>&1
    i=$((i + 1))
done </host/mdlist
exit $rc
GUEST

out=$(interop_run -f "$tmp/mdlist" "$tmp/guest.sh" "${disks[@]}")
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: guest script exit $rc"; fails=$((fails + 1)); }
for w in "${want[@]}"; do
    name=${w%%=*} sum=${w#*=}
    line=$(grep "^$name " <<<"$out")
    check "$name: md assembles the members, its check finds 0 mismatches, it reads what was written and served" \
        bash -c "grep -q 'md=$sum mismatch_cnt=0 last=check ' <<<'$line'"
done
exit $((fails > 0))
