#!/usr/bin/env python3
"""Referee, both ways, in one boot of the real md driver (tests/interop/lib.sh).

A. Arrays made on the host by `uraid create` (and, for most, filled by
   tests/tools/fill_array with a seeded pattern and P/Q computed by liburaid)
   are assembled by Linux md. md must start them with the size uraid examine
   computes, clean, return exactly the pattern (md5 of the whole array), and its
   `check` must find mismatch_cnt 0. Then md's own rewritten superblocks are
   read back by uraid examine and compared with the guest's mdadm --examine.
B. Arrays mdadm creates in the guest (every level, several layouts, bitmaps,
   spare trick, missing and failed members) are read by uraid examine on the
   host with the same fields mdadm reports in the guest.

Members travel in one bundle disk (/dev/vda): the guest copies each into a
tmpfs file and attaches it to a loop device, so a boot is not limited by the
number of virtio disks. Usage: uraid_md.py BUILD_DIR WORKDIR [SEED]
"""
import hashlib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import compare_examine as cmp  # noqa: E402

BUILD, WORK = os.path.abspath(sys.argv[1]), sys.argv[2]
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 20261129
URAID = os.path.join(BUILD, "uraid")
FILL = os.path.join(BUILD, "tests", "tools", "fill_array")
ENGINE_IO = os.path.join(BUILD, "tests", "tools", "engine_io")
PATTERN_SEED = 4242
PATTERN_MIB = 40
MIB = 1 << 20
cmp.URAID, cmp.WORK = URAID, WORK
failures = []


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=kw.pop("text", True), **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: exit {p.returncode}: {p.stderr}")
    return p.stdout


class Bundle:
    """Member images packed at MiB offsets into one sparse disk image."""

    def __init__(self, path):
        self.path, self.next_mib = path, 0
        open(path, "wb").close()

    def reserve(self, size_mib):
        off, self.next_mib = self.next_mib, self.next_mib + size_mib
        return off

    def put(self, off_mib, image):
        with open(image, "rb") as src, open(self.path, "r+b") as dst:
            i = 0
            while True:
                block = src.read(MIB)
                if not block:
                    break
                if block.count(0) != len(block):
                    dst.seek((off_mib + i) * MIB)
                    dst.write(block)
                i += 1

    def get(self, off_mib, size_mib, image):
        with open(self.path, "rb") as src, open(image, "wb") as dst:
            src.seek(off_mib * MIB)
            dst.write(src.read(size_mib * MIB))

    def finish(self):
        with open(self.path, "r+b") as f:
            f.truncate(self.next_mib * MIB)


# ---- A: uraid creates, md checks -------------------------------------------------

A_CASES = []


def a_case(name, level, n, args=(), size=6, sizes=None, missing=(), fill=True, clean=True,
           resync=False, engine=False, fail=()):
    """engine: the pattern goes through uraid's engine (engine_io), which first
    fails the slots in `fail` as pulled drives; otherwise fill_array writes it."""
    A_CASES.append(dict(name=name, level=level, n=n, args=list(args), sizes=sizes or [size] * n,
                        missing=set(missing), fill=fill, clean=clean, resync=resync,
                        engine=engine, fail=set(fail)))


for lay in ("left-asymmetric", "right-asymmetric", "left-symmetric", "right-symmetric",
            "parity-first", "parity-last"):
    a_case(f"raid5 {lay}", 5, 4, [f"--layout={lay}", "--chunk=64K"])
for lay in ("left-asymmetric", "right-asymmetric", "left-symmetric", "right-symmetric",
            "parity-first", "parity-last", "ddf-zero-restart", "ddf-N-restart",
            "ddf-N-continue", "left-asymmetric-6", "right-asymmetric-6", "left-symmetric-6",
            "right-symmetric-6", "parity-first-6"):
    a_case(f"raid6 {lay}", 6, 5, [f"--layout={lay}", "--chunk=64K"])
a_case("raid6 4 disks", 6, 4, ["--chunk=32K"])
a_case("raid6 7 disks 1.0 bitmap", 6, 7, ["--chunk=16K", "--metadata=1.0", "--bitmap=internal"])
a_case("raid5 3 disks 1.1 bitmap", 5, 3, ["--chunk=128K", "--metadata=1.1", "--bitmap=internal"])
a_case("raid4", 4, 3, ["--chunk=64K"])
a_case("raid1 3 disks bitmap", 1, 3, ["--bitmap=internal"])
for lay, n in (("n2", 4), ("f2", 4), ("o2", 4), ("n2", 3), ("f2", 5), ("o3", 5), ("n3", 3),
               ("f3", 4)):
    a_case(f"raid10 {lay} {n} disks", 10, n, [f"--layout={lay}", "--chunk=32K"])
a_case("raid0", 0, 3, ["--chunk=64K"])
a_case("raid0 unequal original", 0, 3, ["--chunk=64K"], sizes=[4, 6, 8])
a_case("raid0 unequal alternate", 0, 3, ["--chunk=64K", "--layout=alternate"], sizes=[4, 6, 8])
a_case("linear unequal 1.0", "linear", 3, ["--metadata=1.0"], sizes=[4, 6, 5])
a_case("raid5 degraded", 5, 4, ["--chunk=64K"], missing=[1])
a_case("raid6 two missing", 6, 5, ["--chunk=64K"], missing=[0, 3])
a_case("raid1 degraded", 1, 2, [], missing=[0])
a_case("raid10 degraded", 10, 4, ["--chunk=64K"], missing=[1, 2])
a_case("raid5 zeroes, born clean", 5, 4, ["--chunk=64K"], fill=False, clean=False)
# The same judged on what uraid's engine wrote, healthy and run degraded.
for name, level, n, args, fail in (
        ("raid5 ls", 5, 4, ["--chunk=64K"], ()),
        ("raid5 ra", 5, 5, ["--chunk=16K", "--layout=right-asymmetric"], ()),
        ("raid5 parity-first 1.0", 5, 3, ["--chunk=32K", "--layout=parity-first", "--metadata=1.0"], ()),
        ("raid4", 4, 4, ["--chunk=64K"], ()),
        ("raid6 ls", 6, 5, ["--chunk=64K"], ()),
        ("raid6 ddf-N-continue", 6, 6, ["--chunk=16K", "--layout=ddf-N-continue"], ()),
        ("raid6 left-symmetric-6", 6, 5, ["--chunk=32K", "--layout=left-symmetric-6"], ()),
        ("raid6 parity-first-6 1.1", 6, 4, ["--chunk=64K", "--layout=parity-first-6", "--metadata=1.1"], ()),
        ("raid1 3 disks", 1, 3, [], ()),
        ("raid10 n2", 10, 4, ["--chunk=32K"], ()),
        ("raid10 f2", 10, 5, ["--chunk=32K", "--layout=f2"], ()),
        ("raid10 o2", 10, 4, ["--chunk=64K", "--layout=o2"], ()),
        ("raid0 unequal", 0, 3, ["--chunk=64K"], ()),
        ("linear", "linear", 2, [], ()),
        ("raid5 ran degraded", 5, 4, ["--chunk=64K"], (2,)),
        ("raid6 ran with two lost", 6, 5, ["--chunk=64K"], (0, 3)),
        ("raid1 ran degraded", 1, 2, [], (0,)),
        ("raid10 ran degraded", 10, 4, ["--chunk=32K"], (1,))):
    a_case(f"engine {name}", level, n, args, sizes=[4, 6, 5][:n] if level == 0 else None,
           engine=True, fail=fail)
a_case("raid6 needs resync", 6, 4, ["--chunk=64K"], fill=False, clean=False, resync=True)


def prepare_a(bundle, script):
    for i, c in enumerate(A_CASES):
        d = os.path.join(WORK, f"a{i}")
        os.makedirs(d)
        paths = []
        for k, s in enumerate(c["sizes"]):
            p = os.path.join(d, f"m{k}.img")
            with open(p, "wb") as f:
                f.truncate(s * MIB)
            paths.append(p)
        if c["resync"]:   # something on the members: uraid must ask for a resync
            with open(paths[0], "r+b") as f:
                f.seek(5 * MIB)
                f.write(os.urandom(8192))
        devs = ["missing" if k in c["missing"] else p for k, p in enumerate(paths)]
        present = [p for k, p in enumerate(paths) if k not in c["missing"]]
        flags = ["--assume-clean"] if c["clean"] else []
        res = json.loads(sh([URAID, "create", "--json", f"--level={c['level']}",
                             f"--raid-devices={c['n']}", *c["args"], *flags, *devs]))
        c["array_sectors"] = res["array_bytes"] // 512
        c["uuid"] = res["array_uuid"]
        if c["engine"]:
            sh([ENGINE_IO, "write", f"--seed={SEED + i}",
                *[f"--fail={k}" for k in sorted(c["fail"])], *present])
        elif c["fill"]:
            sh([FILL, f"--seed={SEED + i}", *present])
        if c["fill"]:
            emitted = subprocess.run([FILL, f"--seed={SEED + i}", "--emit", *present],
                                     capture_output=True, check=True).stdout
            c["md5"] = hashlib.md5(emitted).hexdigest()
        c["members"] = []
        for k, p in enumerate(paths):
            if k in c["missing"]:
                continue
            off = bundle.reserve(c["sizes"][k])
            bundle.put(off, p)
            c["members"].append((k, off, c["sizes"][k], p))
        redundant = c["level"] not in (0, "linear")
        degraded = bool(c["missing"] or c["fail"])
        script.append(f'echo "@@A {i}"')
        script.append("a_case " + " ".join(f"{off}:{size}" for _, off, size, _ in c["members"]))
        script.append(f'a_report {1 if c["fill"] else 0} {1 if redundant and not degraded else 0} '
                      f'{1 if c["resync"] else 0}')
        script.append("a_end " + " ".join(f"{off}:{size}" for _, off, size, _ in c["members"]))


A_FUNCS = r'''
loops=""
attach() {   # attach OFF_MIB:SIZE_MIB... -> loops
    loops=""; j=0
    for m in "$@"; do
        off=${m%:*}; size=${m#*:}
        dd if=/dev/vda of=/tmp/w/m$j.img bs=1M skip=$off count=$size 2>/dev/null
        l=$(losetup -f); losetup "$l" /tmp/w/m$j.img; loops="$loops $l"; j=$((j + 1))
    done
}
detach_back() {   # write the members back to the bundle (md rewrote the superblocks)
    j=0
    for m in "$@"; do
        off=${m%:*}; size=${m#*:}
        dd if=/tmp/w/m$j.img of=/dev/vda bs=1M seek=$off conv=notrunc 2>/dev/null
        j=$((j + 1))
    done
    for l in $loops; do losetup -d "$l"; done
    rm -f /tmp/w/*.img; sync
}
a_case() {
    mkdir -p /tmp/w; attach "$@"
    # shellcheck disable=SC2086
    mdadm --assemble --run /dev/md0 $loops >/tmp/assemble.log 2>&1 ||
        { echo "assemble=failed"; sed 's/^/  /' /tmp/assemble.log; return 0; }
    echo "assemble=ok"
}
a_report() {   # FILLED CHECKABLE RESYNC
    [ -e /sys/block/md0/md ] || return 0
    if [ "$3" = 1 ]; then
        sleep 1; mdadm --wait /dev/md0 >/dev/null 2>&1
        echo "last_sync=$(cat /sys/block/md0/md/last_sync_action)"
    fi
    echo "size=$(blockdev --getsz /dev/md0)"
    echo "array_state=$(cat /sys/block/md0/md/array_state)"
    echo "degraded=$(cat /sys/block/md0/md/degraded 2>/dev/null || echo 0)"
    echo "sync_action=$(cat /sys/block/md0/md/sync_action 2>/dev/null || echo none)"
    [ "$1" = 1 ] && echo "md5=$(md5sum </dev/md0 | cut -d' ' -f1)"
    if [ "$2" = 1 ]; then
        echo check >/sys/block/md0/md/sync_action; sleep 0.5
        mdadm --wait /dev/md0 >/dev/null 2>&1
        echo "checked=$(cat /sys/block/md0/md/last_sync_action)"
        echo "mismatch_cnt=$(cat /sys/block/md0/md/mismatch_cnt)"
    fi
    mdadm --stop /dev/md0 >/dev/null 2>&1 || echo "stop=failed"
    for l in $loops; do echo "@@EXAMINE $l"; mdadm --examine "$l"; done
}
a_end() { detach_back "$@"; echo "@@END"; }
'''


def check_a(out, bundle):
    for i, c in enumerate(A_CASES):
        m = re.search(rf"^@@A {i}\n(.*?)^@@END", out, re.S | re.M)
        if not m:
            failures.append(f"A {c['name']}: no result from the guest")
            continue
        body = m.group(1)
        kv = dict(re.findall(r"^(\w+)=(\S*)$", body, re.M))
        errs = []
        want = {"assemble": "ok", "size": str(c["array_sectors"]),
                "array_state": "clean", "degraded": str(len(c["missing"]) + len(c["fail"]))}
        if c.get("md5"):
            want["md5"] = c["md5"]
        if c["level"] not in (0, "linear") and not c["missing"] and not c["fail"]:
            want["checked"] = "check"
            want["mismatch_cnt"] = "0"
        if c["resync"]:
            want["last_sync"] = "resync"
        elif c["level"] not in (0, "linear"):
            want["sync_action"] = "idle"   # md found nothing to resync at start
        for k, v in want.items():
            if kv.get(k) != v:
                errs.append(f"{k}: md says {kv.get(k)!r}, expected {v!r}")
        # md's rewritten superblocks, read by uraid examine vs the guest's mdadm.
        exams = re.findall(r"^@@EXAMINE (\S+)\n(.*?)(?=^@@EXAMINE|\Z)", body, re.S | re.M)
        for (k, off, size, path), (_, text) in zip(c["members"], exams):
            if k in c["fail"]:
                continue   # pulled by the engine: its superblock is from before
            bundle.get(off, size, path)
            u = json.loads(sh([URAID, "examine", "--json", path]))[0]
            n0 = len(cmp.failures)
            cmp.compare_fields(f"A {c['name']} (after md)", path, cmp.parse_mdadm(text), u)
            if u["superblock"] != "valid":
                errs.append(f"{path}: uraid examine after md: {u.get('problem')}")
            errs += cmp.failures[n0:]
        if errs:
            failures.extend(f"A {c['name']}: {e}" for e in errs)
        else:
            print(f"ok A {c['name']}: md assembled {kv['size']} sectors clean"
                  + (", data identical" if c.get("md5") else "")
                  + (", mismatch_cnt 0" if "mismatch_cnt" in want else "")
                  + (f", degraded {want['degraded']}" if want["degraded"] != "0" else "")
                  + f"; {len(exams)} md superblocks agree")


# ---- B: md creates, uraid examines -------------------------------------------------

B_ALL = [
    # name, members (MiB each), mdadm create arguments (members appended), after
    ("raid5 default (spare trick)", [12] * 4, "--level=5 --raid-devices=4", ""),
    ("raid6 ddf-N-continue", [12] * 5, "--level=6 --raid-devices=5 --layout=ddf-N-continue --chunk=64", ""),
    ("raid1 bitmap", [12] * 2, "--level=1 --raid-devices=2 --bitmap=internal", "write"),
    ("raid10 f2 1.0", [12] * 4, "--level=10 --raid-devices=4 --layout=f2 --metadata=1.0", ""),
    ("raid10 o3 5 disks", [12] * 5, "--level=10 --raid-devices=5 --layout=o3 --chunk=32", ""),
    ("raid0 unequal", [8, 12, 16], "--level=0 --raid-devices=3 --chunk=64", ""),
    ("linear", [8, 12], "--level=linear --raid-devices=2", ""),
    ("raid4 1.1 bitmap", [12] * 3, "--level=4 --raid-devices=3 --metadata=1.1 --bitmap=internal --chunk=128", "write"),
    ("raid5 missing", [12] * 3, "--level=5 --raid-devices=3 @missing2", ""),
    ("raid5 with spare", [12] * 4, "--level=5 --raid-devices=3 --spare-devices=1 --assume-clean", ""),
    ("raid1 failed member", [12] * 3, "--level=1 --raid-devices=3 --bitmap=internal", "fail"),
    ("raid6 dirty stop", [12] * 4, "--level=6 --raid-devices=4 --chunk=64", "dirty"),
]
# URAID_MD_ONLY=REGEX runs only the cases whose names match (for debugging).
ONLY = re.compile(os.environ.get("URAID_MD_ONLY", ""))
A_CASES[:] = [c for c in A_CASES if ONLY.search(c["name"])]
B_CASES = [c for c in B_ALL if ONLY.search(c[0])]

B_FUNCS = r'''
b_case() {   # AFTER ARGS... -- OFF:SIZE...
    after=$1; shift; args=""
    while [ "$1" != -- ]; do args="$args $1"; shift; done; shift
    mkdir -p /tmp/w; loops=""; j=0
    for m in "$@"; do
        truncate -s "${m#*:}M" /tmp/w/m$j.img
        l=$(losetup -f); losetup "$l" /tmp/w/m$j.img; loops="$loops $l"; j=$((j + 1))
    done
    devs=$loops
    case $args in *@missing2*) args=${args%@missing2*}; set -- $loops; devs="$1 $2 missing" ;; esac
    # shellcheck disable=SC2086
    mdadm --create /dev/md0 --run --quiet $args $devs >/tmp/create.log 2>&1 ||
        { echo "create=failed"; sed 's/^/  /' /tmp/create.log; }
    mdadm --wait /dev/md0 >/dev/null 2>&1
    # md writes the pattern over the whole array (dd stops at its end); later
    # writes repeat parts of it, so the array always holds the pattern's start.
    dd if=/host/pattern.bin of=/dev/md0 bs=1M conv=fsync 2>/dev/null
    mdadm --wait /dev/md0 >/dev/null 2>&1
    echo "md_md5=$(md5sum </dev/md0 | cut -d' ' -f1)"
    case $after in
        write) dd if=/host/pattern.bin of=/dev/md0 bs=64k count=16 skip=3 seek=3 conv=fsync,notrunc 2>/dev/null ;;
        fail) set -- $loops; mdadm /dev/md0 --fail "$2" >/dev/null 2>&1
              dd if=/host/pattern.bin of=/dev/md0 bs=64k count=4 conv=fsync,notrunc 2>/dev/null ;;
    esac
    if [ "$after" = dirty ]; then
        # A crash image: copy the members while md holds the array active
        # (safe mode would mark it clean again after 200 ms of quiet).
        echo 3600 >/sys/block/md0/md/safe_mode_delay
        dd if=/host/pattern.bin of=/dev/md0 bs=4k count=1 conv=fsync,notrunc 2>/dev/null
        echo "dirty_state=$(cat /sys/block/md0/md/array_state)"
        j=0
        for l in $loops; do cp /tmp/w/m$j.img /tmp/w/s$j.img; j=$((j + 1)); done
        mdadm --stop /dev/md0 >/dev/null 2>&1
        j=0
        for l in $loops; do
            # back into the same file, so that the loop device shows the snapshot
            dd if=/tmp/w/s$j.img of=/tmp/w/m$j.img conv=notrunc 2>/dev/null
            rm /tmp/w/s$j.img
            echo "@@EXAMINE $l"; mdadm --examine "$l"; j=$((j + 1))
        done
        return 0
    fi
    mdadm --stop /dev/md0 >/dev/null 2>&1 || echo "stop=failed"
    for l in $loops; do
        echo "@@EXAMINE $l"; mdadm --examine "$l"
        if mdadm --examine "$l" | grep -q 'Internal Bitmap'; then
            echo "@@BITMAP $l"; mdadm --examine-bitmap "$l"
        fi
    done
}
'''


def prepare_b(bundle, script):
    for i, (name, sizes, args, after) in enumerate(B_CASES):
        members = [(bundle.reserve(s), s) for s in sizes]
        spec = " ".join(f"{o}:{s}" for o, s in members)
        script.append(f'echo "@@B {i}"')
        script.append(f"b_case '{after or 'none'}' {args} -- {spec}")
        script.append(f"detach_back {spec}")
        script.append('echo "@@END"')


def check_b(out, bundle):
    for i, (name, sizes, args, after) in enumerate(B_CASES):
        m = re.search(rf"^@@B {i}\n(.*?)^@@END", out, re.S | re.M)
        if not m or "create=failed" in m.group(1):
            failures.append(f"B {name}: mdadm in the guest failed: "
                            f"{m.group(1)[:400] if m else 'no output'}")
            continue
        body = m.group(1)
        exams = re.findall(r"^@@EXAMINE (\S+)\n(.*?)(?=^@@EXAMINE|^@@BITMAP|\Z)", body, re.S | re.M)
        bitmaps = dict(re.findall(r"^@@BITMAP (\S+)\n(.*?)(?=^@@EXAMINE|^@@BITMAP|\Z)", body,
                                  re.S | re.M))
        off = sum(len(c[1]) for c in B_CASES[:i])
        errs, shown = [], 0
        for k, (loop, text) in enumerate(exams):
            o, s = bundle_offsets_b[off + k]
            path = os.path.join(WORK, f"b{i}m{k}.img")
            bundle.get(o, s, path)
            res = subprocess.run([URAID, "examine", "--json", path], capture_output=True, text=True)
            u = json.loads(res.stdout)[0]
            if "No md superblock" in text:
                if u["superblock"] != "none":
                    errs.append(f"member {k}: mdadm sees no superblock, uraid {u['superblock']}")
                continue
            if u["superblock"] != "valid":
                errs.append(f"member {k}: uraid examine says {u.get('problem')}")
                continue
            n0 = len(cmp.failures)
            cmp.compare_fields(f"B {name}", path, cmp.parse_mdadm(text), u)
            if loop in bitmaps:
                bm = cmp.parse_mdadm(bitmaps[loop])
                b = u["bitmap"] or {}
                mm = re.match(r"(\d+) bits \(chunks\), (\d+) dirty", bm.get("Bitmap", ""))
                for what, a, v in (("bitmap events", int(bm["Events"]), b.get("events")),
                                   ("bitmap events cleared", int(bm["Events Cleared"]),
                                    b.get("events_cleared")),
                                   ("bitmap bits", int(mm.group(1)), b.get("bits")),
                                   ("bitmap dirty", int(mm.group(2)), b.get("dirty_bits"))):
                    cmp.expect(f"B {name}", path, what, a, v)
            errs += cmp.failures[n0:]
            shown += 1
        if not exams:
            errs.append("the guest printed no mdadm --examine")
        else:
            errs += compare_placement(i, name, sizes, args, exams)
            errs += engine_reads(i, body, exams)
        if errs:
            failures.extend(f"B {name}: {e}" for e in errs)
        else:
            print(f"ok B {name}: {shown} members, uraid examine agrees with mdadm in the guest,"
                  " uraid create places everything where mdadm did, uraid reads md's data")


# Fields that say where mdadm put things; uraid create must choose the same.
PLACEMENT = ("Feature Map", "Avail Dev Size", "Used Dev Size", "Array Size", "Data Offset",
             "Super Offset", "Internal Bitmap", "Bad Block Log", "Layout", "Chunk Size",
             "Raid Level", "Raid Devices")


def compare_placement(i, name, sizes, args, exams):
    """Create the same array with uraid on the host and compare placement with mdadm's."""
    d = os.path.join(WORK, f"p{i}")
    os.makedirs(d)
    paths = []
    for k, size in enumerate(sizes):
        p = os.path.join(d, f"m{k}.img")
        with open(p, "wb") as f:
            f.truncate(size * MIB)
        paths.append(p)
    devs = list(paths)
    argv = args.split()
    if "@missing2" in argv:
        argv.remove("@missing2")
        devs = paths[:2] + ["missing"]
    res = subprocess.run([URAID, "create", *argv, *devs], capture_output=True, text=True)
    if res.returncode != 0:
        return [f"uraid create {' '.join(argv)} refused what mdadm created: {res.stderr.strip()}"]
    errs = []
    for k, (loop, text) in enumerate(exams):
        if "No md superblock" in text or devs[k] == "missing":
            continue
        md = cmp.parse_mdadm(text)
        ours = cmp.parse_mdadm(sh([URAID, "examine", devs[k]]))
        for f in PLACEMENT:
            a, b = md.get(f), ours.get(f)
            if f == "Feature Map" and a and b:   # per-device state bits aside
                a, b = hex(int(a, 16) & ~0x92), hex(int(b, 16) & ~0x92)
            if a != b:
                errs.append(f"member {k}: {f}: mdadm created {a!r}, uraid creates {b!r}")
    return errs


def engine_reads(i, body, exams):
    """uraid's engine reads back what md wrote: the pattern, byte for byte."""
    paths = [os.path.join(WORK, f"b{i}m{k}.img") for k, (_, text) in enumerate(exams)
             if "No md superblock" not in text]
    res = subprocess.run([ENGINE_IO, "read", *paths], capture_output=True)
    if res.returncode != 0:
        return [f"engine_io read: {res.stderr.decode().strip()}"]
    data = res.stdout
    with open(PATTERN_FILE, "rb") as f:
        want = f.read(len(data))
    if len(want) < len(data):
        return [f"array of {len(data)} bytes is larger than the pattern"]
    if data != want:
        first = next(k for k in range(0, len(data), 512) if data[k:k + 512] != want[k:k + 512])
        return [f"uraid reads sector {first // 512} differently from what md wrote"]
    m = re.search(r"^md_md5=(\w+)", body, re.M)
    if m and m.group(1) != hashlib.md5(data).hexdigest():
        return ["md's own read of the array differs from the pattern"]
    return []


PATTERN_FILE = None
bundle_offsets_b = []


def main():
    os.makedirs(WORK, exist_ok=True)
    print(f"uraid_md: seed {SEED}")
    bundle = Bundle(os.path.join(WORK, "bundle.img"))
    script = ["set -u", A_FUNCS, B_FUNCS]
    prepare_a(bundle, script)
    start_b = bundle.next_mib
    prepare_b(bundle, script)
    o = start_b
    for _, sizes, _, _ in B_CASES:
        for s in sizes:
            bundle_offsets_b.append((o, s))
            o += s
    bundle.finish()
    global PATTERN_FILE
    PATTERN_FILE = os.path.join(WORK, "pattern.bin")
    with open(PATTERN_FILE, "wb") as f:
        f.write(subprocess.run([ENGINE_IO, "pattern", f"--seed={PATTERN_SEED}",
                                str(PATTERN_MIB * MIB)], capture_output=True, check=True).stdout)
    guest = os.path.join(WORK, "guest.sh")
    with open(guest, "w") as f:
        f.write("\n".join(script) + "\n")
    p = subprocess.run(["bash", "-c", '. "$0/lib.sh" && interop_run -f "$3" "$1" "$2"', HERE,
                        guest, bundle.path, PATTERN_FILE], capture_output=True, text=True,
                       env=dict(os.environ, BUILD=BUILD))
    sys.stderr.write(p.stderr)
    if p.returncode == 77:
        print(p.stdout)
        return 77
    out = p.stdout
    if p.returncode != 0:
        print(out[-3000:])
        print(f"FAIL: guest exit {p.returncode}")
        return 1
    with open(os.path.join(BUILD, "test-logs", "uraid_md.guest.txt"), "w") as f:
        f.write(out)   # kept for a look when something fails
    check_a(out, bundle)
    check_b(out, bundle)
    for f in failures:
        print("FAIL", f)
    print(f"{len(A_CASES)} uraid->md cases, {len(B_CASES)} md->uraid cases, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
