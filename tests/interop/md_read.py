#!/usr/bin/env python3
"""Read the data of an md RAID 4/5/6 array straight from member images,
including one stopped in mid-reshape, without md or uraid: an independent
referee of what a reshape left on the members. Usage:

    md_read.py OUT IMAGE...          (members in slot order: the superblocks say)

Writes the array's contents to OUT, as many bytes as the smaller of the old and
the new geometry holds (what was there before a grow), and prints one line of
key=value facts.
The geometry comes from the superblocks (md_sb.py). In a forwards reshape,
array sectors below reshape_position are in the new geometry at
data_offset + new_offset, the rest in the old one at data_offset; in a
backwards reshape (feature 0x20) the sectors at or above it are in the new one.
Only the layouts md's reshapes use here: RAID 5 left/right-(a)symmetric,
parity-first/last and RAID 6 (left-symmetric, and the -6 layouts); a missing
member's chunks are computed from P (RAID 5, or RAID 6 with one missing).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import md_sb  # noqa: E402

RESHAPE_ACTIVE, BACKWARDS = 0x4, 0x20


def slot_of(level, layout, ndisks, row, k):
    """Member slot holding data chunk k of a row (md's raid5_compute_sector)."""
    if level == 4:
        return k
    if level == 6:
        if layout >= 16:                       # the -6 layouts: RAID 5 on n-1, Q last
            return slot_of(5, layout - 16, ndisks - 1, row, k)
        n = ndisks
        if layout not in (0, 1, 2, 3):
            raise SystemExit(f"md_read.py: RAID 6 layout {layout} not handled")
        pd = n - 1 - row % n if layout in (0, 2) else row % n
        if layout in (2, 3):                   # symmetric: data follows P and Q
            return (pd + 2 + k) % n
        if pd == n - 1:                        # asymmetric, P last: Q in slot 0
            return k + 1
        return k if k < pd else k + 2
    n = ndisks
    if layout == 4:                            # parity-first
        return k + 1
    if layout == 5:                            # parity-last
        return k
    pd = n - 1 - row % n if layout in (0, 2) else row % n
    if layout in (2, 3):                       # symmetric
        return (pd + 1 + k) % n
    return k if k < pd else k + 1             # asymmetric


def data_disks(level, ndisks):
    return ndisks - (2 if level == 6 else 1)


def read_sector_range(files, level, layout, chunk, ndisks, offset, start, count):
    """Array sectors [start, start+count) of one geometry, as bytes."""
    out = bytearray()
    dd = data_disks(level, ndisks)
    s = start
    while s < start + count:
        chunk_no, in_chunk = divmod(s, chunk)
        row, k = divmod(chunk_no, dd)
        n = min(chunk - in_chunk, start + count - s)
        slot = slot_of(level, layout, ndisks, row, k)
        f = files[slot]
        if f is None:
            raise SystemExit(f"md_read.py: slot {slot} is missing")
        f.seek((offset[slot] + row * chunk + in_chunk) * 512)
        out += f.read(n * 512)
        s += n
    return bytes(out)


def main():
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    out_path, images = sys.argv[1], sys.argv[2:]
    sbs = []
    for p in images:
        block = md_sb.find(p)
        if block is None:
            raise SystemExit(f"md_read.py: no superblock on {p}")
        sbs.append((md_sb.decode(block), p))
    sb0 = sbs[0][0]
    ndisks = sb0["raid_disks"]
    # a reshape to fewer members: the slots that go away are still read
    nslots = ndisks - min(sb0["delta_disks"], 0) if sb0["feature_map"] & RESHAPE_ACTIVE else ndisks
    files, off_old, off_new = [None] * nslots, [0] * nslots, [0] * nslots
    for sb, p in sbs:
        roles = [int(r, 16) for r in sb["roles"].split(",")]
        slot = roles[sb["dev_number"]]
        if slot >= nslots:
            continue
        files[slot] = open(p, "rb")
        off_old[slot] = sb["data_offset"]
        off_new[slot] = sb["data_offset"] + (sb["new_offset"] if sb["feature_map"] & 0x40 else 0)
    fm = sb0["feature_map"]
    new = (sb0["level"], sb0["layout"] if not fm & RESHAPE_ACTIVE else sb0["new_layout"],
           sb0["chunksize"] if not fm & RESHAPE_ACTIVE else sb0["new_chunk"], ndisks)
    old = (sb0["level"], sb0["layout"], sb0["chunksize"], ndisks - (sb0["delta_disks"] if fm & RESHAPE_ACTIVE else 0))
    per_member = sb0["size"]
    old_size = (per_member // old[2] * old[2]) * data_disks(old[0], old[3])
    new_size = (per_member // new[2] * new[2]) * data_disks(new[0], new[3])
    # md's rule (super_1_validate): fewer members always backwards; 0x20
    # (written only then) when the count stays
    delta = sb0["delta_disks"] if fm & RESHAPE_ACTIVE else 0
    backwards = delta < 0 or (delta == 0 and bool(fm & BACKWARDS))
    pos = sb0["reshape_position"] if fm & RESHAPE_ACTIVE else (0 if backwards else new_size)
    size = min(old_size, new_size)
    with open(out_path, "wb") as out:
        step = 2048
        for s in range(0, size, step):
            n = min(step, size - s)
            parts = []
            # split the step at the reshape position
            cut = min(max(pos, s), s + n)
            in_new_lo = not backwards
            lo, hi = (s, cut - s), (cut, s + n - cut)
            for (start, cnt), use_new in ((lo, in_new_lo), (hi, not in_new_lo)):
                if cnt <= 0:
                    continue
                g, offs = (new, off_new) if use_new else (old, off_old)
                parts.append(read_sector_range(files, g[0], g[1], g[2], g[3], offs, start, cnt))
            out.write(b"".join(parts))
    print(f"feature_map={fm:#x} reshape_position={pos} old={old} new={new} "
          f"old_size={old_size} new_size={new_size} wrote={size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
