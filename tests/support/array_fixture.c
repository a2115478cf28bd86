// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <uraid/uraid.h>

#include "array_fixture.h"

int fixture_create_array(const char *who, const char *level, const char *layout, unsigned n,
			 unsigned chunk_kib, unsigned minor, const char *const *paths)
{
	struct uraid_create_opts o = {
		.raid_disks = n, .chunk_kib = chunk_kib, .minor = minor,
		.bitmap = URAID_BITMAP_NONE, .flags = URAID_CREATE_ASSUME_CLEAN,
		.paths = paths, .npaths = n, .homehost = "<none>",
	};
	char err[256];

	if (uraid_level_parse(level, &o.level)) {
		fprintf(stderr, "%s: unknown level %s\n", who, level);
		return -1;
	}
	if (layout) {
		if (uraid_layout_parse(o.level, layout, &o.layout)) {
			fprintf(stderr, "%s: unknown layout %s\n", who, layout);
			return -1;
		}
		o.layout_given = true;
	}
	if (uraid_create(&o, NULL, err, sizeof(err))) {
		fprintf(stderr, "%s: create: %s\n", who, err);
		return -1;
	}
	return 0;
}

int fixture_make_file(const char *path, uint64_t bytes)
{
	unlink(path);
	int fd = open(path, O_CREAT | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)bytes)) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}
