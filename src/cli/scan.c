// SPDX-License-Identifier: MIT
/*
 * Arrays found by superblock among candidate devices (scan.h). A candidate
 * is an untrusted disk: it is opened read-only, only regular files and
 * block devices are read (a FIFO or a socket would block or mean nothing),
 * and its superblock is used only when format/'s validation accepted it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/superblock.h>

#include "cli/cli.h"
#include "cli/scan.h"

/* More candidates than this are not read (a glob gone wrong). */
#define SCAN_MAX_CANDIDATES 4096u

struct scan_ctx {
	const char *cmd;
	bool verbose;
	struct scan_result *r;
	struct uraid_probe *probe;
	dev_t *seen_dev;                /* files already read, by device and inode */
	ino_t *seen_ino;
	unsigned nseen;
	int error;                      /* -ENOMEM stops the scan */
};

const char *scan_short_name(const char *set_name)
{
	const char *colon = strchr(set_name, ':');
	return colon ? colon + 1 : set_name;
}

bool scan_name_printable(const char *name)
{
	if (!*name)
		return false;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		if (*c <= ' ' || *c >= 0x7f || *c == '"' || *c == '\'' || *c == '#' ||
		    *c == '\\' || *c == '=' || *c == ',')
			return false;
	return true;
}

static void skipped(struct scan_ctx *x, const char *path, const char *why)
{
	if (x->verbose)
		fprintf(stderr, "uraid %s: %s: skipped: %s\n", x->cmd, path, why);
}

static struct scan_array *array_for(struct scan_ctx *x, const struct uraid_sb *sb, int minor)
{
	struct scan_result *r = x->r;
	for (unsigned i = 0; i < r->narrays; i++)
		if (!memcmp(r->arrays[i].uuid, sb->set_uuid, 16))
			return &r->arrays[i];
	struct scan_array *grown = realloc(r->arrays, (r->narrays + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	r->arrays = grown;
	struct scan_array *a = &grown[r->narrays++];
	memset(a, 0, sizeof(*a));
	memcpy(a->uuid, sb->set_uuid, 16);
	snprintf(a->name, sizeof(a->name), "%s", sb->set_name);
	a->minor = minor;
	a->level = sb->level;
	a->raid_disks = sb->raid_disks;
	a->events = sb->events;
	return a;
}

static int add_member(struct scan_ctx *x, const char *path, const struct uraid_sb *sb, int minor)
{
	struct scan_array *a = array_for(x, sb, minor);
	if (!a)
		return -ENOMEM;
	/* two paths to one disk (an image and its loop device, multipath) or a
	   copy of a member: one device number is one member; the fresher stays */
	for (unsigned i = 0; i < a->nmembers; i++) {
		struct scan_member *m = &a->members[i];
		if (m->dev_number != sb->dev_number)
			continue;
		const char *kept = path, *dropped = m->path;
		if (sb->events <= m->events) {
			kept = m->path;
			dropped = path;
		}
		if (x->verbose)
			fprintf(stderr, "uraid %s: %s: skipped: device number %u of array '%s' "
				"again, as %s (two paths to one disk, or a copy)\n", x->cmd, dropped,
				sb->dev_number, a->name, kept);
		if (kept != path)
			return 0;
		/* the older one goes; the fresher is added below */
		if (m->role == URAID_ROLE_SPARE)
			a->spares--;
		free(m->path);
		a->members[i] = a->members[--a->nmembers];
		break;
	}
	struct scan_member *grown = realloc(a->members, (a->nmembers + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	a->members = grown;
	struct scan_member *m = &grown[a->nmembers];
	if (!(m->path = strdup(path)))
		return -ENOMEM;
	a->nmembers++;
	m->role = uraid_sb_role(sb);
	m->dev_number = sb->dev_number;
	m->events = sb->events;
	if (m->role == URAID_ROLE_SPARE)
		a->spares++;
	/* the freshest member speaks for the array (its name, level) */
	if (sb->events > a->events) {
		a->events = sb->events;
		a->level = sb->level;
		a->raid_disks = sb->raid_disks;
		snprintf(a->name, sizeof(a->name), "%s", sb->set_name);
	}
	return 0;
}

/* The same file under another name (a link, /dev/disk/by-id/...)? */
static bool seen_before(struct scan_ctx *x, const struct stat *st)
{
	dev_t dev = S_ISBLK(st->st_mode) ? st->st_rdev : st->st_dev;
	ino_t ino = S_ISBLK(st->st_mode) ? 0 : st->st_ino;
	for (unsigned i = 0; i < x->nseen; i++)
		if (x->seen_dev[i] == dev && x->seen_ino[i] == ino)
			return true;
	dev_t *d = realloc(x->seen_dev, (x->nseen + 1) * sizeof(*d));
	if (d)
		x->seen_dev = d;
	ino_t *n = realloc(x->seen_ino, (x->nseen + 1) * sizeof(*n));
	if (n)
		x->seen_ino = n;
	if (d && n) {
		x->seen_dev[x->nseen] = dev;
		x->seen_ino[x->nseen] = ino;
		x->nseen++;
	}
	return false;
}

static int look_at(const char *path, void *arg)
{
	struct scan_ctx *x = arg;
	struct stat st;
	char why[200];

	if (x->r->candidates >= SCAN_MAX_CANDIDATES) {
		fprintf(stderr, "uraid %s: more than %u candidate devices; the rest are not read "
			"(narrow the DEVICE lines or globs)\n", x->cmd, SCAN_MAX_CANDIDATES);
		return 1;
	}
	x->r->candidates++;
	/* opened first, then looked at: what is read is what was checked (no
	   swap between a stat and the open); O_NONBLOCK so that a FIFO's open
	   does not wait for a writer, O_NOCTTY so that a terminal is not taken */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		x->r->unreadable++;
		snprintf(why, sizeof(why), "cannot open: %s", strerror(errno));
		skipped(x, path, why);
		return 0;
	}
	if (fstat(fd, &st) < 0) {
		x->r->unreadable++;
		snprintf(why, sizeof(why), "cannot stat: %s", strerror(errno));
		skipped(x, path, why);
		close(fd);
		return 0;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		skipped(x, path, "not a regular file or a block device");
		close(fd);
		return 0;
	}
	if (seen_before(x, &st)) {
		skipped(x, path, "the same device as one read before");
		close(fd);
		return 0;
	}
	struct uraid_probe *p = x->probe;
	int rc = uraid_probe_fd(fd, p);
	close(fd);
	if (rc) {
		x->r->unreadable++;
		snprintf(why, sizeof(why), "cannot read: %s", strerror(-rc));
		skipped(x, path, why);
		return 0;
	}
	if (p->chosen < 0) {
		skipped(x, path, p->has_md090 ? "md 0.90 superblock (uraid runs 1.x)"
					      : "no md superblock");
		return 0;
	}
	if (p->loc[p->chosen].status) {
		snprintf(why, sizeof(why), "damaged 1.%d superblock: %s", p->chosen,
			 p->loc[p->chosen].reason);
		skipped(x, path, why);
		return 0;
	}
	rc = add_member(x, path, &p->loc[p->chosen].sb, p->chosen);
	if (rc) {
		x->error = rc;
		return 1;
	}
	return 0;
}

int scan_devices(const char *cmd, const struct uraid_config *cfg, char *const *globs,
		 unsigned nglobs, bool verbose, struct scan_result *out)
{
	struct scan_ctx x = { .cmd = cmd, .verbose = verbose, .r = out };
	struct uraid_config none = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	/* a device named on the command line (no glob) must be there to be read:
	   a typing error is not skipped quietly as the candidates of a glob are */
	for (unsigned i = 0; i < nglobs; i++) {
		if (strpbrk(globs[i], "*?[") || !strcmp(globs[i], "partitions"))
			continue;
		/* stat, not open: opening a tape or a terminal can do something */
		struct stat st;
		int e = stat(globs[i], &st) < 0 ? errno : 0;
		if (!e && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
			fprintf(stderr, "uraid %s: %s: not a regular file or a block device; give "
				"the members' image files or disks\n", cmd, globs[i]);
			return -EINVAL;
		}
		if (e) {
			fprintf(stderr, "uraid %s: %s: cannot read: %s; give devices that can be "
				"read (or a glob, whose unreadable matches are skipped)\n", cmd,
				globs[i], strerror(e));
			return -e;
		}
	}
	x.probe = malloc(sizeof(*x.probe));
	if (!x.probe) {
		fprintf(stderr, "uraid %s: out of memory\n", cmd);
		return -ENOMEM;
	}
	if (nglobs)
		rc = config_for_each_glob(globs, nglobs, look_at, &x);
	else
		rc = config_for_each_device(cfg ? cfg : &none, look_at, &x);
	free(x.probe);
	free(x.seen_dev);
	free(x.seen_ino);
	if (x.error) {
		fprintf(stderr, "uraid %s: out of memory\n", cmd);
		scan_result_free(out);
		return x.error;
	}
	if (rc < 0) {
		fprintf(stderr, "uraid %s: cannot read /proc/partitions: %s; give DEVICE lines "
			"in the configuration file or devices on the command line\n", cmd,
			strerror(-rc));
		scan_result_free(out);
		return rc;
	}
	return 0;
}

void scan_result_free(struct scan_result *r)
{
	for (unsigned i = 0; i < r->narrays; i++) {
		for (unsigned j = 0; j < r->arrays[i].nmembers; j++)
			free(r->arrays[i].members[j].path);
		free(r->arrays[i].members);
	}
	free(r->arrays);
	memset(r, 0, sizeof(*r));
}

int scan_load_config(const char *cmd, const char *path, struct uraid_config *cfg)
{
	char err[600];
	const char *file = path ? path : URAID_CONFIG_DEFAULT;
	int rc = config_load(file, cfg, err, sizeof(err));

	if (rc == -ENOENT && !path) {
		memset(cfg, 0, sizeof(*cfg));  /* no default file: no configuration */
		return 0;
	}
	if (rc) {
		fprintf(stderr, "uraid %s: %s%s\n", cmd, err,
			rc == -ENOENT ? "; give an existing file to --config" : "");
		/* a file missing or wrong is the caller's to correct (uraid@.service
		   does not retry exit 2); a read error may pass */
		return rc == -ENOENT || rc == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	}
	return 0;
}

bool scan_requested(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "--scan") || !strcmp(argv[i], "-s"))
			return true;
	}
	return false;
}
