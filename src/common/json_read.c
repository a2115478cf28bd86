// SPDX-License-Identifier: MIT
/* A small bounded JSON reader (see json_read.h): recursive descent. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "common/json_read.h"

struct jr_parser {
	const char *p, *start, *end;
	struct jr_doc *d;
	char *err;
	size_t errlen;
};

static int fail(struct jr_parser *ps, int rc, const char *what)
{
	snprintf(ps->err, ps->errlen, "%s at byte %zu", what, (size_t)(ps->p - ps->start));
	return rc;
}

static void skip_space(struct jr_parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
				   *ps->p == '\r'))
		ps->p++;
}

static int new_node(struct jr_parser *ps, enum jr_type type, const char *key)
{
	struct jr_doc *d = ps->d;
	if (d->n == d->cap) {
		if (d->cap >= JR_MAX_NODES)
			return fail(ps, -E2BIG, "too many values");
		unsigned cap = d->cap ? d->cap * 2 : 64;
		struct jr_node *n = realloc(d->node, cap * sizeof(*n));
		if (!n)
			return fail(ps, -ENOMEM, "out of memory");
		d->node = n;
		d->cap = cap;
	}
	struct jr_node *n = &d->node[d->n];
	memset(n, 0, sizeof(*n));
	n->type = type;
	n->key = key;
	n->first = n->next = -1;
	return (int)d->n++;
}

/* A string at ps->p (the opening quote) decoded into the doc's strings;
 * each decoded string is no longer than its text, so the buffer, as long as
 * the whole text, always has room. A UTF-16 surrogate pair becomes one
 * character (4 bytes of UTF-8, for its 12 of text); a lone surrogate is no
 * character and is refused. */
static int parse_string(struct jr_parser *ps, const char **out)
{
	char *o = ps->d->strings + ps->d->used;
	char *begin = o;

	ps->p++;
	while (ps->p < ps->end && *ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p++;
		if (c < 0x20)
			return fail(ps, -EINVAL, "a control character in a string");
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		if (ps->p >= ps->end)
			break;
		c = (unsigned char)*ps->p++;
		switch (c) {
		case '"': case '\\': case '/': *o++ = (char)c; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			long v = ps->end - ps->p >= 4 ? uraid_hex_digits(ps->p, 4) : -1;
			if (v <= 0)     /* a NUL would cut the string short: refused too */
				return fail(ps, -EINVAL, "a bad \\u escape");
			ps->p += 4;
			if (v >= 0xdc00 && v <= 0xdfff)
				return fail(ps, -EINVAL, "a lone low surrogate");
			if (v >= 0xd800 && v <= 0xdbff) {
				/* a high surrogate: its low half must follow */
				int lo = ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u'
					 ? uraid_hex_digits(ps->p + 2, 4) : -1;
				if (lo < 0xdc00 || lo > 0xdfff)
					return fail(ps, -EINVAL, "a lone high surrogate");
				ps->p += 6;
				v = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
			}
			if (v < 0x80) {
				*o++ = (char)v;
			} else if (v < 0x800) {
				*o++ = (char)(0xc0 | v >> 6);
				*o++ = (char)(0x80 | (v & 0x3f));
			} else if (v < 0x10000) {
				*o++ = (char)(0xe0 | v >> 12);
				*o++ = (char)(0x80 | (v >> 6 & 0x3f));
				*o++ = (char)(0x80 | (v & 0x3f));
			} else {
				*o++ = (char)(0xf0 | v >> 18);
				*o++ = (char)(0x80 | (v >> 12 & 0x3f));
				*o++ = (char)(0x80 | (v >> 6 & 0x3f));
				*o++ = (char)(0x80 | (v & 0x3f));
			}
			break;
		}
		default:
			return fail(ps, -EINVAL, "a bad escape");
		}
	}
	if (ps->p >= ps->end)
		return fail(ps, -EINVAL, "an unterminated string");
	ps->p++;
	*o++ = 0;
	ps->d->used += (size_t)(o - begin);
	*out = begin;
	return 0;
}

static bool is_digit(const char *p, const char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

/* The length of the number at p, by JSON's grammar exactly
 * (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?); 0 when there is none. */
static size_t number_len(const char *p, const char *end)
{
	const char *q = p;

	if (q < end && *q == '-')
		q++;
	if (!is_digit(q, end))
		return 0;
	if (*q++ != '0')
		while (is_digit(q, end))
			q++;
	if (q < end && *q == '.') {
		if (!is_digit(++q, end))
			return 0;
		while (is_digit(q, end))
			q++;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < end && (*q == '+' || *q == '-'))
			q++;
		if (!is_digit(q, end))
			return 0;
		while (is_digit(q, end))
			q++;
	}
	/* "007", "1.2.3": a digit or point right after is no separate value */
	if (q < end && (is_digit(q, end) || *q == '.' || *q == 'e' || *q == 'E' ||
			*q == '+' || *q == '-'))
		return 0;
	return (size_t)(q - p);
}

static int parse_number(struct jr_parser *ps, struct jr_node *n)
{
	char text[64], *end;
	size_t len = number_len(ps->p, ps->end);

	if (!len)
		return fail(ps, -EINVAL, "a bad value");
	if (len >= sizeof(text))
		return fail(ps, -EINVAL, "a number too long");
	memcpy(text, ps->p, len);
	text[len] = 0;
	n->num = strtod(text, &end);
	if (*end || !isfinite(n->num))
		return fail(ps, -EINVAL, "a number out of range");
	if (text[0] != '-' && !strpbrk(text, ".eE")) {
		errno = 0;
		n->u64 = strtoull(text, &end, 10);
		n->is_u64 = !*end && errno != ERANGE;
	}
	ps->p += len;
	return 0;
}

static int parse_value(struct jr_parser *ps, const char *key, unsigned depth);

/* An object or an array: its members become children of node idx. */
static int parse_container(struct jr_parser *ps, int idx, bool object, unsigned depth)
{
	char close = object ? '}' : ']';
	int last = -1;

	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		const char *key = NULL;
		skip_space(ps);
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, -EINVAL, "a key expected");
			int rc = parse_string(ps, &key);
			if (rc)
				return rc;
			skip_space(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				return fail(ps, -EINVAL, "':' expected");
			ps->p++;
		}
		int child = parse_value(ps, key, depth + 1);
		if (child < 0)
			return child;
		/* nodes may have moved (realloc): index them afresh */
		if (last < 0)
			ps->d->node[idx].first = child;
		else
			ps->d->node[last].next = child;
		last = child;
		skip_space(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return 0;
		}
		return fail(ps, -EINVAL, object ? "',' or '}' expected" : "',' or ']' expected");
	}
}

/* The value at ps->p as a new node: its index, or -errno. */
static int parse_value(struct jr_parser *ps, const char *key, unsigned depth)
{
	int idx, rc;

	if (depth > JR_MAX_DEPTH)
		return fail(ps, -E2BIG, "nested too deep");
	skip_space(ps);
	if (ps->p >= ps->end)
		return fail(ps, -EINVAL, "a value expected");
	switch (*ps->p) {
	case '{':
	case '[':
		idx = new_node(ps, *ps->p == '{' ? JR_OBJECT : JR_ARRAY, key);
		if (idx < 0)
			return idx;
		rc = parse_container(ps, idx, *ps->p == '{', depth);
		return rc ? rc : idx;
	case '"':
		idx = new_node(ps, JR_STRING, key);
		if (idx < 0)
			return idx;
		rc = parse_string(ps, &ps->d->node[idx].str);
		return rc ? rc : idx;
	}
	static const struct { const char *word; enum jr_type type; double num; } words[] = {
		{ "true", JR_BOOL, 1 }, { "false", JR_BOOL, 0 }, { "null", JR_NULL, 0 },
	};
	for (unsigned i = 0; i < 3; i++) {
		size_t wl = strlen(words[i].word);
		if ((size_t)(ps->end - ps->p) >= wl && !memcmp(ps->p, words[i].word, wl)) {
			idx = new_node(ps, words[i].type, key);
			if (idx >= 0) {
				ps->d->node[idx].num = words[i].num;
				ps->p += wl;
			}
			return idx;
		}
	}
	idx = new_node(ps, JR_NUMBER, key);
	if (idx < 0)
		return idx;
	rc = parse_number(ps, &ps->d->node[idx]);
	return rc ? rc : idx;
}

int jr_parse(const char *text, size_t len, struct jr_doc *doc, char *err, size_t errlen)
{
	struct jr_parser ps = { text, text, text + len, doc, err, errlen };

	memset(doc, 0, sizeof(*doc));
	if (len > JR_MAX_TEXT)
		return fail(&ps, -E2BIG, "too long");
	doc->strings = malloc(len + 1);
	if (!doc->strings)
		return fail(&ps, -ENOMEM, "out of memory");
	int rc = parse_value(&ps, NULL, 0);
	if (rc < 0)
		return rc;
	skip_space(&ps);
	return ps.p == ps.end ? 0 : fail(&ps, -EINVAL, "text after the value");
}

void jr_free(struct jr_doc *doc)
{
	free(doc->node);
	free(doc->strings);
	memset(doc, 0, sizeof(*doc));
}

int jr_first(const struct jr_doc *d, int node)
{
	return node >= 0 && (unsigned)node < d->n ? d->node[node].first : -1;
}

int jr_next(const struct jr_doc *d, int node)
{
	return node >= 0 && (unsigned)node < d->n ? d->node[node].next : -1;
}

int jr_get(const struct jr_doc *d, int obj, const char *key)
{
	if (obj < 0 || (unsigned)obj >= d->n || d->node[obj].type != JR_OBJECT)
		return -1;
	for (int c = d->node[obj].first; c >= 0; c = d->node[c].next)
		if (!strcmp(d->node[c].key, key))
			return c;
	return -1;
}

static const struct jr_node *typed(const struct jr_doc *d, int node, enum jr_type type)
{
	if (node < 0 || (unsigned)node >= d->n || d->node[node].type != type)
		return NULL;
	return &d->node[node];
}

uint64_t jr_u64(const struct jr_doc *d, int node, uint64_t dflt)
{
	const struct jr_node *n = typed(d, node, JR_NUMBER);
	return n && n->is_u64 ? n->u64 : dflt;
}

double jr_num(const struct jr_doc *d, int node, double dflt)
{
	const struct jr_node *n = typed(d, node, JR_NUMBER);
	return n ? n->num : dflt;
}

const char *jr_str(const struct jr_doc *d, int node, const char *dflt)
{
	const struct jr_node *n = typed(d, node, JR_STRING);
	return n ? n->str : dflt;
}

bool jr_bool(const struct jr_doc *d, int node, bool dflt)
{
	const struct jr_node *n = typed(d, node, JR_BOOL);
	return n ? n->num != 0 : dflt;
}
