#!/usr/bin/env python3
"""Edit fields of an md 1.x superblock or of its bitmap header in a member
image, as an attacker would, and fix the superblock checksum afterwards so
that only checks beyond the checksum can catch the change.

  md_craft.py IMAGE [sb.FIELD=VALUE ...] [bm.FIELD=VALUE ...] [copy-bitmap=SECTOR]

FIELD names are those of md_p.h / md-bitmap.h (data_offset, bitmap_offset,
chunksize, events, sync_size, ...; ppl_offset and ppl_size for md's ppl.offset
and ppl.size, where bitmap_offset is). VALUE is a Python integer literal; a
negative value is stored as two's complement of the field's width.
copy-bitmap=SECTOR copies the member's valid bitmap header to absolute
SECTOR first (then bm.* edits apply to the copy if bitmap_offset is moved
there). Prints nothing; exits non-zero when no superblock is found.
"""
import struct
import sys

SB_FIELDS = {   # name: (offset, struct format)
    "feature_map": (8, "<I"), "level": (72, "<I"), "layout": (76, "<I"),
    "size": (80, "<Q"), "chunksize": (88, "<I"), "raid_disks": (92, "<I"),
    "bitmap_offset": (96, "<I"), "ppl_offset": (96, "<H"), "ppl_size": (98, "<H"),
    "data_offset": (128, "<Q"), "data_size": (136, "<Q"),
    "super_offset": (144, "<Q"), "recovery_offset": (152, "<Q"), "dev_number": (160, "<I"),
    "bblog_shift": (185, "<B"), "bblog_size": (186, "<H"), "bblog_offset": (188, "<I"),
    "events": (200, "<Q"), "resync_offset": (208, "<Q"), "max_dev": (220, "<I"),
}
BM_FIELDS = {
    "version": (4, "<I"), "events": (24, "<Q"), "events_cleared": (32, "<Q"),
    "sync_size": (40, "<Q"), "state": (48, "<I"), "chunksize": (52, "<I"),
    "daemon_sleep": (56, "<I"),
}
MAGIC = 0xa92b4efc


def checksum(sb):
    max_dev = min(struct.unpack_from("<I", sb, 220)[0], 1920)
    n = 256 + 2 * max_dev
    total = 0
    i = 0
    while i + 4 <= n:
        if i != 216:
            total += struct.unpack_from("<I", sb, i)[0]
        i += 4
    if n - i == 2:
        total += struct.unpack_from("<H", sb, i)[0]
    return ((total & 0xffffffff) + (total >> 32)) & 0xffffffff


def find_sb(f, size):
    sectors = size // 512
    for at in (8, 0, ((sectors - 16) & ~7) if sectors >= 16 else -1):
        if at < 0:
            continue
        f.seek(at * 512)
        blk = f.read(4096)
        if len(blk) == 4096 and struct.unpack_from("<I", blk, 0)[0] == MAGIC:
            return at, bytearray(blk)
    return None, None


def put(buf, fields, name, value):
    off, fmt = fields[name]
    bits = struct.calcsize(fmt) * 8
    struct.pack_into(fmt, buf, off, value & ((1 << bits) - 1))


def s32(v):
    return v - (1 << 32) if v & 0x80000000 else v


def main():
    path, edits = sys.argv[1], sys.argv[2:]
    with open(path, "r+b") as f:
        f.seek(0, 2)
        at, sb = find_sb(f, f.tell())
        if at is None:
            sys.exit("no md superblock in " + path)
        for e in [e for e in edits if e.startswith("copy-bitmap=")]:
            src = at + s32(struct.unpack_from("<I", sb, 96)[0])
            f.seek(src * 512)
            head = f.read(512)
            f.seek(int(e.split("=", 1)[1], 0) * 512)
            f.write(head)
        for e in edits:
            key, value = e.split("=", 1)
            if key.startswith("sb."):
                put(sb, SB_FIELDS, key[3:], int(value, 0))
        struct.pack_into("<I", sb, 216, checksum(sb))
        f.seek(at * 512)
        f.write(sb)
        bm_edits = [e for e in edits if e.startswith("bm.")]
        if bm_edits:
            bm_at = at + s32(struct.unpack_from("<I", sb, 96)[0])
            f.seek(bm_at * 512)
            head = bytearray(f.read(512))
            for e in bm_edits:
                key, value = e.split("=", 1)
                put(head, BM_FIELDS, key[3:], int(value, 0))
            f.seek(bm_at * 512)
            f.write(head)


main()
