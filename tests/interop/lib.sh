# shellcheck shell=bash
# Shared functions of the referee tests: boot Debian's kernel under qemu (TCG)
# with an initramfs holding busybox, mdadm and the md modules, attach images as
# virtio disks and run a busybox-sh script in the guest. Source this file from
# bash; see README.md beside it for usage.
#
#   interop_prepare          kernel + base initramfs in the cache (returns 77 when
#                            no kernel can be had, e.g. without network)
#   interop_run [-f FILE]... SCRIPT [DISK]...
#                            boot once, run SCRIPT, print its output, return its
#                            exit code (124 on timeout, 125 on a harness failure)
#   interop_tmpdir           INTEROP_TMP=a scratch dir under /tmp, removed at exit
#   interop_serving SEED     for tests that serve arrays before the boot: a
#                            scratch dir in $tmp (the run directory in it),
#                            $URAID, $SEED (URAID_SEED or SEED, printed), the
#                            helpers of tests/cli/lib/common.sh, serve NAME
#                            ARGS and stop NAME; at exit a server still
#                            running is stopped and the scratch dirs removed
#   interop_images DIR N SIZE  create N sparse raw images DIR/disk0.img ...

# depmod, modprobe and mdadm live in sbin, which a user's PATH may lack.
PATH=$PATH:/usr/sbin:/sbin
INTEROP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
INTEROP_REPO=$(cd "$INTEROP_DIR/../.." && pwd)
: "${BUILD:=build}"
case $BUILD in /*) ;; *) BUILD=$INTEROP_REPO/$BUILD ;; esac
INTEROP_CACHE=${URAID_INTEROP_CACHE:-$BUILD/interop/cache}
INTEROP_TIMEOUT=${URAID_INTEROP_TIMEOUT:-600}
INTEROP_MEM=${URAID_INTEROP_MEM:-1024}
INTEROP_SMP=${URAID_INTEROP_SMP:-2}
INTEROP_BOOT_TIMEOUT=${URAID_INTEROP_BOOT_TIMEOUT:-120}

# Modules the guest loads, in addition to whatever modules.dep says they need.
# crc32c_generic is named because libcrc32c only asks for it through a softdep.
INTEROP_MODULES="virtio_pci virtio_blk loop md-mod linear raid0 raid1 raid10 raid456
                 crc32c_generic libcrc32c"

interop_log() { echo "interop: $*" >&2; }

# ---- kernel -----------------------------------------------------------------

# Name of the versioned kernel package linux-image-amd64 points at, e.g.
# linux-image-6.1.0-57-amd64.
_interop_kpkg() {
    apt-cache depends linux-image-amd64 2>/dev/null |
        awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}

# Fetch the kernel package and keep only what the guest needs:
# $INTEROP_CACHE/kernel/<pkg>/{vmlinuz,release,modules/*.ko,load.list}.
# load.list holds one module file name per line in loading order.
_interop_fetch_kernel() {
    local pkg=$1 dest=$INTEROP_CACHE/kernel/$1 work deb rel m
    work=$(mktemp -d "$INTEROP_CACHE/fetch.XXXXXX") || return 125
    if ! (cd "$work" && apt-get -o Acquire::Retries=0 download "$pkg" >download.log 2>&1); then
        # A stale package list names a version the archive no longer has;
        # refresh once (needs root) and retry.
        if [ "$(id -u)" = 0 ] && apt-get update -qq >/dev/null 2>&1 &&
           pkg=$(_interop_kpkg) && [ -n "$pkg" ] &&
           (cd "$work" && apt-get -o Acquire::Retries=0 download "$pkg" >download.log 2>&1); then
            dest=$INTEROP_CACHE/kernel/$pkg
        else
            sed 's/^/    /' "$work/download.log" >&2
            rm -rf "$work"
            return 77
        fi
    fi
    deb=$(ls "$work"/*.deb)
    dpkg-deb -x "$deb" "$work/x" || { rm -rf "$work"; return 125; }
    rel=$(ls "$work/x/lib/modules")
    # Debian builds modules.dep in the postinst; make it for the unpacked tree.
    depmod -b "$work/x" "$rel" || { rm -rf "$work"; return 125; }
    rm -rf "$dest.new"; mkdir -p "$dest.new/modules"
    cp "$work/x/boot/vmlinuz-$rel" "$dest.new/vmlinuz"
    echo "$rel" >"$dest.new/release"
    # Loading order as modprobe would do it: dependencies and softdeps first.
    # -C /dev/null keeps the host's modprobe.d options (mdadm's start_ro=1) out.
    # shellcheck disable=SC2086
    modprobe -C /dev/null -d "$work/x" -S "$rel" -a --show-depends $INTEROP_MODULES |
        awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' >"$work/order" ||
        { rm -rf "$work" "$dest.new"; return 125; }
    while read -r m; do
        local base=${m##*/} out
        out=${base%.ko*}.ko
        # busybox insmod wants plain ELF: decompress .ko.xz / .ko.zst / .ko.gz here.
        case $base in
            *.ko)     cp "$m" "$dest.new/modules/$out" ;;
            *.ko.xz)  xz -dc "$m" >"$dest.new/modules/$out" ;;
            *.ko.zst) zstd -qdc "$m" >"$dest.new/modules/$out" ;;
            *.ko.gz)  gzip -dc "$m" >"$dest.new/modules/$out" ;;
            *) interop_log "unknown module format: $m"; rm -rf "$work" "$dest.new"; return 125 ;;
        esac || { rm -rf "$work" "$dest.new"; return 125; }
        echo "$out" >>"$dest.new/load.list"
    done <"$work/order"
    basename "$deb" >"$dest.new/package"
    echo $INTEROP_MODULES >"$dest.new/modules.wanted"
    rm -rf "$work" "$dest"
    mv "$dest.new" "$dest"
    echo "$dest"
}

# Unpack vmlinuz (a bzImage) into an ELF vmlinux beside it. qemu boots that
# through its PVH entry point (Debian sets CONFIG_PVH), which skips the BIOS
# and the in-guest decompression: about 2.5 s less per boot under TCG. Best
# effort: without it the bzImage is booted.
_interop_vmlinux() {
    local k=$1 off magic cmd
    [ -s "$k/vmlinux" ] && return 0
    for magic in xz zstd gzip; do
        case $magic in
            xz)   off=$(LC_ALL=C grep -obUa $'\xfd7zXZ\x00' "$k/vmlinuz" | head -n1); cmd="xz -dc" ;;
            zstd) off=$(LC_ALL=C grep -obUa $'\x28\xb5\x2f\xfd' "$k/vmlinuz" | head -n1); cmd="zstd -qdc" ;;
            gzip) off=$(LC_ALL=C grep -obUa $'\x1f\x8b\x08' "$k/vmlinuz" | head -n1); cmd="gzip -dc" ;;
        esac
        [ -n "$off" ] || continue
        # The payload is followed by other data; the decompressor's complaint
        # about it is expected, so judge by the result.
        tail -c +$((${off%%:*} + 1)) "$k/vmlinuz" | $cmd >"$k/vmlinux.tmp" 2>/dev/null
        # Keep it only when it is an ELF file with a PVH entry note (type 0x12).
        if [ "$(head -c4 "$k/vmlinux.tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] &&
           { ! command -v readelf >/dev/null || readelf -n "$k/vmlinux.tmp" | grep -q 'type: (0x00000012)'; }; then
            mv "$k/vmlinux.tmp" "$k/vmlinux"; return 0
        fi
    done
    rm -f "$k/vmlinux.tmp"
    interop_log "no PVH vmlinux in vmlinuz; booting the bzImage (slower)"
    : >"$k/vmlinux.none"
}

# Sets INTEROP_KDIR. Prefers the kernel the package list names; without network
# falls back to any kernel already in the cache.
_interop_kernel() {
    local pkg rc
    pkg=$(_interop_kpkg)
    # A cached kernel is reused when it was unpacked for the same module list.
    if [ -n "$pkg" ] && [ -s "$INTEROP_CACHE/kernel/$pkg/load.list" ] &&
       [ "$(cat "$INTEROP_CACHE/kernel/$pkg/modules.wanted" 2>/dev/null)" = "$(echo $INTEROP_MODULES)" ]; then
        INTEROP_KDIR=$INTEROP_CACHE/kernel/$pkg; return 0
    fi
    if [ -n "$pkg" ]; then
        interop_log "downloading $pkg into $INTEROP_CACHE"
        INTEROP_KDIR=$(_interop_fetch_kernel "$pkg"); rc=$?
        [ $rc = 0 ] && return 0
    else
        rc=77; interop_log "apt-cache knows no linux-image-amd64 (run apt-get update)"
    fi
    INTEROP_KDIR=$(ls -d "$INTEROP_CACHE"/kernel/linux-image-*/ 2>/dev/null | tail -n1)
    if [ -n "$INTEROP_KDIR" ] && [ -s "$INTEROP_KDIR/load.list" ]; then
        INTEROP_KDIR=${INTEROP_KDIR%/}
        interop_log "download failed; using cached $(basename "$INTEROP_KDIR")"
        return 0
    fi
    [ $rc = 77 ] && echo "SKIP: cannot download the Debian kernel package (no network to the archive?)"
    return $rc
}

# ---- initramfs ----------------------------------------------------------------

# The guest's /init. Kernel command line: uraid.disks=N (disks to wait for).
_interop_init_script() {
    cat <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/sbin:/bin HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm /dev/pts /run /tmp /host
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /run/mdadm
hostname uraid-guest
# Keep the console for the script's output; kernel messages stay in dmesg
# (unless uraid.debug is on the command line: URAID_INTEROP_DEBUG=1).
grep -q uraid.debug /proc/cmdline || dmesg -n 1
while read -r m; do
    insmod "/lib/modules/$m" 2>/tmp/insmod.err ||
        echo "uraid-init: insmod $m failed: $(cat /tmp/insmod.err)"
done </lib/modules/load.list
want=0
for a in $(cat /proc/cmdline); do
    case $a in uraid.disks=*) want=${a#uraid.disks=} ;; esac
done
# virtio disks are probed while virtio_pci loads; devtmpfs nodes may lag a bit.
i=0
while [ "$(ls /sys/block | grep -c '^vd')" -lt "$want" ] && [ $i -lt 100 ]; do
    sleep 0.1; i=$((i + 1))
done
n=0
for d in /sys/block/vd*; do
    [ -e "$d" ] || continue
    s=$(cat "$d/serial" 2>/dev/null)
    # Each drive carries serial uraidK; the name must match the command-line order.
    [ "$s" = "uraid$n" ] || echo "uraid-init: ${d##*/} has serial '$s', expected uraid$n"
    n=$((n + 1))
done
[ $n -eq "$want" ] || echo "uraid-init: found $n virtio disks, expected $want"
echo "@@URAID-BEGIN $(cut -d' ' -f1 /proc/uptime)@@"
cd /tmp
sh /run.sh </dev/null 2>&1
rc=$?
echo "@@URAID-EXIT $rc $(cut -d' ' -f1 /proc/uptime)@@"
sync
poweroff -f
EOF
}

# Copy an executable and the shared libraries ldd lists into root $1.
_interop_add_binary() {
    local root=$1 bin=$2 lib
    mkdir -p "$root$(dirname "$bin")"
    cp -L "$bin" "$root$bin"
    for lib in $(ldd "$bin" | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}

# Sets INTEROP_BASE (the base initramfs). Rebuilt when the kernel, its module
# list, busybox, mdadm or /init change.
_interop_initramfs() {
    local key root busybox mdadm
    busybox=$(command -v busybox) mdadm=$(command -v mdadm)
    [ -x /bin/busybox ] && busybox=/bin/busybox
    if [ -z "$busybox" ] || [ -z "$mdadm" ] || ! command -v cpio >/dev/null; then
        echo "SKIP: need busybox-static, mdadm and cpio (scripts/deps.sh)"; return 77
    fi
    key=$( { cat "$INTEROP_KDIR/package" "$INTEROP_KDIR/load.list"; _interop_init_script
             sha256sum "$busybox" "$mdadm"; } |
           sha256sum | cut -c1-16)
    INTEROP_BASE=$INTEROP_CACHE/initramfs-$key.cpio.gz
    [ -s "$INTEROP_BASE" ] && return 0
    interop_log "building $INTEROP_BASE"
    root=$(mktemp -d "$INTEROP_CACHE/root.XXXXXX") || return 125
    mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,etc,host,lib/modules}
    cp -L "$busybox" "$root/bin/busybox"
    _interop_add_binary "$root" "$mdadm"
    [ "$mdadm" = /sbin/mdadm ] || cp -L "$mdadm" "$root/sbin/mdadm"
    cp "$INTEROP_KDIR"/modules/*.ko "$INTEROP_KDIR/load.list" "$root/lib/modules/"
    _interop_init_script >"$root/init"
    chmod 755 "$root/init"
    : >"$root/etc/mdadm.conf"
    rm -f "$INTEROP_CACHE"/initramfs-*.cpio.gz
    (cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) \
        >"$INTEROP_BASE.tmp" && mv "$INTEROP_BASE.tmp" "$INTEROP_BASE"
    local rc=$?
    rm -rf "$root"
    return $rc
}

# Make sure kernel and base initramfs are in the cache. Returns 0, 77 (skip:
# the line saying why is on stdout) or another code on error.
interop_prepare() {
    [ -n "$INTEROP_BASE" ] && [ -s "$INTEROP_BASE" ] && return 0
    local t
    for t in qemu-system-x86_64 apt-get apt-cache dpkg-deb depmod modprobe cpio gzip timeout flock; do
        command -v "$t" >/dev/null ||
            { echo "SKIP: $t not installed (run scripts/deps.sh)"; return 77; }
    done
    mkdir -p "$INTEROP_CACHE" || return 125
    INTEROP_CACHE=$(cd "$INTEROP_CACHE" && pwd)
    # One preparer at a time; a second test waits and then finds the cache ready.
    exec {INTEROP_LOCKFD}>"$INTEROP_CACHE/.lock"
    flock "$INTEROP_LOCKFD"
    local rc=0
    _interop_kernel && { [ -e "$INTEROP_KDIR/vmlinux.none" ] || _interop_vmlinux "$INTEROP_KDIR"; } &&
        _interop_initramfs || rc=$?
    flock -u "$INTEROP_LOCKFD"; exec {INTEROP_LOCKFD}>&-
    return $rc
}

# ---- running ------------------------------------------------------------------

# Sets INTEROP_TMP to a fresh dir under /tmp, removed when the shell exits.
# (Not for $(...): the subshell's exit would remove it at once.)
interop_tmpdir() {
    INTEROP_TMP=$(mktemp -d /tmp/uraid-interop.XXXXXX) || return 1
    INTEROP_TMPDIRS+=("$INTEROP_TMP")
    trap 'rm -rf "${INTEROP_TMPDIRS[@]}"' EXIT
}

interop_serving() {
    interop_tmpdir || exit 1
    tmp=$INTEROP_TMP
    URAID=$BUILD/uraid
    export URAID_RUN_DIR=$tmp/run
    SEED=${URAID_SEED:-$1}
    echo "seed $SEED"
    # shellcheck source=../cli/lib/common.sh
    . "$INTEROP_DIR/../cli/lib/common.sh"
    spid=
    trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; wait; rm -rf "${INTEROP_TMPDIRS[@]}"' EXIT
    serve() { serve_bg "$tmp" "$@"; }   # serve NAME ARGS...
    stop() { stop_served "$1"; }
}

interop_images() {
    local dir=$1 n=$2 size=$3 i
    for ((i = 0; i < n; i++)); do
        rm -f "$dir/disk$i.img"
        truncate -s "$size" "$dir/disk$i.img" || return 1
    done
}

# interop_run [-f FILE]... SCRIPT [DISK]...
# FILEs are copied into the guest's /host/. A DISK is a raw image path or a
# qemu "nbd:..." URL, attached read-only with a "ro:" prefix (needed for a
# read-only export); the first is /dev/vda (serial uraid0), then /dev/vdb...
# Prints the guest script's output on stdout, timings on stderr; returns the
# script's exit code. URAID_INTEROP_CONSOLE=FILE keeps the raw console log.
interop_run() {
    local files=() script disks=() work drives=() i=0 d rc
    while [ "${1:-}" = -f ]; do files+=("$2"); shift 2; done
    script=$1; shift || { interop_log "usage: interop_run [-f FILE]... SCRIPT [DISK]..."; return 125; }
    disks=("$@")
    [ -r "$script" ] || { interop_log "no script $script"; return 125; }
    interop_prepare || return $?
    work=$(mktemp -d /tmp/uraid-guest.XXXXXX) || return 125
    # The script (and files) travel as a second cpio archive appended to the
    # base one; the kernel unpacks both into the same rootfs.
    mkdir -p "$work/root/host"
    cp "$script" "$work/root/run.sh"
    for d in "${files[@]}"; do cp "$d" "$work/root/host/" || { rm -rf "$work"; return 125; }; done
    (cd "$work/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/run.cpio.gz"
    cat "$INTEROP_BASE" "$work/run.cpio.gz" >"$work/initrd"
    for d in "${disks[@]}"; do
        local ro=""
        case $d in
            ro:*) d=${d#ro:}; ro=",readonly=on" ;;
        esac
        case $d in
            nbd:*) ;;
            *) [ -w "$d" ] || { interop_log "disk $d: not a writable file"; rm -rf "$work"; return 125; } ;;
        esac
        drives+=(-drive "file=${d//,/,,},format=raw,if=none,id=d$i,cache=unsafe$ro"
                 -device "virtio-blk-pci,drive=d$i,serial=uraid$i")
        i=$((i + 1))
    done
    # A boot that never reaches the script (seen once in many: an empty
    # console until the timeout) is retried once; the disks are untouched then.
    _interop_boot "$work" "$i" "${drives[@]}"
    if [ "$INTEROP_STATUS" = noboot ]; then
        interop_log "no boot within $INTEROP_BOOT_TIMEOUT s; retrying once. Console:"
        tail -n 30 "$work/console" | sed 's/^/    /' >&2
        _interop_boot "$work" "$i" "${drives[@]}"
    fi
    [ -n "$URAID_INTEROP_CONSOLE" ] && cp "$work/console" "$URAID_INTEROP_CONSOLE"
    rc=$INTEROP_STATUS
    case $rc in
        noboot|timeout|noexit)
            case $rc in
                noboot)  interop_log "guest did not reach the script within $INTEROP_BOOT_TIMEOUT s"; rc=124 ;;
                timeout) interop_log "guest timed out after $INTEROP_TIMEOUT s"; rc=124 ;;
                noexit)  interop_log "guest ended without an exit marker"; rc=125 ;;
            esac
            interop_log "last console lines:"
            tail -n 30 "$work/console" | sed 's/^/    /' >&2
            sed 's/^/    qemu: /' "$work/qemu.err" >&2 ;;
    esac
    rm -rf "$work"
    return "$rc"
}

# One boot: _interop_boot WORKDIR NDISKS QEMU-DRIVE-ARGS...
# Streams the script's output to stdout, keeps the raw console in
# WORKDIR/console, sets INTEROP_STATUS to the script's exit code, or to noboot
# (no BEGIN marker within INTEROP_BOOT_TIMEOUT), timeout or noexit.
_interop_boot() {
    local work=$1 ndisks=$2 t0 t_begin="" line pending="" status="" qpid rc
    local kernel=$INTEROP_KDIR/vmlinuz
    [ -s "$INTEROP_KDIR/vmlinux" ] && kernel=$INTEROP_KDIR/vmlinux
    shift 2
    t0=$EPOCHREALTIME
    exec {INTEROP_RAWFD}>"$work/console"
    # qemu's stdout is the serial console; exec makes $! qemu's timeout process.
    exec {INTEROP_CONFD}< <(exec timeout -k 10 "$INTEROP_TIMEOUT" qemu-system-x86_64 \
        -accel tcg -cpu max -m "$INTEROP_MEM" -smp "$INTEROP_SMP" \
        -nodefaults -no-user-config -display none -no-reboot \
        -serial stdio -kernel "$kernel" -initrd "$work/initrd" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off raid=noautodetect uraid.disks=$ndisks${URAID_INTEROP_DEBUG:+ loglevel=7 uraid.debug}" \
        "$@" </dev/null 2>"$work/qemu.err")
    qpid=$!
    # Strip CRs, keep the raw log, pass on only what lies between the BEGIN
    # and EXIT markers. read -t lets the boot deadline be checked; a line cut
    # by the timeout is kept in $pending and completed by the next read.
    while :; do
        if IFS= read -r -t 2 -u "$INTEROP_CONFD" line; then
            line=$pending$line; pending=""
        else
            [ $? -gt 128 ] || break          # EOF: qemu is gone
            pending=$pending$line
            if [ -z "$t_begin" ] && [ "$(_interop_secs "$t0" "$EPOCHREALTIME" | cut -d. -f1)" -ge "$INTEROP_BOOT_TIMEOUT" ]; then
                status=noboot; kill "$qpid" 2>/dev/null
            fi
            continue
        fi
        line=${line%$'\r'}
        printf '%s\n' "$line" >&"$INTEROP_RAWFD"
        case $line in
            @@URAID-BEGIN*@@)
                t_begin=$EPOCHREALTIME
                line=${line#@@URAID-BEGIN }
                interop_log "booted in $(_interop_secs "$t0" "$t_begin") s (guest uptime ${line%@@} s)"
                ;;
            *@@URAID-EXIT*@@)
                # The script's last line may lack its newline: keep what precedes.
                [ -n "$t_begin" ] && [ -n "${line%%@@URAID-EXIT*}" ] && printf '%s\n' "${line%%@@URAID-EXIT*}"
                status=${line##*@@URAID-EXIT }; status=${status%% *}
                ;;
            *) [ -n "$t_begin" ] && [ -z "$status" ] && printf '%s\n' "$line" ;;
        esac
    done
    [ -n "$pending" ] && printf '%s\n' "${pending%$'\r'}" >&"$INTEROP_RAWFD"
    wait "$qpid"; rc=$?
    exec {INTEROP_CONFD}<&- {INTEROP_RAWFD}>&-
    if [ -z "$status" ]; then
        if [ $rc = 124 ] || [ $rc = 137 ]; then status=timeout; else status=noexit; fi
    elif [ "$status" != noboot ]; then
        interop_log "guest script exit $status; total $(_interop_secs "$t0" "$EPOCHREALTIME") s" \
            "(script and poweroff $(_interop_secs "${t_begin:-$t0}" "$EPOCHREALTIME") s)"
    fi
    INTEROP_STATUS=$status
}

# Seconds between two $EPOCHREALTIME values, one decimal.
_interop_secs() {
    local a=${1/[.,]/} b=${2/[.,]/}
    local ms=$(( (10#$b - 10#$a) / 1000 ))
    printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}
