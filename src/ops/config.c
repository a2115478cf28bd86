// SPDX-License-Identifier: MIT
/* The configuration file: mdadm.conf's words plus uraid serve's options (config.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/superblock.h>

#include "common/full_io.h"
#include "ops/config.h"

/* Files larger than this are not configuration files. */
#define CONFIG_MAX_BYTES (1u << 20)
#define CONFIG_MAX_ARRAYS 1024u
#define CONFIG_MAX_WORDS 4096u

const char *const config_serve_keys[] = {
	"socket", "listen", "socket-mode", "export", "description", "read-only", "threads",
	"control", "pid-file", "speed-min", "speed-max", "max-connections",
	"handshake-timeout", "max-buffer-memory", "tls", "tls-psk", "tls-certificates",
	"tls-verify-peer", "metrics", "write-cache", "cache-size", "stripe-cache", "read-ahead",
	NULL,
};

/* Flags: written bare ("read-only"), or as key=yes|no. */
static const char *const flag_keys[] = { "read-only", "tls-verify-peer", NULL };

static bool in_list(const char *const *list, const char *word)
{
	for (; *list; list++)
		if (!strcmp(*list, word))
			return true;
	return false;
}

bool config_serve_key_has_value(const char *key)
{
	return !in_list(flag_keys, key);
}

/* The parse in progress. */
struct parser {
	const char *name;
	unsigned line;
	struct uraid_config *cfg;
	char *err;
	size_t errlen;
};

static int fail(struct parser *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "%s:%u: %s", p->name, p->line, msg);
	return -EINVAL;
}

static int push_string(char ***list, unsigned *n, const char *s)
{
	char **grown = realloc(*list, (*n + 1) * sizeof(**list));
	if (!grown)
		return -ENOMEM;
	*list = grown;
	if (!(grown[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int set_string(char **dst, const char *s)
{
	free(*dst);
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

/* mdadm's keyword rule: case-insensitive, at least the first four letters
 * ("MAIL" is MAILADDR), and no more letters than the keyword has. */
static bool keyword_is(const char *word, const char *keyword)
{
	size_t n = strlen(word);
	return n >= 4 && n <= strlen(keyword) && !strncasecmp(word, keyword, n);
}

/* An md level as ARRAY's level= writes it: "raid5", "5", "linear", ... */
static int parse_level(const char *s, int *level)
{
	static const struct { const char *name; int level; } names[] = {
		{ "linear", -1 }, { "raid0", 0 }, { "stripe", 0 }, { "raid1", 1 },
		{ "mirror", 1 }, { "raid4", 4 }, { "raid5", 5 }, { "raid6", 6 },
		{ "raid10", 10 },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i].name)) {
			*level = names[i].level;
			return 0;
		}
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || *end || !(v == 0 || v == 1 || v == 4 || v == 5 || v == 6 || v == 10))
		return -EINVAL;
	*level = (int)v;
	return 0;
}

static int parse_count(const char *s, int max, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* A comma-separated list of globs (devices=) onto the entry. */
static int add_device_list(struct config_array *a, const char *value)
{
	char *copy = strdup(value), *save = NULL;
	int rc = copy ? 0 : -ENOMEM;

	for (char *w = copy ? strtok_r(copy, ",", &save) : NULL; w && !rc;
	     w = strtok_r(NULL, ",", &save))
		rc = push_string(&a->devices, &a->ndevices, w);
	free(copy);
	return rc;
}

static int add_serve_option(struct parser *p, struct config_array *a, const char *key,
			    const char *value)
{
	const char *const *k;
	for (k = config_serve_keys; *k && strcmp(*k, key); k++)
		;
	if (!*k)
		return fail(p, "unknown key '%s' in ARRAY; see 'man uraid', CONFIGURATION FILE", key);
	for (unsigned i = 0; i < a->nserve; i++)
		if (a->serve[i].key == *k)
			return fail(p, "'%s' given twice in one ARRAY line", key);
	if (config_serve_key_has_value(*k)) {
		if (!value || !*value)
			return fail(p, "'%s' in ARRAY needs a value: %s=VALUE", key, key);
	} else if (value && strcasecmp(value, "yes")) {
		if (strcasecmp(value, "no"))
			return fail(p, "'%s' in ARRAY is yes or no, not '%s'", key, value);
		return 0;               /* key=no: as if not written */
	}
	struct config_option *grown = realloc(a->serve, (a->nserve + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	a->serve = grown;
	grown[a->nserve].key = *k;
	grown[a->nserve].value = NULL;
	if (config_serve_key_has_value(*k) && !(grown[a->nserve].value = strdup(value)))
		return -ENOMEM;
	a->nserve++;
	return 0;
}

/* One key=value word of an ARRAY line. */
static int array_word(struct parser *p, struct config_array *a, char *word)
{
	char *eq = strchr(word, '=');
	const char *value = eq ? eq + 1 : NULL;
	if (eq)
		*eq = 0;
	for (char *c = word; *c; c++)
		*c = (char)tolower((unsigned char)*c);

	if (!strcmp(word, "uuid")) {
		if (!value || uraid_uuid_parse(value, a->uuid))
			return fail(p, "uuid= wants 32 hex digits, e.g. "
				    "uuid=3aaa0122:29827cfa:5331ad66:ca767371");
		a->has_uuid = true;
		return 0;
	}
	if (!strcmp(word, "name")) {
		if (!value || !*value || strlen(value) > 32)
			return fail(p, "name= wants the array's name (1 to 32 characters)");
		return set_string(&a->name, value);
	}
	if (!strcmp(word, "devices")) {
		if (!value || !*value)
			return fail(p, "devices= wants a comma-separated list of devices or globs");
		return add_device_list(a, value);
	}
	if (!strcmp(word, "spares")) {
		if (!value || parse_count(value, 1024, &a->spares))
			return fail(p, "spares= wants a number of spares (0 to 1024)");
		return 0;
	}
	if (!strcmp(word, "spare-group")) {
		if (!value || !*value)
			return fail(p, "spare-group= wants a group name");
		return set_string(&a->spare_group, value);
	}
	if (!strcmp(word, "level")) {
		if (!value || parse_level(value, &a->level))
			return fail(p, "level= wants an md level (linear, raid0, raid1, raid4, "
				    "raid5, raid6, raid10)");
		return 0;
	}
	if (!strcmp(word, "num-devices")) {
		if (!value || parse_count(value, 4096, &a->num_devices) || !a->num_devices)
			return fail(p, "num-devices= wants the number of member slots");
		return 0;
	}
	if (!strcmp(word, "metadata")) {
		if (!value || (strcmp(value, "1.0") && strcmp(value, "1.1") &&
			       strcmp(value, "1.2") && strcmp(value, "1")))
			return fail(p, "metadata=%s: uraid runs md's 1.0, 1.1 and 1.2 superblocks",
				    value ? value : "");
		return 0;
	}
	if (!strcmp(word, "auto"))      /* mdadm's device-node creation: nothing to do */
		return 0;
	return add_serve_option(p, a, word, value);
}

static int array_line(struct parser *p, char **words, unsigned n)
{
	struct uraid_config *cfg = p->cfg;
	if (cfg->narrays >= CONFIG_MAX_ARRAYS)
		return fail(p, "more than %u ARRAY lines", CONFIG_MAX_ARRAYS);
	struct config_array *grown = realloc(cfg->arrays, (cfg->narrays + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	cfg->arrays = grown;
	struct config_array *a = &grown[cfg->narrays++];
	memset(a, 0, sizeof(*a));
	a->line = p->line;
	a->spares = -1;
	a->level = -100;
	a->num_devices = -1;

	unsigned i = 0;
	if (n > 0 && !strchr(words[0], '=')) {
		if (set_string(&a->devname, words[0]))
			return -ENOMEM;
		i = 1;
	}
	for (; i < n; i++) {
		int rc = array_word(p, a, words[i]);
		if (rc)
			return rc;
	}
	if (!a->has_uuid && !a->name && !a->ndevices)
		return fail(p, "ARRAY needs uuid=, name= or devices= to say which array it is");
	return 0;
}

static int device_line(struct parser *p, char **words, unsigned n)
{
	p->cfg->any_device_line = true;
	for (unsigned i = 0; i < n; i++) {
		if (!strcasecmp(words[i], "partitions")) {
			p->cfg->partitions = true;
		} else if (!strcasecmp(words[i], "containers")) {
			continue;       /* mdadm's IMSM/DDF containers: uraid has none */
		} else {
			int rc = push_string(&p->cfg->device_globs, &p->cfg->ndevice_globs, words[i]);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Where the line's comment starts (len: none): a '#' that starts a word,
 * outside quotes; "a#b" and "'#'" are words. */
static size_t comment_start(const char *s, size_t len)
{
	char quote = 0;
	for (size_t i = 0; i < len; i++) {
		if (quote) {
			quote = s[i] == quote ? 0 : quote;
		} else if (s[i] == '"' || s[i] == '\'') {
			quote = s[i];
		} else if (s[i] == '#' && (i == 0 || isspace((unsigned char)s[i - 1]))) {
			return i;
		}
	}
	return len;
}

/* One logical line (continuations joined), split into words (quotes as
 * mdadm allows them: "..." or '...' around a word with spaces). */
static int logical_line(struct parser *p, char *text)
{
	char *words[64];
	unsigned n = 0;
	char *s = text;

	while (*s) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		if (n == sizeof(words) / sizeof(words[0]))
			return fail(p, "more than %zu words on one line",
				    sizeof(words) / sizeof(words[0]));
		char *out = s;
		words[n++] = out;
		char quote = 0;
		for (; *s && (quote || !isspace((unsigned char)*s)); s++) {
			if (!quote && (*s == '"' || *s == '\''))
				quote = *s;
			else if (quote && *s == quote)
				quote = 0;
			else
				*out++ = *s;
		}
		if (quote)
			return fail(p, "a quote is not closed");
		if (*s)
			s++;
		*out = 0;
	}
	if (!n)
		return 0;

	const char *kw = words[0];
	char **rest = words + 1;
	unsigned nrest = n - 1;
	struct uraid_config *cfg = p->cfg;
	if (keyword_is(kw, "DEVICE"))
		return device_line(p, rest, nrest);
	if (keyword_is(kw, "ARRAY"))
		return array_line(p, rest, nrest);
	if (keyword_is(kw, "MAILADDR") || keyword_is(kw, "MAILFROM") ||
	    keyword_is(kw, "PROGRAM")) {
		if (nrest != 1 && keyword_is(kw, "MAILADDR"))
			return fail(p, "%s wants one address", kw);
		if (nrest > 1 && keyword_is(kw, "PROGRAM"))
			return fail(p, "PROGRAM wants one program's path (it is run without a shell, "
				    "as EVENT ARRAY [MEMBER]); put other arguments in a script");
		if (!nrest)
			return fail(p, "%s wants a value", kw);
		/* MAILFROM keeps its words ("RAID <raid@example.org>"), joined by spaces */
		char joined[1024] = "";
		for (unsigned i = 0; i < nrest; i++) {
			size_t len = strlen(joined);
			if (len + strlen(rest[i]) + 2 > sizeof(joined))
				return fail(p, "%s is too long", kw);
			snprintf(joined + len, sizeof(joined) - len, "%s%s", i ? " " : "", rest[i]);
		}
		char **dst = keyword_is(kw, "MAILADDR") ? &cfg->mailaddr
			     : keyword_is(kw, "MAILFROM") ? &cfg->mailfrom : &cfg->program;
		if (*dst)
			return 0;       /* given twice: the first wins, as in mdadm */
		return set_string(dst, joined);
	}
	if (keyword_is(kw, "HOMEHOST") || keyword_is(kw, "CREATE") || keyword_is(kw, "AUTO") ||
	    keyword_is(kw, "POLICY"))
		return 0;       /* mdadm's, with no meaning for uraid */
	return fail(p, "unknown keyword '%s'; uraid knows DEVICE, ARRAY, MAILADDR, MAILFROM, "
		    "PROGRAM", kw);
}

int config_parse(const char *name, const char *text, struct uraid_config *cfg, char *err,
		 size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	struct parser p = { .name = name, .cfg = cfg, .err = err, .errlen = errlen };
	size_t cap = strlen(text) + 1;
	char *logical = malloc(cap);
	int rc = 0;

	if (!logical || !(cfg->path = strdup(name))) {
		rc = -ENOMEM;
		goto out;
	}
	/* Walk physical lines; a line starting with white space continues the
	   logical one, which is parsed when the next one starts. */
	const char *s = text;
	unsigned line_no = 0, logical_start = 0;
	size_t used = 0;
	for (;;) {
		const char *eol = strchr(s, '\n');
		size_t len = eol ? (size_t)(eol - s) : strlen(s);
		bool at_end = !eol && !len;
		line_no++;
		size_t keep = comment_start(s, len);
		bool blank = true;
		for (size_t i = 0; i < keep; i++)
			if (!isspace((unsigned char)s[i]))
				blank = false;
		bool continues = !at_end && keep && isspace((unsigned char)s[0]) && !blank;
		if (!continues && !blank && used) {
			/* a new logical line starts: finish the previous one */
			logical[used] = 0;
			p.line = logical_start;
			if ((rc = logical_line(&p, logical)))
				goto out;
			used = 0;
		}
		if (!blank) {
			if (!used)
				logical_start = line_no;
			if (used)
				logical[used++] = ' ';
			memcpy(logical + used, s, keep);
			used += keep;
		}
		if (!eol)
			break;
		s = eol + 1;
	}
	if (used) {
		logical[used] = 0;
		p.line = logical_start;
		rc = logical_line(&p, logical);
	}
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", name);
	free(logical);
	if (rc)
		config_free(cfg);
	return rc;
}

int config_load(const char *path, struct uraid_config *cfg, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX_BYTES) {
		snprintf(err, errlen, "%s: not a regular file of at most %u bytes", path,
			 CONFIG_MAX_BYTES);
		close(fd);
		return -EINVAL;
	}
	char *text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	size_t len = (size_t)st.st_size;
	int rc = uraid_pread_full(fd, text, len, 0);
	close(fd);
	if (rc) {
		snprintf(err, errlen, "%s: read: %s", path, strerror(-rc));
		free(text);
		return rc;
	}
	text[len] = 0;
	if (memchr(text, 0, len)) {
		snprintf(err, errlen, "%s: holds a NUL byte: not a configuration file", path);
		free(text);
		return -EINVAL;
	}
	rc = config_parse(path, text, cfg, err, errlen);
	free(text);
	return rc;
}

static void free_strings(char **list, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

void config_free(struct uraid_config *cfg)
{
	for (unsigned i = 0; i < cfg->narrays; i++) {
		struct config_array *a = &cfg->arrays[i];
		free(a->devname);
		free(a->name);
		free(a->spare_group);
		free_strings(a->devices, a->ndevices);
		for (unsigned j = 0; j < a->nserve; j++)
			free(a->serve[j].value);
		free(a->serve);
	}
	free(cfg->arrays);
	free_strings(cfg->device_globs, cfg->ndevice_globs);
	free(cfg->mailaddr);
	free(cfg->mailfrom);
	free(cfg->program);
	free(cfg->path);
	memset(cfg, 0, sizeof(*cfg));
}

const struct config_array *config_find_array(const struct uraid_config *cfg,
					     const uint8_t uuid[16], const char *name)
{
	for (unsigned i = 0; i < cfg->narrays; i++) {
		const struct config_array *a = &cfg->arrays[i];
		if (!a->has_uuid && !a->name)
			continue;
		if (a->has_uuid && memcmp(a->uuid, uuid, 16))
			continue;
		if (a->name && name && strcmp(a->name, name)) {
			/* "HOST:NAME" and "NAME" are one name; two hosts are not */
			const char *ha = strchr(a->name, ':'), *hn = strchr(name, ':');
			if ((ha && hn) || strcmp(ha ? ha + 1 : a->name, hn ? hn + 1 : name))
				continue;
		}
		if (a->name && !name && !a->has_uuid)
			continue;
		return a;
	}
	return NULL;
}

/* Paths already given to fn, so that each goes once (globs may overlap). */
struct seen {
	char **paths;
	unsigned n;
};

static int visit(struct seen *seen, const char *path, int (*fn)(const char *, void *), void *arg)
{
	for (unsigned i = 0; i < seen->n; i++)
		if (!strcmp(seen->paths[i], path))
			return 0;
	if (seen->n >= CONFIG_MAX_WORDS * 16)
		return 0;
	int rc = push_string(&seen->paths, &seen->n, path);
	return rc ? rc : fn(path, arg);
}

static int visit_glob(struct seen *seen, const char *pattern,
		      int (*fn)(const char *, void *), void *arg)
{
	glob_t g;
	int rc = 0;
	if (glob(pattern, 0, NULL, &g))
		return 0;       /* no match: nothing to scan there */
	for (size_t i = 0; i < g.gl_pathc && !rc; i++)
		rc = visit(seen, g.gl_pathv[i], fn, arg);
	globfree(&g);
	return rc;
}

/* /dev/NAME for each line of /proc/partitions ("major minor #blocks name"). */
static int visit_partitions(struct seen *seen, int (*fn)(const char *, void *), void *arg)
{
	FILE *f = fopen("/proc/partitions", "re");
	if (!f)
		return -errno;
	char line[256], name[128], path[160];
	unsigned major, minor;
	unsigned long long blocks;
	int rc = 0;
	while (!rc && fgets(line, sizeof(line), f))
		if (sscanf(line, " %u %u %llu %127s", &major, &minor, &blocks, name) == 4) {
			snprintf(path, sizeof(path), "/dev/%s", name);
			rc = visit(seen, path, fn, arg);
		}
	fclose(f);
	return rc;
}

static int for_each(char *const *globs, unsigned n, bool partitions,
		    int (*fn)(const char *, void *), void *arg)
{
	struct seen seen = { 0 };
	int rc = 0;
	for (unsigned i = 0; i < n && !rc; i++)
		rc = !strcmp(globs[i], "partitions") ? visit_partitions(&seen, fn, arg)
						       : visit_glob(&seen, globs[i], fn, arg);
	if (!rc && partitions)
		rc = visit_partitions(&seen, fn, arg);
	free_strings(seen.paths, seen.n);
	return rc;
}

int config_for_each_device(const struct uraid_config *cfg,
			   int (*fn)(const char *path, void *arg), void *arg)
{
	bool partitions = cfg->partitions || !cfg->any_device_line;
	return for_each(cfg->device_globs, cfg->ndevice_globs, partitions, fn, arg);
}

int config_for_each_glob(char *const *globs, unsigned nglobs,
			 int (*fn)(const char *path, void *arg), void *arg)
{
	return for_each(globs, nglobs, false, fn, arg);
}
