/* SPDX-License-Identifier: MIT */
/*
 * The configuration file (/etc/uraid/uraid.conf, or --config=FILE), in
 * mdadm.conf's words where they fit:
 *
 *   DEVICE /dev/sd[bcd] /srv/images/d?.img      globs of devices to scan
 *   DEVICE partitions                          every partition of /proc/partitions
 *   ARRAY /dev/md/data uuid=... spare-group=g socket=/run/data.sock
 *   MAILADDR root                              the monitor's mail recipient
 *   PROGRAM /usr/local/sbin/raid-event         the monitor's program
 *
 * As in mdadm.conf: '#' at the start of a word (outside quotes) starts a
 * comment, a line that starts with white space continues the one before,
 * keywords are case-insensitive. PROGRAM is one path (run without a
 * shell); MAILADDR, MAILFROM or PROGRAM given twice: the first counts. ARRAY takes
 * an optional device name first, then key=value words: mdadm's (uuid, name,
 * devices, spares, spare-group, level, num-devices, metadata) and uraid
 * serve's options by their long names (socket, listen, export, threads, ...,
 * see config_serve_keys). Unknown keywords and keys are errors that name the
 * line; mdadm keywords that mean nothing to uraid (HOMEHOST, CREATE, AUTO,
 * POLICY) are accepted and ignored, so that an existing mdadm.conf's lines
 * can be pasted.
 */
#ifndef URAID_OPS_CONFIG_H
#define URAID_OPS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define URAID_CONFIG_DEFAULT "/etc/uraid/uraid.conf"

/* A serve option of an ARRAY line: the long option's name without "--",
 * and its value (NULL for a flag such as read-only). */
struct config_option {
	const char *key;                /* points into config_serve_keys */
	char *value;
};

struct config_array {
	unsigned line;                  /* where it was written, for messages */
	char *devname;                  /* the optional first word, or NULL */
	bool has_uuid;
	uint8_t uuid[16];
	char *name;                     /* the md array name (superblock), or NULL */
	char **devices;                 /* devices=: globs of its members only */
	unsigned ndevices;
	int spares;                     /* spares=: expected spares, -1 when not given */
	char *spare_group;              /* spare-group=, or NULL */
	int level;                      /* level=: md level number, or -100 when not given */
	int num_devices;                /* num-devices=, -1 when not given */
	struct config_option *serve;    /* uraid serve options for this array */
	unsigned nserve;
};

struct uraid_config {
	char *path;
	char **device_globs;            /* DEVICE words other than the keywords */
	unsigned ndevice_globs;
	bool partitions;                /* DEVICE partitions */
	bool any_device_line;           /* a DEVICE line was given at all */
	struct config_array *arrays;
	unsigned narrays;
	char *mailaddr, *mailfrom, *program;
};

/*
 * Read the file at path into cfg (zeroed first). Returns 0, -ENOENT when it
 * does not exist (err says so), or another -errno with one line in err that
 * names the file and line ("FILE:LINE: unknown key 'x' in ARRAY; ..."); for
 * a line continued on others, LINE is where it starts.
 * On an error cfg holds nothing to free.
 */
int config_load(const char *path, struct uraid_config *cfg, char *err, size_t errlen);
/* The same from text in memory (name is used in messages). */
int config_parse(const char *name, const char *text, struct uraid_config *cfg, char *err,
		 size_t errlen);
void config_free(struct uraid_config *cfg);

/* NULL-terminated: the serve options an ARRAY line may carry, named as
 * serve's long options, except "export" for serve's --name (ARRAY's name=
 * is mdadm's, the array name in the superblocks). */
extern const char *const config_serve_keys[];
/* Does key take a value (false: a flag, written as the bare key)? */
bool config_serve_key_has_value(const char *key);

/* The first ARRAY entry that names this array: its uuid= equals uuid (when
 * the entry has one) and its name= equals name, with or without "HOST:"
 * on either side (when the entry has one and name is not NULL); an entry
 * with neither does not match. NULL: none. */
const struct config_array *config_find_array(const struct uraid_config *cfg,
					     const uint8_t uuid[16], const char *name);

/*
 * Call fn for each candidate device path the DEVICE lines name (globs
 * expanded in order, "partitions" as /dev/NAME for each entry of
 * /proc/partitions), each path once. With no DEVICE line, the default is
 * "partitions" as mdadm's. fn returns 0 to go on, non-zero to stop (that
 * value is returned). Returns 0, or -errno when /proc/partitions cannot be
 * read.
 */
int config_for_each_device(const struct uraid_config *cfg,
			   int (*fn)(const char *path, void *arg), void *arg);
/* The same for a list of globs given on a command line (no "partitions"
 * unless a word is literally "partitions"). */
int config_for_each_glob(char *const *globs, unsigned nglobs,
			 int (*fn)(const char *path, void *arg), void *arg);

#endif
