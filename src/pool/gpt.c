// SPDX-License-Identifier: MIT
/* Reading and writing a GUID partition table (gpt.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/hex.h"
#include "common/full_io.h"
#include "pool/le.h"
#include "pool/gpt.h"

static const uint8_t gpt_signature[8] = { 'E', 'F', 'I', ' ', 'P', 'A', 'R', 'T' };
#define GPT_REVISION 0x00010000u
#define MBR_TYPE_PROTECTIVE 0xee

uint32_t gpt_crc32(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t crc = 0xffffffffu;

	/* bitwise: a table is 16 KiB, read or written a handful of times */
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

void gpt_guid_text(const uint8_t g[16], char out[37])
{
	snprintf(out, 37, "%08" PRIx32 "-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", le_get32(g),
		 (unsigned)(g[4] | g[5] << 8), (unsigned)(g[6] | g[7] << 8), g[8], g[9], g[10],
		 g[11], g[12], g[13], g[14], g[15]);
}

int gpt_guid_parse(const char *t, uint8_t g[16])
{
	/* text byte order: the first three fields are printed most significant first */
	static const int order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	unsigned byte = 0;

	if (strlen(t) != 36)
		return -EINVAL;
	for (unsigned i = 0; i < 36;) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (t[i++] != '-')
				return -EINVAL;
			continue;
		}
		int v = uraid_hex_digits(t + i, 2);
		if (v < 0)
			return -EINVAL;
		g[order[byte++]] = (uint8_t)v;
		i += 2;
	}
	return 0;
}

bool gpt_guid_zero(const uint8_t g[16])
{
	for (int i = 0; i < 16; i++)
		if (g[i])
			return false;
	return true;
}

int gpt_guid_random(uint8_t g[16])
{
	if (getrandom(g, 16, 0) != 16)
		return -EIO;
	g[7] = (uint8_t)((g[7] & 0x0f) | 0x40);     /* version 4 (little-endian field) */
	g[8] = (uint8_t)((g[8] & 0x3f) | 0x80);     /* RFC 4122 variant */
	return 0;
}

/* Where the backup's entries start: the 32 sectors before the last one. */
static uint64_t backup_entries_lba(uint64_t dev_sectors)
{
	return dev_sectors - 1 - GPT_ENTRY_SECTORS;
}

int gpt_init(struct gpt *g, uint64_t dev_sectors, const uint8_t disk_guid[16], char *err,
	     size_t errlen)
{
	memset(g, 0, sizeof(*g));
	if (dev_sectors < GPT_MIN_SECTORS)
		return uraid_errf(err, errlen, -EINVAL, "the drive has %" PRIu64 " sectors; a pool "
				  "drive needs at least %u (two GPTs and one aligned MiB)",
				  dev_sectors, GPT_MIN_SECTORS);
	g->dev_sectors = dev_sectors;
	memcpy(g->disk_guid, disk_guid, 16);
	/* partitions begin at 1 MiB; the end of the last usable one is where the backup begins */
	g->first_usable = 2 + GPT_ENTRY_SECTORS;
	g->last_usable = backup_entries_lba(dev_sectors) - 1;
	return 0;
}

int gpt_check(const struct gpt *g, char *err, size_t errlen)
{
	if (g->dev_sectors < GPT_MIN_SECTORS || g->first_usable < 2 + GPT_ENTRY_SECTORS ||
	    g->last_usable >= backup_entries_lba(g->dev_sectors) ||
	    g->first_usable > g->last_usable)
		return uraid_errf(err, errlen, -EINVAL, "usable LBAs %" PRIu64 "..%" PRIu64
				  " do not fit between the two tables of a %" PRIu64 "-sector drive",
				  g->first_usable, g->last_usable, g->dev_sectors);
	for (unsigned i = 0; i < GPT_ENTRIES; i++) {
		const struct gpt_part *p = &g->part[i];
		if (gpt_guid_zero(p->type))
			continue;
		if (p->first > p->last || p->first < g->first_usable || p->last > g->last_usable)
			return uraid_errf(err, errlen, -EINVAL, "partition %u (LBAs %" PRIu64 "..%"
					  PRIu64 ") is outside the usable LBAs %" PRIu64 "..%" PRIu64,
					  i + 1, p->first, p->last, g->first_usable, g->last_usable);
		for (unsigned j = 0; j < i; j++) {
			const struct gpt_part *q = &g->part[j];
			if (!gpt_guid_zero(q->type) && p->first <= q->last && q->first <= p->last)
				return uraid_errf(err, errlen, -EINVAL, "partitions %u and %u overlap",
						  j + 1, i + 1);
		}
	}
	return 0;
}

static void encode_entries(const struct gpt *g, uint8_t *e)
{
	memset(e, 0, GPT_ENTRIES * GPT_ENTRY_BYTES);
	for (unsigned i = 0; i < GPT_ENTRIES; i++, e += GPT_ENTRY_BYTES) {
		const struct gpt_part *p = &g->part[i];
		if (gpt_guid_zero(p->type))
			continue;
		memcpy(e, p->type, 16);
		memcpy(e + 16, p->guid, 16);
		le_put64(e + 32, p->first);
		le_put64(e + 40, p->last);
		le_put64(e + 48, p->attrs);
		/* ASCII into UTF-16LE; anything else becomes '?' */
		if (p->raw_as_read[0] && !strcmp(p->name, p->raw_as_read)) {
			memcpy(e + 56, p->raw_name, sizeof(p->raw_name));
			continue;
		}
		for (unsigned c = 0; c < GPT_NAME_CHARS && p->name[c]; c++) {
			unsigned char ch = (unsigned char)p->name[c];
			e[56 + 2 * c] = ch < 0x80 ? ch : '?';
		}
	}
}

static void encode_header(const struct gpt *g, uint8_t *h, bool primary, uint32_t entries_crc)
{
	uint64_t last = g->dev_sectors - 1;

	memset(h, 0, 512);
	memcpy(h, gpt_signature, 8);
	le_put32(h + 8, GPT_REVISION);
	le_put32(h + 12, GPT_HEADER_BYTES);
	le_put64(h + 24, primary ? 1 : last);
	le_put64(h + 32, primary ? last : 1);
	le_put64(h + 40, g->first_usable);
	le_put64(h + 48, g->last_usable);
	memcpy(h + 56, g->disk_guid, 16);
	le_put64(h + 72, primary ? 2 : backup_entries_lba(g->dev_sectors));
	le_put32(h + 80, GPT_ENTRIES);
	le_put32(h + 84, GPT_ENTRY_BYTES);
	le_put32(h + 88, entries_crc);
	le_put32(h + 16, gpt_crc32(h, GPT_HEADER_BYTES));
}

/* A protective MBR: one partition of type 0xEE from LBA 1 over the disk (capped at 2^32-1). */
static void encode_mbr(const struct gpt *g, uint8_t *mbr)
{
	uint8_t *pe = mbr + 446;
	uint64_t n = g->dev_sectors - 1;

	memset(mbr, 0, 512);
	pe[1] = 0x00; pe[2] = 0x02; pe[3] = 0x00;            /* CHS of LBA 1 */
	pe[4] = MBR_TYPE_PROTECTIVE;
	pe[5] = 0xff; pe[6] = 0xff; pe[7] = 0xff;            /* CHS beyond reach */
	le_put32(pe + 8, 1);
	le_put32(pe + 12, n > 0xffffffffu ? 0xffffffffu : (uint32_t)n);
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
}

int gpt_encode(const struct gpt *g, uint8_t *primary, uint8_t *backup, char *err,
	       size_t errlen)
{
	int rc = gpt_check(g, err, errlen);
	if (rc)
		return rc;
	encode_mbr(g, primary);
	encode_entries(g, primary + 1024);
	uint32_t crc = gpt_crc32(primary + 1024, GPT_ENTRIES * GPT_ENTRY_BYTES);
	encode_header(g, primary + 512, true, crc);
	memcpy(backup, primary + 1024, GPT_ENTRIES * GPT_ENTRY_BYTES);
	encode_header(g, backup + GPT_ENTRY_SECTORS * 512, false, crc);
	return 0;
}

static void decode_mbr(const uint8_t *mbr, struct gpt_read_info *info)
{
	if (mbr[510] != 0x55 || mbr[511] != 0xaa)
		return;
	for (unsigned i = 0; i < 4; i++) {
		const uint8_t *pe = mbr + 446 + 16 * i;
		if (pe[4] == MBR_TYPE_PROTECTIVE)
			info->protective_mbr = true;
		else if (pe[4] != 0 && le_get32(pe + 12) != 0)
			info->mbr_partitions = true;
	}
}

/*
 * Check one header (read at LBA at) and its entries; on success fill g.
 * entries: the 16 KiB the header points at, NULL when it points elsewhere
 * than where uraid (and every partitioner of 512-byte disks) puts them.
 */
static int decode_copy(const uint8_t *h, const uint8_t *entries_here, uint64_t at,
		       uint64_t entries_at, uint64_t dev_sectors, struct gpt *g, char *why,
		       size_t whylen)
{
	uint8_t hdr[512];
	uint32_t hsize = le_get32(h + 12);

	if (memcmp(h, gpt_signature, 8))
		return uraid_errf(why, whylen, -ENOENT, "no GPT signature at LBA %" PRIu64, at);
	if (le_get32(h + 8) != GPT_REVISION)
		return uraid_errf(why, whylen, -EINVAL, "revision 0x%08" PRIx32 " is not 1.0",
				  le_get32(h + 8));
	if (hsize < GPT_HEADER_BYTES || hsize > 512)
		return uraid_errf(why, whylen, -EINVAL, "header size %" PRIu32 " is outside 92..512",
				  hsize);
	memcpy(hdr, h, 512);
	le_put32(hdr + 16, 0);
	if (gpt_crc32(hdr, hsize) != le_get32(h + 16))
		return uraid_errf(why, whylen, -EINVAL, "header CRC32 mismatch (stored 0x%08" PRIx32
				  ", computed 0x%08" PRIx32 ")", le_get32(h + 16), gpt_crc32(hdr, hsize));
	if (le_get64(h + 24) != at)
		return uraid_errf(why, whylen, -EINVAL, "the header at LBA %" PRIu64 " says it is "
				  "at LBA %" PRIu64, at, le_get64(h + 24));
	uint64_t other = at == 1 ? dev_sectors - 1 : 1;
	if (le_get64(h + 32) != other)
		return uraid_errf(why, whylen, -EINVAL, "the other header is at LBA %" PRIu64
				  ", not at %" PRIu64 " (the drive's size changed?)",
				  le_get64(h + 32), other);
	if (le_get32(h + 80) != GPT_ENTRIES || le_get32(h + 84) != GPT_ENTRY_BYTES)
		return uraid_errf(why, whylen, -EINVAL, "%" PRIu32 " entries of %" PRIu32 " bytes; "
				  "uraid reads tables of %u entries of %u bytes", le_get32(h + 80),
				  le_get32(h + 84), GPT_ENTRIES, GPT_ENTRY_BYTES);
	if (le_get64(h + 72) != entries_at)
		return uraid_errf(why, whylen, -EINVAL, "entries at LBA %" PRIu64 ", expected %"
				  PRIu64, le_get64(h + 72), entries_at);
	if (gpt_crc32(entries_here, GPT_ENTRIES * GPT_ENTRY_BYTES) != le_get32(h + 88))
		return uraid_errf(why, whylen, -EINVAL, "entries CRC32 mismatch");

	memset(g, 0, sizeof(*g));
	g->dev_sectors = dev_sectors;
	memcpy(g->disk_guid, h + 56, 16);
	g->first_usable = le_get64(h + 40);
	g->last_usable = le_get64(h + 48);
	for (unsigned i = 0; i < GPT_ENTRIES; i++) {
		const uint8_t *e = entries_here + i * GPT_ENTRY_BYTES;
		struct gpt_part *p = &g->part[i];
		if (gpt_guid_zero(e))
			continue;
		memcpy(p->type, e, 16);
		memcpy(p->guid, e + 16, 16);
		p->first = le_get64(e + 32);
		p->last = le_get64(e + 40);
		p->attrs = le_get64(e + 48);
		/* UTF-16LE: ASCII kept, the rest shown as '?' (uraid's own names are ASCII) */
		unsigned n = 0;
		for (unsigned c = 0; c < GPT_NAME_CHARS; c++) {
			uint16_t u = (uint16_t)(e[56 + 2 * c] | e[57 + 2 * c] << 8);
			if (!u)
				break;
			p->name[n++] = u >= 0x20 && u < 0x7f ? (char)u : '?';
		}
		p->name[n] = '\0';
		memcpy(p->raw_name, e + 56, sizeof(p->raw_name));
		snprintf(p->raw_as_read, sizeof(p->raw_as_read), "%s", p->name);
	}
	char cwhy[200];
	if (gpt_check(g, cwhy, sizeof(cwhy)))
		return uraid_errf(why, whylen, -EINVAL, "%s", cwhy);
	return 0;
}

int gpt_decode(const uint8_t *primary, const uint8_t *backup, uint64_t dev_sectors,
	       struct gpt *g, struct gpt_read_info *info, char *err, size_t errlen)
{
	struct gpt *alt;
	int rp, rb;

	memset(info, 0, sizeof(*info));
	decode_mbr(primary, info);
	if (dev_sectors < GPT_MIN_SECTORS)
		return uraid_errf(err, errlen, -ENOENT, "too small for a GPT");
	if (!(alt = malloc(sizeof(*alt))))
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	rp = decode_copy(primary + 512, primary + 1024, 1, 2, dev_sectors, g, info->primary_why,
			 sizeof(info->primary_why));
	rb = decode_copy(backup + GPT_ENTRY_SECTORS * 512, backup, dev_sectors - 1,
			 backup_entries_lba(dev_sectors), dev_sectors, alt, info->backup_why,
			 sizeof(info->backup_why));
	/* two sound copies that say different things: the primary is the table
	   (it is written last), the backup is reported and written again with the
	   next change (both decoded into zeroed structs: memcmp compares fields) */
	if (rp == 0 && rb == 0 && memcmp(g, alt, sizeof(*g))) {
		rb = -EINVAL;
		snprintf(info->backup_why, sizeof(info->backup_why), "it differs from the primary "
			 "copy (the primary is used)");
	}
	info->primary_ok = rp == 0;
	info->backup_ok = rb == 0;
	int rc = 0;
	if (rp && rb == 0)
		memcpy(g, alt, sizeof(*g));
	else if (rp == -ENOENT && rb == -ENOENT)
		rc = uraid_errf(err, errlen, -ENOENT, "no GPT%s",
				info->mbr_partitions ? " (an MBR partition table)" : "");
	else if (rp && rb)
		rc = uraid_errf(err, errlen, -EINVAL, "the GPT is damaged: primary: %s; backup: %s",
				info->primary_why, info->backup_why);
	free(alt);
	return rc;
}

static void read_grown(int fd, uint64_t dev_sectors, uint8_t *buf, struct gpt *g,
		       struct gpt_read_info *info, int *rc, char *err, size_t errlen);

int gpt_read(int fd, uint64_t dev_sectors, struct gpt *g, struct gpt_read_info *info,
	     char *err, size_t errlen)
{
	uint8_t *buf;
	int rc;

	memset(info, 0, sizeof(*info));
	if (dev_sectors < GPT_MIN_SECTORS)
		return uraid_errf(err, errlen, -ENOENT, "too small for a GPT");
	if (posix_memalign((void **)&buf, 4096, GPT_PRIMARY_BYTES + GPT_BACKUP_BYTES))
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	rc = uraid_pread_full(fd, buf, GPT_PRIMARY_BYTES, 0);
	if (rc == 0)
		rc = uraid_pread_full(fd, buf + GPT_PRIMARY_BYTES, GPT_BACKUP_BYTES,
				      (dev_sectors - GPT_BACKUP_BYTES / 512) * 512);
	if (rc)
		rc = uraid_errf(err, errlen, -EIO, "cannot read the partition table: %s",
				strerror(-rc));
	else
		rc = gpt_decode(buf, buf + GPT_PRIMARY_BYTES, dev_sectors, g, info, err, errlen);
	if (rc == -EINVAL || (rc == 0 && !info->primary_ok))
		read_grown(fd, dev_sectors, buf, g, info, &rc, err, errlen);
	free(buf);
	return rc;
}

/*
 * A drive that has grown (an image file made larger, a bigger LUN): its
 * primary header says the backup is at an LBA before the last one, and the
 * backup is there. Read as the table of the drive it was (both copies
 * checked as for that size); kept only when both are sound so (a primary
 * whose alternate LBA points at anything else is a damaged table, not a
 * grown drive).
 * buf: the primary as read, and room for the backup after it.
 */
static void read_grown(int fd, uint64_t dev_sectors, uint8_t *buf, struct gpt *g,
		       struct gpt_read_info *info, int *rc, char *err, size_t errlen)
{
	const uint8_t *h = buf + 512;
	uint64_t alt = le_get64(h + 32);

	if (memcmp(h, gpt_signature, 8) || le_get64(h + 24) != 1 || alt + 1 < GPT_MIN_SECTORS ||
	    alt >= dev_sectors - 1)
		return;
	uint64_t old = alt + 1;
	struct gpt *t = malloc(sizeof(*t));
	struct gpt_read_info ti;
	char terr[400];
	if (!t)
		return;
	if (uraid_pread_full(fd, buf + GPT_PRIMARY_BYTES, GPT_BACKUP_BYTES,
			     (old - GPT_BACKUP_BYTES / 512) * 512) == 0 &&
	    gpt_decode(buf, buf + GPT_PRIMARY_BYTES, old, t, &ti, terr, sizeof(terr)) == 0 &&
	    ti.primary_ok && ti.backup_ok) {
		*g = *t;
		*info = ti;
		info->grown = true;
		info->grown_from = old;
		*rc = 0;
		if (err && errlen)
			err[0] = '\0';
	}
	free(t);
}

int gpt_move_backup(struct gpt *g, uint64_t dev_sectors, char *err, size_t errlen)
{
	if (dev_sectors <= g->dev_sectors)
		return uraid_errf(err, errlen, -EINVAL, "the drive has %" PRIu64 " sectors, not "
				  "more than the table's %" PRIu64, dev_sectors, g->dev_sectors);
	g->dev_sectors = dev_sectors;
	g->last_usable = backup_entries_lba(dev_sectors) - 1;
	return gpt_check(g, err, errlen);
}

int gpt_write(int fd, const struct gpt *g, char *err, size_t errlen)
{
	uint8_t *buf;
	int rc;

	if (posix_memalign((void **)&buf, 4096, GPT_PRIMARY_BYTES + GPT_BACKUP_BYTES))
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	rc = gpt_encode(g, buf, buf + GPT_PRIMARY_BYTES, err, errlen);
	/* backup first: a crash between the two leaves one good copy of either table */
	if (rc == 0 && ((rc = uraid_pwrite_full(fd, buf + GPT_PRIMARY_BYTES, GPT_BACKUP_BYTES,
						(g->dev_sectors - GPT_BACKUP_BYTES / 512) * 512)) ||
			(rc = uraid_pwrite_full(fd, buf, GPT_PRIMARY_BYTES, 0)) ||
			(fdatasync(fd) < 0 && (rc = -errno))))
		uraid_errf(err, errlen, rc, "writing the partition table failed: %s", strerror(-rc));
	free(buf);
	return rc;
}

unsigned gpt_free_extents(const struct gpt *g, struct gpt_extent *out, unsigned max)
{
	uint64_t at = (g->first_usable + GPT_ALIGN_SECTORS - 1) / GPT_ALIGN_SECTORS *
		      GPT_ALIGN_SECTORS;
	unsigned n = 0;

	for (;;) {
		/* the next partition at or after `at` */
		const struct gpt_part *next = NULL;
		for (unsigned i = 0; i < GPT_ENTRIES; i++) {
			const struct gpt_part *p = &g->part[i];
			if (gpt_guid_zero(p->type) || p->last < at)
				continue;
			if (!next || p->first < next->first)
				next = p;
		}
		uint64_t end = next ? next->first : g->last_usable + 1;
		/* whole MiBs only: partitions start and end on 1 MiB boundaries */
		end = end / GPT_ALIGN_SECTORS * GPT_ALIGN_SECTORS;
		if (end > at && n < max)
			out[n++] = (struct gpt_extent){ at, end - at };
		if (!next)
			return n;
		at = (next->last + 1 + GPT_ALIGN_SECTORS - 1) / GPT_ALIGN_SECTORS *
		     GPT_ALIGN_SECTORS;
	}
}

int gpt_free_entry(const struct gpt *g)
{
	for (unsigned i = 0; i < GPT_ENTRIES; i++)
		if (gpt_guid_zero(g->part[i].type))
			return (int)i;
	return -ENOSPC;
}
