// SPDX-License-Identifier: MIT
/*
 * The engine's change callback (uraid_engine_opts.changed), which uraid
 * serve turns into events for uraid monitor: on a RAID 1 of two members
 * served by an engine with its threads, failing a member calls it before
 * uraid_array_fail_member returns; adding a spare calls it, and so do the
 * rebuild's start and end; a refused fail changes nothing and calls nothing. It never runs on
 * a reactor thread (named uraid-rN).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uraid/engine.h>

#include "../support/array_fixture.h"
#include "../support/check.h"

struct counter {
	atomic_uint calls;
	atomic_uint on_reactor;
};

static void changed(void *opaque)
{
	struct counter *c = opaque;
	char name[16] = "";
	pthread_getname_np(pthread_self(), name, sizeof(name));
	if (strncmp(name, "uraid-r", 7) == 0)
		atomic_fetch_add(&c->on_reactor, 1);
	atomic_fetch_add(&c->calls, 1);
}

int main(void)
{
	char dir[64], paths[3][96], err[256];
	struct counter c = { 0 };

	snprintf(dir, sizeof(dir), "/dev/shm/uraid-notify.%d", getpid());
	if (mkdir(dir, 0700) < 0) {
		snprintf(dir, sizeof(dir), "/tmp/uraid-notify.%d", getpid());
		mkdir(dir, 0700);
	}
	const char *devs[3];
	for (unsigned i = 0; i < 3; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u.img", dir, i);
		if (fixture_make_file(paths[i], 8u << 20))
			return 1;
		devs[i] = paths[i];
	}
	if (fixture_create_array("notify", "1", NULL, 2, 0, 2, devs))
		return 1;
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS,
					.changed = changed, .changed_opaque = &c };
	struct uraid_engine *e;
	struct uraid_array *a;
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = 2 };
	if (uraid_engine_create(&eo, &e) || uraid_array_assemble(e, &ao, &a, err, sizeof(err))) {
		fprintf(stderr, "assemble: %s\n", err);
		return 1;
	}
	unsigned before = atomic_load(&c.calls);
	CHECK(before == 0, "no call while nothing changed (%u)", before);

	CHECK(uraid_array_fail_member(a, 1, 0, err, sizeof(err)) == 0, "fail member 1: %s", err);
	unsigned after_fail = atomic_load(&c.calls);
	CHECK(after_fail > before, "failing a member calls it before returning (%u)", after_fail);

	/* the last copy: refused, nothing changes, no call */
	CHECK(uraid_array_fail_member(a, 0, 0, err, sizeof(err)) == -EBUSY,
	      "failing the last copy is refused");
	CHECK(atomic_load(&c.calls) == after_fail, "a refused fail calls nothing");

	int rc = uraid_array_add_member(a, paths[2], 0, err, sizeof(err));
	CHECK(rc == 0, "add a spare: %s", rc ? err : "ok");
	unsigned after_add = atomic_load(&c.calls);
	CHECK(after_add > after_fail, "adding a spare calls it (%u)", after_add);

	/* the rebuild starts by itself and ends (8 MiB: well within 30 s) */
	struct uraid_sync_status ss = { 0 };
	for (int i = 0; i < 3000; i++) {
		uraid_array_sync_status(a, &ss);
		if (ss.job && !ss.running)
			break;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	CHECK(ss.job && !ss.running && ss.result == 0, "the rebuild ran and ended (job %llu)",
	      (unsigned long long)ss.job);
	/* the spare chosen, the job's start, the spare taking its slot (all
	   before the job shows as ended; the job's own end call may follow) */
	unsigned after_job = atomic_load(&c.calls);
	CHECK(after_job >= after_add + 3, "the rebuild's start and end call it (%u after %u)",
	      after_job, after_add);
	CHECK(atomic_load(&c.on_reactor) == 0, "never on a reactor thread (%u times)",
	      atomic_load(&c.on_reactor));

	uraid_array_close(a);
	uraid_engine_destroy(e);
	for (unsigned i = 0; i < 3; i++)
		unlink(paths[i]);
	rmdir(dir);
	printf("%s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
