// SPDX-License-Identifier: MIT
/* Per-I/O latency logs in fio's format: kept, written, read back and pooled (latlog.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench/latlog.h"
#include "common/errmsg.h"

int bench_lat_log_init(struct bench_lat_log *l, uint64_t cap)
{
	memset(l, 0, sizeof(*l));
	if (!cap)
		return 0;
	if (cap > SIZE_MAX / sizeof(*l->s))
		return -ENOMEM;
	/* mapped, not touched: a run that logs little uses little memory */
	void *p = mmap(NULL, cap * sizeof(*l->s), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	l->s = p;
	l->cap = cap;
	return 0;
}

void bench_lat_log_fini(struct bench_lat_log *l)
{
	if (l->s)
		munmap(l->s, l->cap * sizeof(*l->s));
	memset(l, 0, sizeof(*l));
}

static int write_one(const struct bench_lat_log *l, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return uraid_errf(err, errlen, -errno, "--write_lat_log: %s: %s", path,
				  strerror(errno));
	for (uint64_t i = 0; i < l->n; i++) {
		const struct bench_lat_sample *s = &l->s[i];
		fprintf(f, "%" PRIu32 ", %" PRIu64 ", %u, %" PRIu32 ", 0\n", s->ms, s->ns,
			s->bytes_dir >> 31, s->bytes_dir & 0x7fffffffu);
	}
	if (ferror(f) | fclose(f))
		return uraid_errf(err, errlen, -EIO, "--write_lat_log: %s: write failed", path);
	if (l->dropped)
		fprintf(stderr, "uraid bench: %s holds the first %" PRIu64 " I/Os; %" PRIu64
			" more were not logged\n", path, l->n, l->dropped);
	return 0;
}

int bench_lat_log_write(const struct bench_lat_log *logs, unsigned nlogs, const char *prefix,
			char *err, size_t errlen)
{
	for (unsigned i = 0; i < nlogs; i++) {
		char path[4096];
		if ((size_t)snprintf(path, sizeof(path), "%s_lat.%u.log", prefix, i + 1) >=
		    sizeof(path))
			return uraid_errf(err, errlen, -ENAMETOOLONG, "--write_lat_log=%s: too long",
					  prefix);
		int rc = write_one(&logs[i], path, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* One unsigned decimal field then a comma (or, for the last wanted, a comma or the end). */
static const char *field(const char *p, uint64_t *v, bool last)
{
	while (*p == ' ' || *p == '\t')
		p++;
	if (!isdigit((unsigned char)*p))
		return NULL;
	errno = 0;
	char *end;
	unsigned long long x = strtoull(p, &end, 10);
	if (errno)
		return NULL;
	*v = x;
	p = end;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == ',')
		return p + 1;
	return last && (*p == 0 || *p == '\n' || *p == '\r') ? p : NULL;
}

int bench_lat_log_parse_line(const char *line, uint64_t *ns, unsigned *dir)
{
	uint64_t ms, v, d, bytes;
	const char *p = line;

	if (!(p = field(p, &ms, false)) || !(p = field(p, &v, false)) ||
	    !(p = field(p, &d, false)) || !(p = field(p, &bytes, true)))
		return -EINVAL;
	if (d > 2)
		return -EINVAL;
	*ns = v;
	*dir = (unsigned)d;
	return 0;
}

int bench_lat_pool_file(const char *path, struct hist h[2], char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return uraid_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
	char line[512];
	uint64_t no = 0;
	int rc = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t ns;
		unsigned dir;
		no++;
		if (!strchr(line, '\n') && !feof(f)) {
			rc = uraid_errf(err, errlen, -EINVAL, "%s:%" PRIu64 ": line too long", path, no);
			break;
		}
		if (bench_lat_log_parse_line(line, &ns, &dir)) {
			line[strcspn(line, "\r\n")] = 0;
			rc = uraid_errf(err, errlen, -EINVAL, "%s:%" PRIu64 ": not a latency log line "
					"(MSEC, NSEC, DIR, BYTES): %.60s", path, no, line);
			break;
		}
		if (dir < 2)
			hist_record(&h[dir], ns);
	}
	if (!rc && ferror(f))
		rc = uraid_errf(err, errlen, -EIO, "%s: read error", path);
	fclose(f);
	return rc;
}
