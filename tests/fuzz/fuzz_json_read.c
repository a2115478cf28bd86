// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the JSON reader (common/json_read.h) that reads what a
 * server sends to `uraid status --watch`. Properties besides "no crash, no
 * sanitizer report" (the input is copied to a buffer of exactly its length,
 * so a read past the end shows under ASan):
 *   - an accepted document's node tree is well formed: every child and
 *     sibling index is in range and comes after its parent, every string
 *     and key ends within the decoded strings, no number is infinite or NaN,
 *     and a u64 value reads back as the number;
 *   - a refused one says why.
 *
 * Input: the JSON text itself.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_read.h"
#include "fuzz.h"

#define MAX_INPUT 4096

static const char *const seeds[] = {
	"{\"server\": {\"export_name\": \"a\\u00e9\\ud83d\\ude00\", \"connections\": 3, "
	"\"max_connections\": 16}, \"level\": \"raid5\", \"state\": \"clean\", "
	"\"array_bytes\": 1073741824, \"raid_devices\": 3, \"degraded\": 0, \"in_flight\": 0}",
	"{\"members\": [{\"slot\": 0, \"device\": \"/dev/shm/m0\", \"state\": \"in-sync\", "
	"\"reads\": 18446744073709551615, \"writes\": 7, \"read_bytes\": 0, "
	"\"write_bytes\": 1e3}, {\"slot\": null, \"device\": \"x\\n\\t\\\"\\\\\\/\"}]}",
	"{\"background\": [{\"kind\": \"check\", \"done_bytes\": 1048576, "
	"\"total_bytes\": 2097152, \"per_member\": true, \"rate_bytes_per_s\": 2.5e-1}], "
	"\"last_background\": {\"kind\": \"resync\", \"result\": \"completed\"}}",
	"[[[[-0.5e+10, true, false, null, \"\", [], {}]]]]",
};

const struct fuzz_target fuzz_target = {
	.name = "fuzz_json_read", .seeds = sizeof(seeds) / sizeof(seeds[0]),
	.max_input = MAX_INPUT, .hot_bytes = 0, .iterations = 200000,
};

size_t fuzz_seed(unsigned kind, uint8_t *buf, size_t cap)
{
	size_t len = strlen(seeds[kind % fuzz_target.seeds]);
	if (len > cap)
		return 0;
	memcpy(buf, seeds[kind % fuzz_target.seeds], len);
	return len;
}

static void fail(const char *what, unsigned node)
{
	fprintf(stderr, "fuzz_json_read: node %u: %s\n", node, what);
	abort();
}

static bool in_strings(const struct jr_doc *d, const char *s)
{
	return s >= d->strings && s < d->strings + d->used &&
	       memchr(s, 0, d->used - (size_t)(s - d->strings));
}

static void check_tree(const struct jr_doc *d)
{
	if (!d->n)
		fail("an accepted document without a root", 0);
	for (unsigned i = 0; i < d->n; i++) {
		const struct jr_node *n = &d->node[i];
		if (n->first >= 0 && ((unsigned)n->first >= d->n || (unsigned)n->first <= i))
			fail("a child out of order", i);
		if (n->next >= 0 && ((unsigned)n->next >= d->n || (unsigned)n->next <= i))
			fail("a sibling out of order", i);
		if (n->first >= 0 && n->type != JR_OBJECT && n->type != JR_ARRAY)
			fail("children of a scalar", i);
		if (n->key && !in_strings(d, n->key))
			fail("a key outside the strings", i);
		if (n->type == JR_STRING && !in_strings(d, n->str))
			fail("a string outside the strings", i);
		if (n->type == JR_NUMBER && !isfinite(n->num))
			fail("a number not finite", i);
		if (n->type == JR_NUMBER && n->is_u64 &&
		    fabs((double)n->u64 - n->num) > n->num * 1e-15)
			fail("a u64 that is not the number", i);
	}
	/* the lookups stay in range whatever they are asked */
	(void)jr_get(d, 0, "server");
	for (int c = jr_first(d, 0); c >= 0; c = jr_next(d, c))
		(void)jr_str(d, c, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	struct jr_doc d;
	char err[128] = "";

	if (!text)
		return 0;
	memcpy(text, data, size);
	int rc = jr_parse(text, size, &d, err, sizeof(err));
	if (rc == 0)
		check_tree(&d);
	else if (!err[0])
		fail("a refusal without a reason", 0);
	jr_free(&d);
	free(text);
	return 0;
}
