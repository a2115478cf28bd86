/* SPDX-License-Identifier: MIT */
/*
 * A small JSON reader for what uraid's own servers answer (`status-json` on
 * the control socket): the text becomes a tree of nodes, and the reader
 * looks values up by key. Bounded: the text's length, the nodes and the
 * depth have limits, and numbers are checked before use (a server is another
 * process, and what it sends is not trusted).
 */
#ifndef URAID_COMMON_JSON_READ_H
#define URAID_COMMON_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JR_MAX_TEXT  (4u << 20)     /* bytes of JSON at most */
#define JR_MAX_NODES 65536u
#define JR_MAX_DEPTH 32u

enum jr_type { JR_NULL, JR_BOOL, JR_NUMBER, JR_STRING, JR_OBJECT, JR_ARRAY };

struct jr_node {
	enum jr_type type;
	const char *key;                /* in an object; NULL in an array */
	const char *str;                /* JR_STRING: decoded, NUL-terminated */
	double num;                     /* JR_NUMBER; JR_BOOL: 0 or 1 */
	bool is_u64;                    /* JR_NUMBER: a whole number in u64's range */
	uint64_t u64;
	int first, next;                /* first child, next sibling; -1: none */
};

struct jr_doc {
	struct jr_node *node;           /* node 0 is the root */
	unsigned n, cap;
	char *strings;                  /* decoded keys and strings */
	size_t used;
};

/* Parse len bytes of text into doc: 0, or -EINVAL/-E2BIG/-ENOMEM with the
 * reason and its byte offset in err. jr_free in either case. */
int jr_parse(const char *text, size_t len, struct jr_doc *doc, char *err, size_t errlen);
void jr_free(struct jr_doc *doc);

/* The member `key` of object node obj; -1 when obj is not an object or has none. */
int jr_get(const struct jr_doc *d, int obj, const char *key);
/* Children of an object or an array in order: jr_first, then jr_next; -1 at the end. */
int jr_first(const struct jr_doc *d, int node);
int jr_next(const struct jr_doc *d, int node);
/* The value of node, or dflt when it is missing (-1) or of another type. */
uint64_t jr_u64(const struct jr_doc *d, int node, uint64_t dflt);
double jr_num(const struct jr_doc *d, int node, double dflt);
const char *jr_str(const struct jr_doc *d, int node, const char *dflt);
bool jr_bool(const struct jr_doc *d, int node, bool dflt);

#endif
