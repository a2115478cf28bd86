#!/bin/bash
# The run directory and the files uraid writes: a run directory that another
# user owns (the squatter of /tmp/uraid-UID), that is a symbolic link, or that
# group or others may enter is refused with the reason, by serve and status,
# and nothing is created in it; the pid file and the registry entry are never
# written through a symbolic link planted at their path (the link's target is
# unchanged), and an entry that is a link is not read; serving, status and stop
# work as before. In a private mount namespace (when there is one), the
# defaults: /run/uraid for root, /tmp/uraid-UID and $XDG_RUNTIME_DIR/uraid for
# another user. Needs root (files owned by another user).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
[ "$(id -u)" -eq 0 ] || { echo "needs root: the test gives directories to another user"; exit 77; }
work_dir rundir
echo "work in $work"
OTHER=65534

m=("$work/d0" "$work/d1")
truncate -s 16M "${m[@]}"
"$URAID" create --level=1 --raid-devices=2 --name=rd --run "${m[@]}" >/dev/null || exit 1

# try_serve DIR ARGS...: uraid serve with URAID_RUN_DIR=DIR until it exits or
# serves (then it is stopped): $rc its exit status or "serving", $err its
# stderr, $listing what DIR held meanwhile.
# The pid file is $work/t.pid, or PIDF=PATH when ARGS give --pid-file=PATH.
try_serve() {
    local dir=$1 pidf=${PIDF:-$work/t.pid}; shift
    rm -f "$work/t.pid"
    URAID_RUN_DIR=$dir "$URAID" serve --threads=1 --pid-file="$work/t.pid" "$@" "${m[@]}" \
        >"$work/t.out" 2>"$work/t.err" &
    local p=$!
    for _ in $(seq 100); do
        [ -s "$pidf" ] && break
        kill -0 $p 2>/dev/null || break
        sleep 0.1
    done
    listing=$(ls -A "$dir" 2>/dev/null)
    if kill -0 $p 2>/dev/null; then
        kill $p; wait $p; rc=serving
    else
        wait $p; rc=$?
    fi
    err=$(cat "$work/t.err")
}
# refused DIR PATTERN: serve (default paths) and status both refuse DIR with
# one line matching PATTERN, and nothing appears in it
refused() {
    local dir=$1 pat=$2 before
    before=$(ls -A "$dir" 2>/dev/null)
    try_serve "$dir"
    echo "  serve: exit $rc: $err"
    [ "$rc" != serving ] && [ "$rc" -ne 0 ] || return 1
    [ "$(wc -l <<<"$err")" -eq 1 ] && grep -q -- "$pat" <<<"$err" || return 1
    [ "$listing" = "$before" ] && [ "$(ls -A "$dir" 2>/dev/null)" = "$before" ] || {
        echo "  created in $dir: $listing"; return 1; }
    local out
    out=$(URAID_RUN_DIR=$dir "$URAID" status 2>&1); rc=$?
    echo "  status: exit $rc: $out"
    [ $rc -eq 1 ] && grep -q -- "$pat" <<<"$out" && [ "$(ls -A "$dir" 2>/dev/null)" = "$before" ]
}

# ---- run directories that are not the user's own ----
mkdir "$work/squat" && chown $OTHER "$work/squat" && chmod 0777 "$work/squat"
check "a run directory owned by uid $OTHER, mode 0777, is refused" \
    refused "$work/squat" "directory $work/squat is owned by uid $OTHER, not you: remove it or set URAID_RUN_DIR"
chmod 0700 "$work/squat"
check "and so it is with mode 0700" refused "$work/squat" "owned by uid $OTHER, not you"
mkdir -m 0700 "$work/real"
ln -s "$work/real" "$work/link"
check "a run directory that is a symbolic link (to a directory of ours) is refused" \
    refused "$work/link" "directory $work/link is a symbolic link"
check "and nothing was created in its target" test -z "$(ls -A "$work/real")"
for mode in 0770 0730 0707 0755 0701; do
    mkdir -m $mode "$work/open$mode"
    check "our own run directory with mode $mode is refused" \
        refused "$work/open$mode" "directory $work/open$mode has mode $mode"
done
echo x >"$work/afile"
check "a run directory that is a file is refused" refused "$work/afile" "$work/afile is not a directory"
check "a run directory whose parent is missing is refused" \
    refused "$work/none/run" "$work/none/run"

# an explicit --socket does not need the run directory: served, unlisted, warned
try_serve "$work/squat" --socket="$work/x.sock"
check "--socket with a squatted run directory serves and says why it is not listed ($rc: $err)" \
    bash -c '[ "$0" = serving ] && grep -q "not listed.*owned by uid" <<<"$1" && [ -z "$2" ]' \
    "$rc" "$err" "$(ls -A "$work/squat")"

# ---- a run directory uraid makes is 0700 and ours ----
export URAID_RUN_DIR=$work/run
out=$("$URAID" status 2>&1)
check "status creates the missing run directory ($out)" grep -q "no array is being served" <<<"$out"
check "with mode 0700, owned by root" test "$(stat -c %a:%u "$URAID_RUN_DIR")" = 700:0
dead=$(( $(cat /proc/sys/kernel/pid_max) + 1 ))      # no process has it
: >"$URAID_RUN_DIR/$dead"
: >"$URAID_RUN_DIR/.$dead.0badf00d"
: >"$URAID_RUN_DIR/.$$.0badf00d"
"$URAID" status >/dev/null
check "status removes a dead server's entry and its half-written one, not a live one's" \
    bash -c '[ ! -e "$0/$1" ] && [ ! -e "$0/.$1.0badf00d" ] && [ -e "$0/.$2.0badf00d" ]' \
    "$URAID_RUN_DIR" $dead $$
rm -f "$URAID_RUN_DIR/.$$.0badf00d"

# ---- planted links at the pid file and the registry entry ----
echo original >"$work/victim"
echo original >"$work/victim-reg"
ln -s "$work/victim" "$work/p.pid"
ln -s "$work/victim-new" "$work/q.pid"
# the registry entry is named by the server's pid: the shell plants the links
# and then becomes the server (exec keeps the pid)
bash -c 'ln -s "$1" "$2/$$" && ln -s "$1" "$2/$$.tmp" && shift 2 && exec "$@"' _ \
    "$work/victim-reg" "$URAID_RUN_DIR" "$URAID" serve --threads=2 --socket="$work/a.sock" \
    --pid-file="$work/p.pid" "${m[@]}" >"$work/a.out" 2>"$work/a.err" &
spid=$!
for _ in $(seq 100); do [ -f "$work/p.pid" ] && [ ! -L "$work/p.pid" ] && break; sleep 0.1; done
check "the pid file replaced the link planted at its path: a file holding the pid" \
    bash -c '[ ! -L "$0" ] && [ -f "$0" ] && [ "$(cat "$0")" = "$1" ]' "$work/p.pid" "$spid"
check "the pid file is mode 0644" test "$(stat -c %a "$work/p.pid")" = 644
check "the registry entry is a file of its own, not the planted link" \
    bash -c '[ ! -L "$0" ] && [ -f "$0" ] && grep -qx "$1" "$0"' "$URAID_RUN_DIR/$spid" "$work/a.sock.ctl"
check "the links' targets are unchanged" \
    test "$(cat "$work/victim")" = original -a "$(cat "$work/victim-reg")" = original
out=$("$URAID" status 2>&1)
check "status lists the array ($out)" grep -q "^rd " <<<"$out"
# an entry that is a link (named by a live pid, 1) to a copy of the real one is not read
cp "$URAID_RUN_DIR/$spid" "$work/entry-copy"
ln -s "$work/entry-copy" "$URAID_RUN_DIR/1"
out=$("$URAID" status 2>&1)
check "a registry entry that is a symbolic link is not read (one array listed)" \
    test "$(grep -c "^rd " <<<"$out")" -eq 1
rm -f "$URAID_RUN_DIR/1"
"$URAID" stop rd >/dev/null || { cat "$work/a.err"; kill $spid; }
wait $spid; rc=$?
apid=$spid spid=
check "uraid stop stops it (exit $rc)" test $rc -eq 0
check "the pid file and the registry entry are gone" \
    bash -c '[ ! -e "$0" ] && [ ! -L "$0" ] && [ ! -e "$1" ]' "$work/p.pid" "$URAID_RUN_DIR/$apid"
check "the links' targets are still unchanged" \
    test "$(cat "$work/victim")" = original -a "$(cat "$work/victim-reg")" = original

PIDF=$work/q.pid try_serve "$URAID_RUN_DIR" --socket="$work/b.sock" --pid-file="$work/q.pid"
check "a dangling link at the pid file's path: no file made at its target ($rc)" \
    bash -c '[ "$0" = serving ] && [ ! -e "$1" ] && [ ! -L "$2" ]' "$rc" "$work/victim-new" "$work/q.pid"

# ---- planted links at the socket paths ----
ln -s "$work/victim" "$URAID_RUN_DIR/rd.sock"
try_serve "$URAID_RUN_DIR"
check "a link at the default export socket's path is refused ($rc: $err)" \
    bash -c '[ "$0" != serving ] && grep -q "not a socket" <<<"$1"' "$rc" "$err"
rm "$URAID_RUN_DIR/rd.sock"
ln -s "$work/victim" "$URAID_RUN_DIR/rd.sock.ctl"
try_serve "$URAID_RUN_DIR"
check "a link at the control socket's path is refused ($rc: $err)" \
    bash -c '[ "$0" != serving ] && grep -q "not a socket" <<<"$1" && [ ! -e "$2" ]' \
    "$rc" "$err" "$URAID_RUN_DIR/rd.sock"
rm "$URAID_RUN_DIR/rd.sock.ctl"
check "the link's target is unchanged after all" test "$(cat "$work/victim")" = original
try_serve "$URAID_RUN_DIR"
check "the defaults serve again once the links are gone ($rc: $err)" test "$rc" = serving

# ---- the defaults, in a private mount namespace with empty /run and /tmp ----
U=$((60000 + $$ % 5000))
if unshare -m true 2>/dev/null; then
    out=$(unshare -m env -u URAID_RUN_DIR -u XDG_RUNTIME_DIR U=$U OTHER=$OTHER URAID="$URAID" \
        bash -c '
set -u
mount -t tmpfs tmpfs /run || exit 1
cp "$URAID" /run/uraid-under-test && chmod 755 /run/uraid-under-test || exit 1
mount -t tmpfs tmpfs /tmp || exit 1
as_u() { setpriv --reuid=$U --regid=$U --clear-groups "$@"; }
r() { local o rc; o=$("${@:2}" 2>&1); rc=$?; echo "$1: $(tr "\n" " " <<<"$o")exit=$rc"; }
r root-create /run/uraid-under-test status
echo "root-dir: $(stat -c %a:%u /run/uraid)"
chown $OTHER /run/uraid && chmod 0777 /run/uraid
r root-squat /run/uraid-under-test status
r user-create as_u /run/uraid-under-test status
echo "user-dir: $(stat -c %a:%u /tmp/uraid-$U)"
rm -r /tmp/uraid-$U && mkdir -m 0777 /tmp/uraid-$U
r user-squat as_u /run/uraid-under-test status
mkdir -m 0700 /tmp/xdg && chown $U /tmp/xdg
r xdg-create as_u env XDG_RUNTIME_DIR=/tmp/xdg /run/uraid-under-test status
echo "xdg-dir: $(stat -c %a:%u /tmp/xdg/uraid)"
chmod 0777 /tmp/xdg/uraid
r xdg-open as_u env XDG_RUNTIME_DIR=/tmp/xdg /run/uraid-under-test status
' 2>&1)
    echo "$out" | sed 's/^/  ns: /'
    line() { grep "^$1: " <<<"$out"; }
    check "root: /run/uraid is made 0700, owned by root" \
        bash -c '[ "$0" = "root-dir: 700:0" ] && grep -q "exit=0" <<<"$1"' \
        "$(line root-dir)" "$(line root-create)"
    check "root: /run/uraid owned by uid $OTHER is refused" \
        grep -q "directory /run/uraid is owned by uid $OTHER, not you.*exit=1" <<<"$(line root-squat)"
    check "user $U: /tmp/uraid-$U is made 0700, owned by the user" \
        bash -c '[ "$0" = "user-dir: 700:$1" ] && grep -q "exit=0" <<<"$2"' \
        "$(line user-dir)" $U "$(line user-create)"
    check "user $U: /tmp/uraid-$U made by root, mode 0777, is refused" \
        grep -q "directory /tmp/uraid-$U is owned by uid 0, not you.*exit=1" <<<"$(line user-squat)"
    check "user $U: \$XDG_RUNTIME_DIR/uraid is made 0700" \
        bash -c '[ "$0" = "xdg-dir: 700:$1" ] && grep -q "exit=0" <<<"$2"' \
        "$(line xdg-dir)" $U "$(line xdg-create)"
    check "user $U: \$XDG_RUNTIME_DIR/uraid with mode 0777 is refused" \
        grep -q "directory /tmp/xdg/uraid has mode 0777.*exit=1" <<<"$(line xdg-open)"
else
    echo "no private mount namespace here (unshare -m failed): the default paths are not tried"
fi

echo "$fails failed"
[ $fails -eq 0 ]
