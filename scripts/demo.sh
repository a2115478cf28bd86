#!/bin/sh
# The README's first command: a RAID 5 on four image files in a temporary
# folder, created with uraid and examined. Keeps the folder for a look around.
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
echo "The members are in $DIR; remove it with: rm -r $DIR"
