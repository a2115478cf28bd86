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
check "the three units installed" test -f "$units/uraid@.service" -a -f "$units/uraid-scan.service" \
    -a -f "$units/uraid-monitor.service"
check "ExecStart names the installed uraid" grep -q "^ExecStart=/usr/local/sbin/uraid serve --scan --array=%I" \
    "$units/uraid@.service"
check "uraid@ is Type=notify" grep -q "^Type=notify" "$units/uraid@.service"
sed -i "s|/usr/local/sbin/uraid|$work/root/usr/local/sbin/uraid|g" "$units"/*.service
man_opt=()
command -v man >/dev/null || man_opt=(--man=no)
out=$(cd "$units" && MANPATH=$work/root/usr/local/share/man \
    systemd-analyze verify "${man_opt[@]}" ./uraid@.service ./uraid-scan.service \
        ./uraid-monitor.service 2>&1); rc=$?
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

# uraid@: exit 2 (a wrong command line or configuration) is not retried, and is
# what serve exits with for those; other failures are retried a few times
check "uraid@ retries on failure, not on exit 2" bash -c "grep -qx 'Restart=on-failure' '$units/uraid@.service' &&
    grep -qx 'RestartPreventExitStatus=2' '$units/uraid@.service' && grep -q '^StartLimitBurst=' '$units/uraid@.service'"
"$BUILD/uraid" serve --scan --config="$work/u.conf" --array=data --bogus >/dev/null 2>&1
check "serve: an unknown option exits 2" test $? -eq 2
printf 'ARRAY name=x\n  colour=blue\n' >"$work/bad.conf"
"$BUILD/uraid" serve --scan --config="$work/bad.conf" --array=x >/dev/null 2>&1
check "serve: a wrong configuration file exits 2" test $? -eq 2
check "uraid@ does not wait for the deprecated udev-settle" bash -c "! grep -q udev-settle '$units'/*.service"

# uraid-scan's ExecStart, run with a systemctl that cannot start logs: it tries
# every name, names the one that failed and exits non-zero
mkdir "$work/bin"
printf '#!/bin/sh\necho "$*" >>"%s/started"\ncase "$*" in *logs*) exit 1;; esac\n' "$work" >"$work/bin/systemctl"
chmod +x "$work/bin/systemctl"
cmd=$(sed -n 's/^ExecStart=\/bin\/sh -c .\(.*\).$/\1/p' "$units/uraid-scan.service" | sed 's/\$\$/$/g' |
    sed "s|serve --list-arrays|serve --list-arrays --config=$work/u.conf|")
out=$(PATH=$work/bin:$PATH sh -c "$cmd" 2>&1); rc=$?
check "uraid-scan: a failed start makes it fail ($rc)" test $rc -ne 0
check "naming the unit ($out)" grep -q "cannot start uraid@logs.service" <<<"$out"
check "after trying the others" test "$(wc -l <"$work/started")" -eq 3
echo "$fails failed"
[ $fails -eq 0 ]
