#!/usr/bin/env python3
"""Referee: `mdadm --examine` (and `mdadm --examine-bitmap` through a read-only
loop device) against `uraid examine --json`, field by field, for arrays that
`uraid create` makes across levels, layouts, metadata versions, bitmap choices,
missing members and spares.

Usage: compare_examine.py URAID WORKDIR
Exit 0 when every field of every member agrees, 1 otherwise, 77 if mdadm is
not installed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

URAID = WORK = None   # set by main() or by a referee that imports this module
MIB = 1 << 20
ENV = dict(os.environ, TZ="UTC")
failures = []
checked = 0


def run(cmd, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return p


def parse_mdadm(text):
    """'   Key : value' lines of mdadm --examine into a dict."""
    fields = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z' ]+?) : (.*)$", line)
        if m:
            fields[m.group(1).strip()] = m.group(2).strip()
    return fields


def sectors(v):
    return int(v.split()[0])


def expect(case, member, what, mdadm_value, uraid_value):
    global checked
    checked += 1
    if mdadm_value != uraid_value:
        failures.append(f"{case} {os.path.basename(member)}: {what}: mdadm {mdadm_value!r}, "
                        f"uraid {uraid_value!r}")


def ctime_text(epoch):
    return time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(epoch))


def compare_member(case, path, u):
    compare_fields(case, path, parse_mdadm(run(["mdadm", "--examine", path]).stdout), u)
    if u["bitmap"] is not None:
        compare_bitmap(case, path, u["bitmap"])


def compare_fields(case, path, md, u):
    """Every field mdadm --examine printed (parsed into md) against uraid's JSON u."""
    e = lambda what, a, b: expect(case, path, what, a, b)
    csum = md["Checksum"].split()
    e("checksum correct", "correct" in md["Checksum"], True)
    e("checksum", csum[0], u["checksum"]["found"].lstrip("0") or "0")
    e("version", md["Version"], u["version"])
    e("feature map", int(md["Feature Map"], 16), u["feature_map"])
    e("array uuid", md["Array UUID"], u["array_uuid"])
    e("name", md["Name"].split("  (local")[0], u["name"])
    e("creation time", md["Creation Time"], ctime_text(u["creation_time_s"]))
    e("update time", md["Update Time"], ctime_text(u["update_time_s"]))
    e("level", md["Raid Level"], u["level"])
    e("raid devices", int(md["Raid Devices"]), u["raid_devices"])
    e("avail dev size", sectors(md["Avail Dev Size"]) * 512, u["avail_dev_bytes"])
    if "Array Size" in md:
        e("array size", int(md["Array Size"].split()[0]) * 1024, u["array_bytes"])
    used = sectors(md["Used Dev Size"]) if "Used Dev Size" in md else None
    if used is not None:
        e("used dev size", used * 512, u["used_dev_bytes"])
    e("data offset", sectors(md.get("Data Offset", "0")) * 512, u["data_offset_bytes"])
    e("super offset", sectors(md["Super Offset"]) * 512, u["super_offset_bytes"])
    if "Recovery Offset" in md:
        e("recovery offset", sectors(md["Recovery Offset"]) * 512, u["recovery_offset_bytes"])
    else:
        e("recovery offset", None, u["recovery_offset_bytes"])
    # mdadm leaves "Unused Space" out when there is none on either side
    m = re.match(r"before=(\d+) sectors, after=(\d+) sectors",
                 md.get("Unused Space", "before=0 sectors, after=0 sectors"))
    e("unused before", int(m.group(1)) * 512, u["unused_before_bytes"])
    e("unused after", int(m.group(2)) * 512, u["unused_after_bytes"])
    e("state", md["State"], u["state"])
    e("device uuid", md["Device UUID"], u["device_uuid"])
    if "Internal Bitmap" in md:
        e("bitmap offset", int(md["Internal Bitmap"].split()[0]) * 512, u["bitmap_offset_bytes"])
    else:
        e("bitmap offset", None, u["bitmap_offset_bytes"])
    m = re.match(r"(\d+) entries available at offset (-?\d+) sectors", md.get("Bad Block Log", ""))
    e("bblog entries", int(m.group(1)) if m else 0, u["bad_block_log"]["entries"])
    if m:
        e("bblog offset", int(m.group(2)) * 512, u["bad_block_log"]["offset_bytes"])
    e("events", int(md["Events"]), u["events"])
    if "Layout" in md:
        e("layout", md["Layout"], u["layout"])
    if "Chunk Size" in md:
        e("chunk", int(md["Chunk Size"].rstrip("K")) * 1024, u["chunk_bytes"])
    role = md["Device Role"]
    if role.startswith("Active device"):
        e("role", int(role.split()[-1]), u["role_number"])
    else:
        e("role", "spare", u["device_role"])
    e("array state", md["Array State"].split()[0], u["array_state"])


def compare_bitmap(case, path, b):
    """mdadm -X reads an internal bitmap only from a device, so use a loop device."""
    if os.geteuid() != 0 or not shutil.which("losetup"):
        return
    p = run(["losetup", "-r", "-f", "--show", path], check=False)
    if p.returncode != 0:
        return
    loop = p.stdout.strip()
    try:
        md = parse_mdadm(run(["mdadm", "--examine-bitmap", loop], check=False).stdout)
    finally:
        run(["losetup", "-d", loop], check=False)
    e = lambda what, a, v: expect(case, path, what, a, v)
    e("bitmap version", int(md["Version"]), b["version"])
    e("bitmap events", int(md["Events"]), b["events"])
    e("bitmap events cleared", int(md["Events Cleared"]), b["events_cleared"])
    m = re.match(r"(\d+)", md["Sync Size"])
    e("bitmap sync size", int(m.group(1)) * 1024, b["sync_bytes"])
    m = re.match(r"(\d+) bits \(chunks\), (\d+) dirty", md["Bitmap"])
    e("bitmap bits", int(m.group(1)), b["bits"])
    e("bitmap dirty", int(m.group(2)), b["dirty_bits"])
    e("bitmap daemon sleep", md["Daemon"].split()[0], f"{b['daemon_sleep_s']}s")


def make_images(n, size_mib, sizes=None):
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    paths = []
    for i in range(n):
        p = os.path.join(WORK, f"m{i}.img")
        with open(p, "wb") as f:
            f.truncate((sizes[i] if sizes else size_mib) * MIB)
        paths.append(p)
    return paths


def case(name, level, n, args=(), size_mib=40, sizes=None, missing=(), spares=0, write=False):
    paths = make_images(n + spares, size_mib, sizes)
    if write:   # non-zero data: the array is born needing a resync
        for p in paths:
            with open(p, "r+b") as f:
                f.seek(3 * MIB)
                f.write(b"\xa5" * 4096)
    devs = ["missing" if i in missing else p for i, p in enumerate(paths)]
    cmd = [URAID, "create", f"--level={level}", f"--raid-devices={n}", *args]
    if spares:
        cmd.append(f"--spare-devices={spares}")
    run(cmd + devs)
    present = [p for i, p in enumerate(paths) if i not in missing]
    out = json.loads(run([URAID, "examine", "--json", *present]).stdout)
    for path, u in zip(present, out):
        compare_member(name, path, u)
    print(f"ok {name}: {len(present)} members")


R5 = ["left-asymmetric", "right-asymmetric", "left-symmetric", "right-symmetric",
      "parity-first", "parity-last"]
R6 = R5 + ["ddf-zero-restart", "ddf-N-restart", "ddf-N-continue", "left-asymmetric-6",
           "right-asymmetric-6", "left-symmetric-6", "right-symmetric-6", "parity-first-6"]


def main():
    global URAID, WORK
    URAID, WORK = sys.argv[1], sys.argv[2]
    if not shutil.which("mdadm"):
        print("SKIP: mdadm is not installed")
        return 77
    for meta in ("1.0", "1.1", "1.2"):
        for bitmap in ("none", "internal"):
            m = [f"--metadata={meta}", f"--bitmap={bitmap}"]
            case(f"raid1 {meta} {bitmap}", 1, 2, m)
            case(f"raid5 {meta} {bitmap}", 5, 4, m + ["--chunk=64K"])
            case(f"raid6 {meta} {bitmap}", 6, 5, m)
            case(f"raid10 {meta} {bitmap}", 10, 4, m)
            case(f"raid4 {meta} {bitmap} dirty", 4, 3, m, write=True)
        case(f"raid0 {meta}", 0, 3, [f"--metadata={meta}"], sizes=[24, 40, 40])
        case(f"linear {meta}", "linear", 2, [f"--metadata={meta}"], sizes=[24, 40])
    for lay in R5:
        case(f"raid5 {lay}", 5, 5, [f"--layout={lay}", "--chunk=128K"])
    for lay in R6:
        case(f"raid6 {lay}", 6, 6, [f"--layout={lay}", "--chunk=32K"])
    for lay in ("n2", "f2", "o2", "n3", "f3", "o3"):
        case(f"raid10 {lay} 5 disks", 10, 5, [f"--layout={lay}", "--chunk=64K"])
    case("raid0 alternate", 0, 3, ["--layout=alternate", "--chunk=64K"], sizes=[24, 40, 56])
    case("raid5 missing", 5, 4, [], missing=(2,))
    case("raid6 two missing", 6, 5, [], missing=(0, 3))
    case("raid1 missing + spare", 1, 3, ["--bitmap=internal"], missing=(1,), spares=1)
    case("raid5 spares dirty", 5, 3, [], spares=2, write=True)
    case("raid10 n2 3 disks", 10, 3, ["--chunk=16K"])
    case("raid1 named", 1, 2, ["--name=data", "--homehost=<none>"])
    case("raid5 given size", 5, 3, ["--size=20M"])
    case("raid5 large bitmap", 5, 3, ["--bitmap=internal", "--bitmap-chunk=64K"], size_mib=300)
    for f in failures:
        print("MISMATCH", f)
    print(f"{checked} fields compared, {len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
