#!/bin/sh
# Install what uraid's build and tests need from Debian's archive. Idempotent:
# does nothing when every package is already installed.
set -e
PKGS="build-essential liburing-dev libisal-dev mdadm qemu-system-x86 qemu-utils
      busybox-static cpio xz-utils zstd kmod e2fsprogs util-linux python3 fio
      libnbd-bin libnbd-dev nbdkit fuse3 chromium fonts-dejavu-core libgnutls28-dev gnutls-bin strace
      prometheus"
PKGS="$PKGS systemd"    # systemd-analyze verify of the units (tests/cli/test-systemd-units.sh)
PKGS="$PKGS gdisk fdisk"    # sgdisk -p/-v, sfdisk --dump read the pools' GPTs (tests/cli/test-pool.sh)
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "uraid: missing packages:$missing; run 'sudo make deps'" >&2
    exit 1
fi
echo "uraid: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
