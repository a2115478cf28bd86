// SPDX-License-Identifier: MIT
/*
 * test_log: the library's messages go to the log function an embedder gives
 * (include/uraid/log.h), with their level, and none to stderr; without one
 * they reach stderr as "uraid: ..." lines, warnings marked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uraid/engine.h>

#include "common/log.h"
#include "../support/array_fixture.h"
#include "../support/check.h"

struct captured {
	unsigned n;
	enum uraid_log_level level[16];
	char msg[16][ULOG_MAX_LINE];
};

static void capture(void *opaque, enum uraid_log_level level, const char *msg)
{
	struct captured *c = opaque;
	if (c->n < 16) {
		c->level[c->n] = level;
		snprintf(c->msg[c->n], sizeof(c->msg[0]), "%s", msg);
	}
	c->n++;
}

/* Run fn with stderr sent to a file; return what it wrote there (static buffer). */
static const char *stderr_of(void (*fn)(void *), void *arg)
{
	static char out[4096];
	char path[] = "/tmp/uraid-test-log-XXXXXX";
	int fd = mkstemp(path);
	int saved = dup(STDERR_FILENO);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	fn(arg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	ssize_t n = pread(fd, out, sizeof(out) - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	return out;
}

static void log_default(void *arg)
{
	(void)arg;
	ulog(NULL, URAID_LOG_WARNING, "member %d looks odd", 3);
	ulog(NULL, URAID_LOG_NOTICE, "plain %s", "notice");
	static char prefix[] = "uraid serve";
	const struct ulog l = { .fn = uraid_log_stderr, .opaque = prefix };
	ulog(&l, URAID_LOG_ERR, "with the caller's prefix");
	/* an opaque without a function is the function's: not a prefix */
	const struct ulog no_fn = { .opaque = (void *)"not a prefix" };
	ulog(&no_fn, URAID_LOG_INFO, "default prefix");
}

/* Fail a member of a RAID 1 on request: the engine says so through its log. */
static void fail_one(void *arg)
{
	struct captured *c = arg;
	/* in a directory of its own: two runs at once (another build's, another
	   checkout's) must not share the member files */
	char dir[] = "/tmp/uraid-test-log.XXXXXX", m0[64], m1[64];
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp %s: %s", dir, strerror(errno));
		return;
	}
	snprintf(m0, sizeof(m0), "%s/uraid-test-log-m0", dir);
	snprintf(m1, sizeof(m1), "%s/uraid-test-log-m1", dir);
	const char *paths[2] = { m0, m1 };
	char err[256];
	struct uraid_engine *e;
	struct uraid_array *a;

	for (int i = 0; i < 2; i++)
		CHECK(fixture_make_file(paths[i], 16 << 20) == 0, "file %s", paths[i]);
	CHECK(fixture_create_array("test_log", "1", NULL, 2, 0, 2, paths) == 0, "create");
	struct uraid_engine_opts eo = { .reactors = 1, .log = capture, .log_opaque = c };
	CHECK(uraid_engine_create(&eo, &e) == 0, "engine");
	struct uraid_assemble_opts ao = { .paths = paths, .npaths = 2 };
	int rc = uraid_array_assemble(e, &ao, &a, err, sizeof(err));
	CHECK(rc == 0, "assemble: %s", err);
	if (rc == 0) {
		rc = uraid_array_fail_member(a, 1, 0, err, sizeof(err));
		CHECK(rc == 0, "fail member 1: %s", err);
		uraid_array_close(a);
	}
	uraid_engine_destroy(e);
	for (int i = 0; i < 2; i++)
		unlink(paths[i]);
	rmdir(dir);
}

int main(void)
{
	const char *out = stderr_of(log_default, NULL);
	CHECK(strstr(out, "uraid: warning: member 3 looks odd\n") != NULL, "stderr: [%s]", out);
	CHECK(strstr(out, "uraid: plain notice\n") != NULL, "stderr: [%s]", out);
	CHECK(strstr(out, "uraid serve: with the caller's prefix\n") != NULL, "stderr: [%s]", out);
	CHECK(strstr(out, "uraid: default prefix\n") != NULL, "stderr: [%s]", out);

	struct captured c = { 0 };
	out = stderr_of(fail_one, &c);
	CHECK(out[0] == '\0', "the engine wrote to stderr with a log function set: [%s]", out);
	bool seen = false;
	for (unsigned i = 0; i < c.n && i < 16; i++) {
		if (strstr(c.msg[i], "uraid-test-log-m1: failed on request")) {
			seen = true;
			CHECK(c.level[i] == URAID_LOG_NOTICE, "level %d", c.level[i]);
			CHECK(!strchr(c.msg[i], '\n'), "message ends in a newline: [%s]", c.msg[i]);
		}
	}
	CHECK(seen, "the failure was not logged (%u messages, first: %s)", c.n,
	      c.n ? c.msg[0] : "-");
	if (failures)
		fprintf(stderr, "test_log: %d failures\n", failures);
	return failures ? 1 : 0;
}
