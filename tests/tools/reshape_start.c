// SPDX-License-Identifier: MIT
/*
 * reshape_start: a test helper until `uraid grow` starts restripes. It
 * assembles the members in-process (the engine's threads), starts a RAID
 * 4/5/6 reshape through the library (uraid_array_reshape_start) and stops
 * it once its checkpoint on disk has moved STOP array sectors (from 0
 * forwards, from the top backwards), leaving the
 * array in mid-reshape as md leaves one stopped with --stop; or, with
 * --kill, dies by SIGKILL there, as a crash would. `uraid serve` (or md)
 * then goes on from the checkpoint.
 *
 *   reshape_start [--raid-devices=N] [--chunk-kib=K] [--layout=NAME]
 *                 [--speed-kib=S] [--stop-at=SECTORS] [--kill] [--add=PATH]...
 *                 MEMBER...
 *
 * Unset: the array's own value. The new slots take spares in the array
 * (uraid add), or the devices --add names, added as spares first. A STOP
 * past the end lets it finish (exit 2, and the time it took on stdout). Exit 0 when stopped as asked, 1 on an error (one line
 * on stderr), 2 when the reshape ended before STOP.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uraid/engine.h>
#include <uraid/geom.h>
#include <uraid/uraid.h>

static int usage(void)
{
	fprintf(stderr, "usage: reshape_start [--raid-devices=N] [--chunk-kib=K] [--layout=NAME] "
		"[--speed-kib=S] [--stop-at=SECTORS] [--kill] MEMBER...\n");
	return 1;
}

int main(int argc, char **argv)
{
	unsigned disks = 0, chunk_kib = 0, speed = 2000;
	const char *layout = NULL;
	uint64_t stop_at = 1;
	bool die = false;
	const char *add[8];
	unsigned nadd = 0;
	int i = 1;

	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		const char *v = strchr(argv[i], '=');
		if (!strncmp(argv[i], "--raid-devices=", 15))
			disks = (unsigned)strtoul(v + 1, NULL, 10);
		else if (!strncmp(argv[i], "--chunk-kib=", 12))
			chunk_kib = (unsigned)strtoul(v + 1, NULL, 10);
		else if (!strncmp(argv[i], "--layout=", 9))
			layout = v + 1;
		else if (!strncmp(argv[i], "--speed-kib=", 12))
			speed = (unsigned)strtoul(v + 1, NULL, 10);
		else if (!strncmp(argv[i], "--stop-at=", 10))
			stop_at = strtoull(v + 1, NULL, 10);
		else if (!strcmp(argv[i], "--kill"))
			die = true;
		else if (!strncmp(argv[i], "--add=", 6) && nadd < 8)
			add[nadd++] = v + 1;
		else
			return usage();
	}
	if (i >= argc)
		return usage();

	struct uraid_engine *e;
	struct uraid_array *a;
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	struct uraid_assemble_opts ao = { .paths = (const char *const *)&argv[i],
					  .npaths = (unsigned)(argc - i) };
	char err[256];

	if (uraid_engine_create(&eo, &e)) {
		fprintf(stderr, "reshape_start: cannot start the engine\n");
		return 1;
	}
	if (uraid_array_assemble(e, &ao, &a, err, sizeof(err))) {
		fprintf(stderr, "reshape_start: %s\n", err);
		return 1;
	}
	for (unsigned k = 0; k < nadd; k++)
		if (uraid_array_add_member(a, add[k], 0, err, sizeof(err)) < 0) {
			fprintf(stderr, "reshape_start: add %s: %s\n", add[k], err);
			uraid_array_close(a);
			return 1;
		}
	struct uraid_array_status st;
	uraid_array_status(a, &st);
	struct uraid_reshape r = {
		.new_level = st.level,
		.new_layout = st.layout,
		.new_chunk_sectors = chunk_kib ? chunk_kib * 2 : st.chunk_bytes / 512,
		.new_raid_disks = disks ? disks : st.raid_disks,
	};
	if (layout && uraid_layout_parse(st.level, layout, &r.new_layout)) {
		fprintf(stderr, "reshape_start: unknown layout %s\n", layout);
		return 1;
	}
	uraid_array_sync_speed(a, speed < 1000 ? speed : 1000, speed);
	if (uraid_array_reshape_start(a, &r, err, sizeof(err))) {
		fprintf(stderr, "reshape_start: %s\n", err);
		uraid_array_close(a);
		return 1;
	}
	struct uraid_sync_status ss;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* where it starts: 0 forwards, the top backwards; STOP counts the
	   array sectors moved from there either way */
	uraid_array_sync_status(a, &ss);
	uint64_t p0 = ss.reshape_position_bytes / 512;
	for (;;) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
		uraid_array_sync_status(a, &ss);
		uint64_t p = ss.reshape_position_bytes / 512;
		if (!ss.running || (p >= p0 ? p - p0 : p0 - p) >= stop_at)
			break;
	}
	if (!ss.running) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("ended after %.3f s\n", (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		fprintf(stderr, "reshape_start: the reshape ended (result %d) before sector %" PRIu64
			"\n", ss.result, stop_at);
		uraid_array_close(a);
		return 2;
	}
	printf("stopped at array sector %" PRIu64 "\n", ss.reshape_position_bytes / 512);
	fflush(stdout);
	if (die)
		kill(getpid(), SIGKILL);
	int rc = uraid_array_close(a);
	uraid_engine_destroy(e);
	return rc ? 1 : 0;
}
