// SPDX-License-Identifier: MIT
/*
 * fio iolog text, versions 2 and 3 (fio's HOWTO, "Trace file format"):
 *   fio version 2 iolog            fio version 3 iolog
 *   FILE add|open|close            USEC FILE add|open|close
 *   FILE ACTION OFFSET LENGTH      USEC FILE ACTION OFFSET LENGTH
 * ACTION is read, write, sync, datasync, trim, or (v2 only) wait, whose
 * OFFSET is a delay in microseconds after the previous wait (below 100
 * ignored, as fio does). Trims are counted but not replayed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "bench/trace.h"

#define MAX_WORDS 6

static int file_index(struct bench_trace *t, const char *name)
{
	for (unsigned i = 0; i < t->nfiles; i++)
		if (!strcmp(t->file[i], name))
			return (int)i;
	return -1;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *e;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 10);
	if (errno || *e)
		return -EINVAL;
	*out = v;
	return 0;
}

static int add_op(struct bench_trace *t, size_t *cap, const struct bench_trace_op *op)
{
	if (t->nops == *cap) {
		size_t n = *cap ? *cap * 2 : 1024;
		struct bench_trace_op *p = realloc(t->ops, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		t->ops = p;
		*cap = n;
	}
	t->ops[t->nops++] = *op;
	return 0;
}

/* One line split into words (in place); the fields after the optional timestamp. */
static int parse_line(struct bench_trace *t, char **wd, unsigned nw, unsigned lineno,
		      uint64_t *wait_ns, size_t *cap, const char *name, char *err, size_t errlen)
{
	uint64_t ts = 0;
	unsigned k = 0;

	if (t->version == 3) {
		if (nw < 3 || parse_u64(wd[0], &ts))
			return uraid_errf(err, errlen, -EINVAL, "%s:%u: want TIMESTAMP FILE ACTION "
					  "[OFFSET LENGTH]", name, lineno);
		k = 1;
	}
	if (nw - k != 2 && nw - k != 4)
		return uraid_errf(err, errlen, -EINVAL, "%s:%u: want FILE ACTION [OFFSET LENGTH]",
				  name, lineno);
	const char *file = wd[k], *act = wd[k + 1];
	int fi = file_index(t, file);
	if (nw - k == 2) {
		if (!strcmp(act, "add")) {
			if (fi >= 0)
				return 0;
			if (t->nfiles == BENCH_MAX_TARGETS)
				return uraid_errf(err, errlen, -EINVAL, "%s:%u: more than %d files",
						  name, lineno, BENCH_MAX_TARGETS);
			if (!(t->file[t->nfiles] = strdup(file)))
				return -ENOMEM;
			t->nfiles++;
			return 0;
		}
		if (strcmp(act, "open") && strcmp(act, "close"))
			return uraid_errf(err, errlen, -EINVAL, "%s:%u: unknown file action '%s'",
					  name, lineno, act);
		if (fi < 0)
			return uraid_errf(err, errlen, -EINVAL, "%s:%u: %s before 'add' of %s", name,
					  lineno, act, file);
		return 0;
	}
	uint64_t off, len;
	if (parse_u64(wd[k + 2], &off) || parse_u64(wd[k + 3], &len))
		return uraid_errf(err, errlen, -EINVAL, "%s:%u: bad offset or length", name, lineno);
	if (!strcmp(act, "wait")) {
		if (t->version == 3)
			return uraid_errf(err, errlen, -EINVAL, "%s:%u: 'wait' is not allowed in "
					  "version 3", name, lineno);
		if (off >= 100)
			*wait_ns += off * 1000;
		return 0;
	}
	if (fi < 0)
		return uraid_errf(err, errlen, -EINVAL, "%s:%u: %s before 'add' of %s", name, lineno,
				  act, file);
	struct bench_trace_op op = {
		.t_ns = t->version == 3 ? ts * 1000 : *wait_ns,
		.offset = off,
		.lineno = lineno,
		.file = (uint16_t)fi,
	};
	if (!strcmp(act, "read") || !strcmp(act, "write")) {
		if (!len || len > BENCH_MAX_BS)
			return uraid_errf(err, errlen, -EINVAL, "%s:%u: length %llu is not 1..16M",
					  name, lineno, (unsigned long long)len);
		op.op = act[0] == 'r' ? BENCH_OP_READ : BENCH_OP_WRITE;
		op.len = (uint32_t)len;
		t->bytes[op.op] += len;
		if (op.len > t->max_len)
			t->max_len = op.len;
	} else if (!strcmp(act, "sync") || !strcmp(act, "datasync")) {
		op.op = BENCH_OP_SYNC;
		op.offset = 0;
	} else if (!strcmp(act, "trim")) {
		t->skipped++;
		return 0;
	} else {
		return uraid_errf(err, errlen, -EINVAL, "%s:%u: unknown action '%s'", name, lineno,
				  act);
	}
	if (add_op(t, cap, &op))
		return uraid_errf(err, errlen, -ENOMEM, "%s: out of memory", name);
	return 0;
}

int bench_trace_parse(const char *name, const char *text, size_t len, struct bench_trace *t,
		      char *err, size_t errlen)
{
	size_t cap = 0;
	uint64_t wait_ns = 0;
	unsigned lineno = 0;
	char buf[4096];
	int rc = 0;

	memset(t, 0, sizeof(*t));
	for (size_t pos = 0; pos < len && !rc;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - text - pos) : len - pos;
		lineno++;
		if (n >= sizeof(buf)) {
			rc = uraid_errf(err, errlen, -EINVAL, "%s:%u: line too long", name, lineno);
			break;
		}
		memcpy(buf, text + pos, n);
		buf[n] = 0;
		pos += n + 1;
		if (n && buf[n - 1] == '\r')
			buf[n - 1] = 0;
		if (lineno == 1) {
			if (!strcmp(buf, "fio version 2 iolog"))
				t->version = 2;
			else if (!strcmp(buf, "fio version 3 iolog"))
				t->version = 3;
			else
				rc = uraid_errf(err, errlen, -EINVAL, "%s: not a fio iolog (the first "
						"line is not 'fio version 2 iolog' or 'fio version 3 "
						"iolog')", name);
			continue;
		}
		char *wd[MAX_WORDS + 1], *save = NULL;
		unsigned nw = 0;
		for (char *p = strtok_r(buf, " \t", &save); p; p = strtok_r(NULL, " \t", &save)) {
			if (nw == MAX_WORDS) {
				nw++;
				break;
			}
			wd[nw++] = p;
		}
		if (!nw)
			continue;
		if (nw > MAX_WORDS) {
			rc = uraid_errf(err, errlen, -EINVAL, "%s:%u: too many fields", name, lineno);
			break;
		}
		rc = parse_line(t, wd, nw, lineno, &wait_ns, &cap, name, err, errlen);
	}
	if (!rc && !lineno)
		rc = uraid_errf(err, errlen, -EINVAL, "%s: empty file", name);
	if (rc)
		bench_trace_free(t);
	return rc;
}

int bench_trace_load(const char *path, struct bench_trace *t, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	memset(t, 0, sizeof(*t));
	if (fd < 0 || fstat(fd, &st)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return uraid_errf(err, errlen, -e, "%s: %s", path, strerror(e));
	}
	char *text = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (text && got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!text)
		return uraid_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
	int rc = bench_trace_parse(path, text, got, t, err, errlen);
	free(text);
	return rc;
}

void bench_trace_free(struct bench_trace *t)
{
	for (unsigned i = 0; i < t->nfiles; i++)
		free(t->file[i]);
	free(t->ops);
	memset(t, 0, sizeof(*t));
}
