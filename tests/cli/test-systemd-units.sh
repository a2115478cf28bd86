#!/bin/bash
# The systemd units `make install` installs (systemd/): installed with DESTDIR
# into a temporary root, uraid's path adjusted to the one installed there,
# then `systemd-analyze verify` must pass with nothing to say (an unknown key
# is only a warning, so the output is checked too). The man page named in
# Documentation= is found through MANPATH in the same root.
set -u
BUILD=${BUILD:-build}
root_dir=$(cd "$(dirname "$0")/../.." && pwd)
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not installed (make deps)"; exit 77; }
work=$(mktemp -d /tmp/uraid-units.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
check() {
    local what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
# can systemd-analyze run here at all (it needs no running systemd for verify)?
printf '[Service]\nType=oneshot\nExecStart=/bin/true\n' >"$work/probe.service"
if ! out=$(systemd-analyze verify --man=no "$work/probe.service" 2>&1); then
    echo "systemd-analyze verify cannot run in this container: $out"
    exit 77
fi

make -s -C "$root_dir" install BUILD="$BUILD" DESTDIR="$work/root" PREFIX=/usr/local >/dev/null ||
    { echo "FAIL: make install"; exit 1; }
units=$work/root/usr/local/lib/systemd/system
check "both units installed" test -f "$units/uraid@.service" -a -f "$units/uraid-scan.service"
check "ExecStart names the installed uraid" grep -q "^ExecStart=/usr/local/sbin/uraid serve --scan --array=%I" \
    "$units/uraid@.service"
check "uraid@ is Type=notify" grep -q "^Type=notify" "$units/uraid@.service"
sed -i "s|/usr/local/sbin/uraid|$work/root/usr/local/sbin/uraid|g" "$units"/*.service
man_opt=()
command -v man >/dev/null || man_opt=(--man=no)
out=$(cd "$units" && MANPATH=$work/root/usr/local/share/man \
    systemd-analyze verify "${man_opt[@]}" ./uraid@.service ./uraid-scan.service 2>&1); rc=$?
echo "$out"
check "systemd-analyze verify passes" test $rc -eq 0
check "and says nothing" test -z "$out"

# the check can fail: a unit whose program is not there is refused
sed 's|^ExecStart=.*|ExecStart=/nonexistent/uraid serve --scan --array=%I|' "$units/uraid@.service" \
    >"$work/uraid-bad@.service"
out=$(cd "$work" && systemd-analyze verify --man=no ./uraid-bad@.service 2>&1); rc=$?
check "a unit with a missing program fails verify ($out)" test $rc -ne 0

# uraid-scan's list: one instance name per ARRAY line
cat >"$work/u.conf" <<'CONF'
DEVICE /nonexistent/*.img
ARRAY /dev/md/data uuid=3aaa0122:29827cfa:5331ad66:ca767371 export=data-nbd
ARRAY /dev/md/logs name=host:logs
ARRAY uuid=11111111:22222222:33333333:44444444
CONF
out=$("$BUILD/uraid" serve --list-arrays --config="$work/u.conf")
check "--list-arrays names each ARRAY (export=, name, uuid): $(echo $out)" \
    test "$out" = "$(printf 'data-nbd\nlogs\n11111111:22222222:33333333:44444444')"
echo "$fails failed"
[ $fails -eq 0 ]
