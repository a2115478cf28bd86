#!/bin/bash
# Boot the Debian kernel under qemu, run a busybox-sh script in the guest with
# the given raw images (or nbd: URLs) attached as /dev/vda, /dev/vdb, ...
# Usage: tests/interop/guest.sh [-f FILE]... SCRIPT [DISK]...
# Prints the script's output; exits with its exit code (77: no kernel to be
# had, 124: timeout, 125: harness error). See README.md beside this file.
. "$(dirname "$0")/lib.sh"
if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    sed -n '2,6s/^# \{0,1\}//p' "$0"; exit 2
fi
interop_prepare || exit $?
interop_run "$@"
