// SPDX-License-Identifier: MIT
/*
 * grow_r6_window: the state a kill between the members' superblock writes
 * of a RAID 5 -> 6 grow leaves (md/grow.c takeover_restripe writes the
 * takeover and the restripe's start in one update, member after member).
 * The members hold a RAID 5 of 4 and a spare (M4). A child grows it to
 * RAID 6 in-process and is killed as soon as all five superblocks say
 * level 6; when the restripe had not moved yet (the freshest say
 * reshape_position at its start), the RAID 5 superblocks of before are put
 * back on the members BEHIND names (indexes into M0..M4): what the kill
 * after the other members' writes leaves. Had it moved, the files are put
 * back as they were and it is tried again (at most 5 times).
 *
 *   grow_r6_window BEHIND M0 M1 M2 M3 M4     (BEHIND: e.g. 2,4)
 *
 * Exit 0 done (one line on stdout), 1 on an error (one line on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/engine.h>
#include <uraid/superblock.h>
#include <uraid/uraid.h>

#define N 5
#define ATTEMPTS 5
#define DEADLINE_S 60

static int sb_at(const char *path, struct uraid_sb *sb)
{
	struct uraid_probe *pr = malloc(sizeof(*pr));
	int fd = open(path, O_RDONLY), rc = -1;
	if (pr && fd >= 0 && uraid_probe_fd(fd, pr) == 0 && pr->chosen >= 0) {
		*sb = pr->loc[pr->chosen].sb;
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	free(pr);
	return rc;
}

static int area(const char *path, uint64_t sector, uint8_t *buf, bool write)
{
	int fd = open(path, write ? O_WRONLY : O_RDONLY);
	ssize_t n = -1;
	if (fd >= 0) {
		n = write ? pwrite(fd, buf, URAID_SB_BYTES, (off_t)(sector * 512))
			  : pread(fd, buf, URAID_SB_BYTES, (off_t)(sector * 512));
		if (write && fsync(fd))
			n = -1;
		close(fd);
	}
	return n == URAID_SB_BYTES ? 0 : -1;
}

static int copy(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char buf[1 << 16];
	ssize_t n = 0;
	int rc = in >= 0 && out >= 0 ? 0 : -1;
	while (!rc && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = -1;
	if (n < 0 || (out >= 0 && fsync(out)))
		rc = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static void child(const char *const *paths)
{
	struct uraid_engine *e;
	struct uraid_array *a;
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	struct uraid_assemble_opts ao = { .paths = paths, .npaths = N };
	char err[256], done[1024];
	if (uraid_engine_create(&eo, &e) || uraid_array_assemble(e, &ao, &a, err, sizeof(err)))
		_exit(2);
	struct uraid_grow g = { .level_set = true, .level = 6 };
	if (uraid_array_grow(a, &g, done, sizeof(done), err, sizeof(err))) {
		fprintf(stderr, "grow_r6_window: grow: %s\n", err);
		_exit(3);
	}
	for (;;)
		pause();
}

/* 0: captured at the start; 1: moved (again); -1: failed. */
static int attempt(const char *const *paths, uint64_t *events, uint64_t *pos)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		child(paths);
	struct uraid_sb sb[N];
	unsigned at6 = 0, looks = 0;
	time_t until = time(NULL) + DEADLINE_S;
	while (at6 < N && time(NULL) < until) {
		at6 = 0;
		for (unsigned i = 0; i < N; i++)
			at6 += sb_at(paths[i], &sb[i]) == 0 && sb[i].level == 6;
		int st;
		if (at6 < N && ++looks % 64 == 0 && waitpid(pid, &st, WNOHANG) == pid) {
			fprintf(stderr, "grow_r6_window: the child ended (status 0x%x)\n", st);
			return -1;
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (at6 < N) {
		fprintf(stderr, "grow_r6_window: the members never all said level 6\n");
		return -1;
	}
	for (unsigned i = 0; i < N; i++)
		if (sb_at(paths[i], &sb[i]))
			return -1;
	const struct uraid_sb *f = &sb[0];
	if (!(f->feature_map & URAID_FEATURE_RESHAPE_ACTIVE) || f->delta_disks != 0) {
		fprintf(stderr, "grow_r6_window: not a restripe at the same member count "
			"(feature_map 0x%x, delta %d)\n", f->feature_map, f->delta_disks);
		return -1;
	}
	/* backwards: md's top (the used size on a chunk boundary, times the
	   data members); forwards: 0 */
	uint64_t chunk = f->chunksize > f->new_chunk ? f->chunksize : f->new_chunk;
	uint64_t start = f->feature_map & URAID_FEATURE_RESHAPE_BACKWARDS
			 ? (f->size - f->size % chunk) * (f->raid_disks - 2) : 0;
	*events = f->events;
	*pos = f->reshape_position;
	for (unsigned i = 0; i < N; i++)
		if (sb[i].events != f->events || sb[i].reshape_position != start)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 + N) {
		fprintf(stderr, "usage: grow_r6_window BEHIND M0 M1 M2 M3 M4\n");
		return 1;
	}
	const char *const *paths = (const char *const *)argv + 2;
	bool behind[N] = { false };
	for (char *s = argv[1]; *s; s++)
		if (*s >= '0' && *s < '0' + N)
			behind[*s - '0'] = true;
		else if (*s != ',')
			return fprintf(stderr, "grow_r6_window: BEHIND: indexes 0..4\n"), 1;
	alignas(4096) static uint8_t old[N][URAID_SB_BYTES];
	uint64_t at[N];
	char keep[N][4096];
	for (unsigned i = 0; i < N; i++) {
		struct uraid_sb sb;
		snprintf(keep[i], sizeof(keep[i]), "%s.keep", paths[i]);
		if (sb_at(paths[i], &sb) || (at[i] = sb.super_offset, area(paths[i], at[i], old[i],
									     false)) ||
		    copy(paths[i], keep[i]))
			return fprintf(stderr, "grow_r6_window: %s: cannot read it\n", paths[i]), 1;
	}
	int rc = 1;
	uint64_t events = 0, pos = 0;
	for (unsigned k = 1; k <= ATTEMPTS && rc == 1; k++) {
		rc = attempt(paths, &events, &pos);
		if (rc == 1) {
			printf("grow_r6_window: attempt %u: the restripe had moved (%" PRIu64 "): "
			       "again\n", k, pos);
			for (unsigned i = 0; i < N; i++)
				if (copy(keep[i], paths[i]))
					rc = -1;
		}
	}
	for (unsigned i = 0; i < N; i++)
		unlink(keep[i]);
	if (rc)
		return fprintf(stderr, "grow_r6_window: no capture with the restripe at its "
			       "start\n"), 1;
	char list[32] = "";
	for (unsigned i = 0; i < N; i++) {
		if (!behind[i])
			continue;
		if (area(paths[i], at[i], old[i], true))
			return fprintf(stderr, "grow_r6_window: %s: write\n", paths[i]), 1;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%u", list[0] ? "," : "",
			 i);
	}
	printf("grow_r6_window: members %s put back at RAID 5; the others at level 6, events %"
	       PRIu64 ", the restripe at its start (reshape_position %" PRIu64 ")\n", list, events,
	       pos);
	return 0;
}
