// SPDX-License-Identifier: MIT
/*
 * --compare's key table and the cross product of its axes (see compare.h).
 * What a level can be made of is asked of the level's descriptor
 * (uraid/level.h), never of a table here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/engine.h>
#include <uraid/geom.h>
#include <uraid/level.h>

#include "bench/compare.h"
#include "bench/svg.h"
#include "common/errmsg.h"
#include "common/size_parse.h"

/* ---- the keys ---- */

static int parse_level(const char *s, size_t len, struct bench_compare_value *v, char *err,
		       size_t errlen)
{
	char word[32];
	int level;

	snprintf(word, sizeof(word), "%.*s", (int)len, s);
	if (len >= sizeof(word) || uraid_level_parse(word, &level) || !uraid_level_info(level))
		return uraid_errf(err, errlen, -EINVAL, "--compare level=%s: not a level uraid "
				  "runs (0, 1, 4, 5, 6, 10 or raid5...)", word);
	v->num = (uint64_t)level;
	snprintf(v->text, sizeof(v->text), "%s", uraid_level_name(level));
	return 0;
}

static int apply_level(const struct bench_compare_value *v, struct bench_workload *wl,
		       struct bench_targets *tg, char *why, size_t whylen)
{
	(void)wl; (void)why; (void)whylen;
	tg->level = (int)v->num;
	return 0;
}

static int parse_members(const char *s, size_t len, struct bench_compare_value *v, char *err,
			 size_t errlen)
{
	char word[16], *e;

	snprintf(word, sizeof(word), "%.*s", (int)len, s);
	unsigned long n = strtoul(word, &e, 10);
	if (len >= sizeof(word) || e == word || *e || word[0] == '-' || !n ||
	    n > BENCH_MAX_TARGETS)
		return uraid_errf(err, errlen, -EINVAL, "--compare members=%s: a count 1..%d",
				  word, BENCH_MAX_TARGETS);
	v->num = n;
	snprintf(v->text, sizeof(v->text), "%lu", n);
	return 0;
}

/* The first N members (the plan has checked that N were given). */
static int apply_members(const struct bench_compare_value *v, struct bench_workload *wl,
			 struct bench_targets *tg, char *why, size_t whylen)
{
	(void)wl; (void)why; (void)whylen;
	tg->npaths = (unsigned)v->num;
	return 0;
}

/* As --chunk (the same parser): a plain number is KiB, a multiple of 4 KiB. */
static int parse_chunk(const char *s, size_t len, struct bench_compare_value *v, char *err,
		       size_t errlen)
{
	char word[24];
	uint64_t bytes;

	snprintf(word, sizeof(word), "%.*s", (int)len, s);
	if (len >= sizeof(word) || size_parse(word, 1024, &bytes) || bytes < 4096 ||
	    bytes % 4096 || bytes > (1ull << 31))
		return uraid_errf(err, errlen, -EINVAL, "--compare chunk=%s: a multiple of 4K up "
				  "to 2G (64K, 512K, 1M; a plain number is KiB)", word);
	v->num = bytes >> 10;
	svg_format(v->text, sizeof(v->text), SVG_UNIT_BYTES, (double)bytes, 0);
	return 0;
}

static int apply_chunk(const struct bench_compare_value *v, struct bench_workload *wl,
		       struct bench_targets *tg, char *why, size_t whylen)
{
	const struct uraid_level_info *li = uraid_level_info(tg->level);

	(void)wl; (void)why; (void)whylen;
	if (li && li->chunk == URAID_CHUNK_NONE)
		return 0;       /* does not apply (applies() says so): no chunk set */
	tg->chunk_kib = (uint32_t)v->num;      /* checked by chunk_fits() with the base's */
	return 0;
}

/*
 * Does a chunk of kib KiB fit level li? The one check for a chunk from
 * the chunk axis and for --chunk given for every configuration, made while
 * planning so that a configuration it rules out is skipped before anything
 * is written (the rules are the create plan's: setup/create_plan.c).
 */
static int chunk_fits(const struct uraid_level_info *li, uint32_t kib, char *why,
		      size_t whylen)
{
	char sz[32];

	if (!kib || li->chunk == URAID_CHUNK_NONE)
		return 0;
	svg_format(sz, sizeof(sz), SVG_UNIT_BYTES, (double)kib * 1024, 0);
	if (kib % 4 || kib > (1u << 21)) {
		snprintf(why, whylen, "a chunk of %s is not a multiple of 4 KiB up to 2 GiB", sz);
		return 1;
	}
	if (li->chunk_pow2 && (kib & (kib - 1))) {
		snprintf(why, whylen, "%s takes a power-of-two chunk, not %s", li->name, sz);
		return 1;
	}
	return 0;
}

static bool chunk_applies(const struct bench_targets *tg)
{
	const struct uraid_level_info *li = uraid_level_info(tg->level);
	return li && li->chunk != URAID_CHUNK_NONE;
}

/* A layout name is checked against each configuration's level when applied. */
static int parse_layout(const char *s, size_t len, struct bench_compare_value *v, char *err,
			size_t errlen)
{
	if (!len || len >= sizeof(v->word))
		return uraid_errf(err, errlen, -EINVAL, "--compare layout=%.*s: a layout name "
				  "(left-symmetric, n2, f2, ...)", (int)len, s);
	snprintf(v->word, sizeof(v->word), "%.*s", (int)len, s);
	snprintf(v->text, sizeof(v->text), "%s", v->word);
	return 0;
}

static int apply_layout(const struct bench_compare_value *v, struct bench_workload *wl,
			struct bench_targets *tg, char *why, size_t whylen)
{
	const struct uraid_level_info *li = uraid_level_info(tg->level);
	uint32_t layout;

	(void)wl;
	if (!li || !li->has_layouts)
		return 0;       /* does not apply */
	if (uraid_layout_parse(tg->level, v->word, &layout)) {
		snprintf(why, whylen, "%s is not a %s layout", v->word, li->name);
		return 1;
	}
	if (!uraid_layout_valid(tg->level, layout, tg->npaths)) {
		snprintf(why, whylen, "%s %s does not work on %u members", li->name, v->word,
			 tg->npaths);
		return 1;
	}
	tg->layout_given = true;
	tg->layout = layout;
	return 0;
}

static bool layout_applies(const struct bench_targets *tg)
{
	const struct uraid_level_info *li = uraid_level_info(tg->level);
	return li && li->has_layouts;
}

/* The write policy of the array (the engine's write-back cache at its
   default size, or none). */
static int parse_write_cache(const char *s, size_t len, struct bench_compare_value *v,
			     char *err, size_t errlen)
{
	if (len == 7 && !strncmp(s, "through", 7))
		v->num = URAID_WRITE_THROUGH;
	else if (len == 4 && !strncmp(s, "back", 4))
		v->num = URAID_WRITE_BACK;
	else
		return uraid_errf(err, errlen, -EINVAL, "--compare write-cache=%.*s: through or "
				  "back", (int)len, s);
	snprintf(v->text, sizeof(v->text), "%s", v->num == URAID_WRITE_BACK ? "back" : "through");
	return 0;
}

static int apply_write_cache(const struct bench_compare_value *v, struct bench_workload *wl,
			     struct bench_targets *tg, char *why, size_t whylen)
{
	(void)wl; (void)why; (void)whylen;
	tg->write_cache = (uint32_t)v->num;
	return 0;
}

/*
 * The keys, in the order their values are applied (a layout is read for
 * the level set before it). A new key (write-cache=through,back,
 * read-ahead=...) is one entry here: its parser sets the value, its apply
 * sets the field of struct bench_targets or bench_workload it stands for.
 */
static const struct bench_compare_key keys[] = {
	{ "level", "0, 1, 4, 5, 6, 10", parse_level, apply_level, NULL },
	{ "members", "counts up to the DEVICEs given", parse_members, apply_members, NULL },
	{ "chunk", "sizes, multiples of 4K", parse_chunk, apply_chunk, chunk_applies },
	{ "layout", "the levels' layout names", parse_layout, apply_layout, layout_applies },
	{ "write-cache", "through, back", parse_write_cache, apply_write_cache, NULL },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

const struct bench_compare_key *bench_compare_key_at(unsigned i)
{
	return i < NKEYS ? &keys[i] : NULL;
}

/* ---- parsing ---- */

int bench_compare_parse(const char *arg, struct bench_compare *cmp, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	const struct bench_compare_key *k = NULL;
	char names[128] = "";

	for (unsigned i = 0; i < NKEYS; i++) {
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", keys[i].name);
		if (eq && (size_t)(eq - arg) == strlen(keys[i].name) &&
		    !strncmp(arg, keys[i].name, (size_t)(eq - arg)))
			k = &keys[i];
	}
	if (!k)
		return uraid_errf(err, errlen, -EINVAL, "--compare=%s: want KEY=V1,V2,... with "
				  "KEY one of %s", arg, names);
	/* the axes stay in table order: find where this key goes */
	unsigned at = 0;
	for (; at < cmp->naxes; at++) {
		if (cmp->axis[at].key == k)
			return uraid_errf(err, errlen, -EINVAL, "--compare=%s: %s given twice (list "
					  "its values in one --compare)", arg, k->name);
		if (cmp->axis[at].key > k)
			break;
	}
	if (cmp->naxes == BENCH_COMPARE_MAX_KEYS)
		return uraid_errf(err, errlen, -EINVAL, "--compare: at most %d keys",
				  BENCH_COMPARE_MAX_KEYS);
	struct bench_compare_axis ax = { .key = k };
	for (const char *p = eq + 1;;) {
		size_t len = strcspn(p, ",");
		if (ax.nval == BENCH_COMPARE_MAX_VALUES)
			return uraid_errf(err, errlen, -EINVAL, "--compare=%s: at most %d values",
					  arg, BENCH_COMPARE_MAX_VALUES);
		if (!len)
			return uraid_errf(err, errlen, -EINVAL, "--compare=%s: an empty value; want "
					  "%s=V1,V2,... (%s)", arg, k->name, k->want);
		int rc = k->parse(p, len, &ax.val[ax.nval], err, errlen);
		if (rc)
			return rc;
		for (unsigned i = 0; i < ax.nval; i++)
			if (!strcmp(ax.val[i].text, ax.val[ax.nval].text))
				return uraid_errf(err, errlen, -EINVAL, "--compare=%s: %s given twice",
						  arg, ax.val[i].text);
		ax.nval++;
		if (!p[len])
			break;
		p += len + 1;
	}
	memmove(&cmp->axis[at + 1], &cmp->axis[at], (cmp->naxes - at) * sizeof(cmp->axis[0]));
	cmp->axis[at] = ax;
	cmp->naxes++;
	return 0;
}

/* ---- the configurations ---- */

int bench_compare_apply(const struct bench_compare *cmp, const struct bench_cell *c,
			const struct bench_workload *wl0, const struct bench_targets *tg0,
			struct bench_workload *wl, struct bench_targets *tg, char *why,
			size_t whylen)
{
	*wl = *wl0;
	*tg = *tg0;
	tg->kind = BENCH_ARRAY;
	tg->flags |= BENCH_CREATE;
	for (unsigned a = 0; a < cmp->naxes; a++) {
		const struct bench_compare_axis *ax = &cmp->axis[a];
		if (ax->key->apply(&ax->val[c->cmp[a]], wl, tg, why, whylen))
			return 1;
	}
	const struct uraid_level_info *li = uraid_level_info(tg->level);
	if (!li) {
		snprintf(why, whylen, "uraid does not run level %d", tg->level);
		return 1;
	}
	if (tg->npaths < li->create_min_members) {
		snprintf(why, whylen, "%s needs at least %u members, not %u", li->name,
			 li->create_min_members, tg->npaths);
		return 1;
	}
	/* what --chunk and --layout gave for the base does not bind a level without them */
	if (li->chunk == URAID_CHUNK_NONE)
		tg->chunk_kib = 0;
	if (chunk_fits(li, tg->chunk_kib, why, whylen))
		return 1;
	if (!li->has_layouts)
		tg->layout_given = false;
	return 0;
}

/* Do a and b (normalised) make the same array: every axis the same value? */
static bool same_config(const struct bench_compare *cmp, const struct bench_cell *a,
			const struct bench_cell *b)
{
	for (unsigned i = 0; i < cmp->naxes; i++)
		if (a->cmp[i] != b->cmp[i])
			return false;
	return true;
}

/* The label of c: its values, without the axes marked in c->cmp_unused. */
static void label_of(const struct bench_compare *cmp, struct bench_cell *c)
{
	size_t n = 0;

	c->label[0] = 0;
	for (unsigned a = 0; a < cmp->naxes && n < sizeof(c->label); a++) {
		const struct bench_compare_axis *ax = &cmp->axis[a];
		if (c->cmp_unused & (1u << a))
			continue;
		const char *v = ax->val[c->cmp[a]].text;
		/* a level speaks for itself: "raid5", not "level=raid5" */
		if (!strcmp(ax->key->name, "level"))
			n += (size_t)snprintf(c->label + n, sizeof(c->label) - n, "%s%s", n ? " " : "",
					      v);
		else
			n += (size_t)snprintf(c->label + n, sizeof(c->label) - n, "%s%s=%s",
					      n ? " " : "", ax->key->name, v);
	}
}

/* The values of c with the axes that do not apply to its configuration set to 0. */
static void normalise(const struct bench_compare *cmp, const struct bench_cell *c,
		      const struct bench_targets *tg, struct bench_cell *out)
{
	*out = *c;
	for (unsigned a = 0; a < cmp->naxes; a++)
		if (cmp->axis[a].key->applies && !cmp->axis[a].key->applies(tg))
			out->cmp[a] = 0;
}

int bench_compare_plan(const struct bench_compare *cmp, const struct bench_targets *tg0,
		       struct bench_cell **cells, unsigned *ncells, char *err, size_t errlen)
{
	unsigned n = 1;
	bool has_level = tg0->flags & BENCH_CREATE;

	for (unsigned a = 0; a < cmp->naxes; a++) {
		const struct bench_compare_axis *ax = &cmp->axis[a];
		n *= ax->nval;
		if (n > BENCH_COMPARE_MAX_CONFIGS)
			return uraid_errf(err, errlen, -E2BIG, "--compare: more than %d "
					  "configurations", BENCH_COMPARE_MAX_CONFIGS);
		has_level |= !strcmp(ax->key->name, "level");
		for (unsigned v = 0; !strcmp(ax->key->name, "members") && v < ax->nval; v++)
			if (ax->val[v].num > tg0->npaths)
				return uraid_errf(err, errlen, -EINVAL, "--compare members=%s: only "
						  "%u DEVICEs given", ax->val[v].text, tg0->npaths);
	}
	if (!cmp->naxes)
		return uraid_errf(err, errlen, -EINVAL, "--compare: no axis");
	if (!has_level)
		return uraid_errf(err, errlen, -EINVAL, "--compare needs the array's level: "
				  "--level=L or --compare=level=...");
	struct bench_cell *c = calloc(n, sizeof(*c));
	struct bench_cell *norm = calloc(n, sizeof(*norm));
	if (!c || !norm) {
		free(c);
		free(norm);
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	}
	for (unsigned k = 0; k < n; k++) {
		/* k in mixed radix, the first axis the slowest */
		unsigned rest = k;
		for (unsigned a = cmp->naxes; a-- > 0;) {
			c[k].cmp[a] = (uint8_t)(rest % cmp->axis[a].nval);
			rest /= cmp->axis[a].nval;
		}
		c[k].compare = true;
		c[k].read_pct = -1;
		label_of(cmp, &c[k]);

		struct bench_workload wl;
		struct bench_targets tg;
		struct bench_workload wl0 = { 0 };
		if (bench_compare_apply(cmp, &c[k], &wl0, tg0, &wl, &tg, c[k].skip,
					sizeof(c[k].skip)))
			continue;
		normalise(cmp, &c[k], &tg, &norm[k]);
		bool same = false;
		for (unsigned j = 0; j < k; j++) {
			if (c[j].skip[0] || !same_config(cmp, &norm[j], &norm[k]))
				continue;
			/* name the key whose value made no difference */
			const char *key = "a value";
			for (unsigned a = 0; a < cmp->naxes; a++)
				if (c[j].cmp[a] != c[k].cmp[a])
					key = cmp->axis[a].key->name;
			snprintf(c[k].skip, sizeof(c[k].skip), "the same array as '%.40s' (%s has "
				 "no %s)", c[j].label, uraid_level_name(tg.level) ?
				 uraid_level_name(tg.level) : "it", key);
			same = true;
			break;
		}
		if (same)
			continue;       /* its full label says which value made no difference */
		for (unsigned a = 0; a < cmp->naxes; a++)
			if (cmp->axis[a].key->applies && !cmp->axis[a].key->applies(&tg))
				c[k].cmp_unused |= (uint8_t)(1u << a);
		label_of(cmp, &c[k]);
	}
	free(norm);
	/* nothing to run: refuse before the members are created or written */
	unsigned k = 0;
	while (k < n && c[k].skip[0])
		k++;
	if (k == n) {
		int rc = uraid_errf(err, errlen, -EINVAL, "--compare: no configuration can be "
				    "made ('%s': %s)", c[0].label, c[0].skip);
		free(c);
		return rc;
	}
	*cells = c;
	*ncells = n;
	return 0;
}

size_t bench_compare_config(const struct bench_compare *cmp, const struct bench_cell *c,
			    char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = 0;
	for (unsigned a = 0; a < cmp->naxes && n < len; a++) {
		if (c->cmp_unused & (1u << a))
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", n ? ";" : "",
				      cmp->axis[a].key->name, cmp->axis[a].val[c->cmp[a]].text);
	}
	return n;
}
