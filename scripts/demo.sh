#!/bin/sh
# The README's first command: a RAID 5 on four image files in a temporary
# folder, created with uraid and examined, then served over NBD: a client
# writes and reads it back, `uraid status` shows it, `uraid stop` ends it.
# Then `uraid bench` characterises the array in a few seconds and writes HTML
# reports, whose paths are the last lines. Keeps the folder for a look around.
set -e
URAID=${URAID:-build/uraid}
DIR=${DEMO_DIR:-$(mktemp -d /tmp/uraid-demo.XXXXXX)}
SIZE=${DEMO_SIZE:-256M}
mkdir -p "$DIR"
echo "== four $SIZE image files in $DIR"
for i in 0 1 2 3; do rm -f "$DIR/member$i.img"; truncate -s "$SIZE" "$DIR/member$i.img"; done
echo "== uraid create --level=5 --raid-devices=4 --bitmap=internal $DIR/member{0,1,2,3}.img"
"$URAID" create --level=5 --raid-devices=4 --bitmap=internal --name=demo \
    "$DIR/member0.img" "$DIR/member1.img" "$DIR/member2.img" "$DIR/member3.img"
echo
echo "== uraid examine $DIR/member0.img"
"$URAID" examine "$DIR/member0.img"
echo
SOCK=$DIR/demo.sock
export URAID_RUN_DIR="$DIR/run"
echo "== uraid serve --socket=$SOCK $DIR/member{0,1,2,3}.img   (in the background)"
"$URAID" serve --socket="$SOCK" --pid-file="$DIR/serve.pid" \
    "$DIR/member0.img" "$DIR/member1.img" "$DIR/member2.img" "$DIR/member3.img" \
    >"$DIR/serve.log" 2>&1 &
for _ in $(seq 100); do [ -s "$DIR/serve.pid" ] && break; sleep 0.1; done
cat "$DIR/serve.log"
URI="nbd+unix:///?socket=$SOCK"
if command -v nbdinfo >/dev/null && command -v nbdcopy >/dev/null; then
    echo
    echo "== a client: nbdinfo '$URI'"
    nbdinfo "$URI" | grep -E "export-size|block_size|can_(flush|trim|multi_conn)"
    echo "== nbdcopy 32 MiB of random data in and back out, then compare"
    head -c 33554432 /dev/urandom >"$DIR/random.bin"
    nbdcopy "$DIR/random.bin" "$URI"
    nbdcopy "$URI" - | head -c 33554432 | cmp - "$DIR/random.bin" && echo "identical"
fi
echo
echo "== uraid status demo"
"$URAID" status demo
echo
echo "== uraid stop demo"
"$URAID" stop demo
while [ -e "$DIR/serve.pid" ]; do sleep 0.1; done
"$URAID" examine "$DIR/member0.img" | grep -E "^ +State :"
echo
# A short characterisation of the same array, in process (the data nbdcopy wrote is
# overwritten: these are the demo's own files): 4 KiB random write, then read, at
# queue depths 1, 4 and 16, 0.3 s each; each run also writes an HTML report.
for rw in randwrite randread; do
    echo "== uraid bench --array --rw=$rw --bs=4k --sweep=qd=1,4,16 --runtime=0.3 --force-write" \
        "--html=$DIR/bench-$rw.html $DIR/member{0,1,2,3}.img"
    "$URAID" bench --array --rw="$rw" --bs=4k --sweep=qd=1,4,16 --runtime=0.3 --force-write \
        --html="$DIR/bench-$rw.html" \
        "$DIR/member0.img" "$DIR/member1.img" "$DIR/member2.img" "$DIR/member3.img"
done
echo
echo "Other clients of such an export: qemu-img info '$URI', fio --ioengine=nbd --uri='$URI',"
echo "nbdfuse DIR/mnt --unix $SOCK (a file to losetup and mkfs)."
echo "The members are in $DIR; remove it with: rm -r $DIR"
# last, as the README says: where the reports are
echo "The reports (charts of IOPS and latency vs queue depth, percentiles, time series):"
echo "  $DIR/bench-randwrite.html"
echo "  $DIR/bench-randread.html"
