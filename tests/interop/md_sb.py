#!/usr/bin/env python3
"""Raw fields of an md 1.x superblock, read straight from a member image.

The referee tests use it to see what md (or uraid) left on the members without
going through either program's examine: reshape_position in array sectors, the
signed new_offset, the feature bits. Usage:

    md_sb.py IMAGE [FIELD...]

Without FIELDs it prints every field as key=value on one line; with FIELDs it
prints their values, one per line. The superblock is looked for at 4 KiB
(1.2), then at the start (1.1) and near the end (1.0). Exit 1 with one line
on stderr when no superblock is found.
"""
import os
import struct
import sys

MAGIC = 0xA92B4EFC
# name, struct format, byte offset (the md 1.x superblock layout)
FIELDS = [
    ("magic", "I", 0), ("major_version", "I", 4), ("feature_map", "I", 8),
    ("level", "i", 72), ("layout", "I", 76), ("size", "Q", 80), ("chunksize", "I", 88),
    ("raid_disks", "I", 92), ("bitmap_offset", "i", 96), ("new_level", "i", 100),
    ("reshape_position", "Q", 104), ("delta_disks", "i", 112), ("new_layout", "I", 116),
    ("new_chunk", "I", 120), ("new_offset", "i", 124), ("data_offset", "Q", 128),
    ("data_size", "Q", 136), ("super_offset", "Q", 144), ("recovery_offset", "Q", 152),
    ("dev_number", "I", 160), ("utime", "Q", 192), ("events", "Q", 200),
    ("resync_offset", "Q", 208), ("max_dev", "I", 220),
]
HEX = {"magic", "feature_map", "resync_offset"}


def find(path):
    size = os.path.getsize(path)
    candidates = [4096, 0]
    if size >= 12 * 1024:
        candidates.append(((size >> 9) - 16 & ~7) << 9)   # 1.0: 8 KiB from the end, 4 KiB aligned
    with open(path, "rb") as f:
        for off in candidates:
            f.seek(off)
            block = f.read(1024)
            if len(block) == 1024 and struct.unpack_from("<I", block, 0)[0] == MAGIC:
                return block
    return None


def decode(block):
    sb = {name: struct.unpack_from("<" + fmt, block, off)[0] for name, fmt, off in FIELDS}
    n = min(sb["max_dev"], 384)
    roles = list(struct.unpack_from("<%dH" % n, block, 256))
    while roles and roles[-1] == 0xFFFF:      # unused slots at the end
        roles.pop()
    sb["roles"] = ",".join("%x" % r for r in roles)
    return sb


def main():
    if len(sys.argv) < 2:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    block = find(sys.argv[1])
    if block is None:
        print(f"md_sb.py: no md 1.x superblock on {sys.argv[1]}", file=sys.stderr)
        return 1
    sb = decode(block)
    if len(sys.argv) > 2:
        for name in sys.argv[2:]:
            if name not in sb:
                print(f"md_sb.py: no field {name}", file=sys.stderr)
                return 1
            print(hex(sb[name]) if name in HEX else sb[name])
    else:
        print(" ".join(f"{k}={hex(v) if k in HEX else v}" for k, v in sb.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
