// SPDX-License-Identifier: MIT
/*
 * test_json_read: the JSON reader of `uraid status --watch` (common/json_read.h),
 * which reads what another process sends: well-formed documents are read
 * back value by value, and malformed, hostile or oversized ones are refused
 * with the reason, never read past their end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_read.h"
#include "../support/check.h"

static void test_values(void)
{
	const char *text =
		"{ \"server\": { \"export_name\": \"a\\\"b\\\\c\\u00e9\\n\", \"connections\": 3 },\n"
		"  \"big\": 18446744073709551615, \"over\": 18446744073709551616,\n"
		"  \"neg\": -5, \"frac\": 2.5, \"exp\": 1e3, \"t\": true, \"f\": false, \"n\": null,\n"
		"  \"members\": [ { \"device\": \"d0\", \"writes\": 7 }, { \"device\": \"d1\" }, [], {} ] }";
	struct jr_doc d;
	char err[128];

	CHECK(jr_parse(text, strlen(text), &d, err, sizeof(err)) == 0, "parse: %s", err);
	int srv = jr_get(&d, 0, "server");
	CHECK(!strcmp(jr_str(&d, jr_get(&d, srv, "export_name"), "?"), "a\"b\\c\xc3\xa9\n"),
	      "escapes decoded: '%s'", jr_str(&d, jr_get(&d, srv, "export_name"), "?"));
	CHECK(jr_u64(&d, jr_get(&d, srv, "connections"), 0) == 3, "connections");
	CHECK(jr_u64(&d, jr_get(&d, 0, "big"), 0) == UINT64_MAX, "u64 max");
	CHECK(jr_u64(&d, jr_get(&d, 0, "over"), 42) == 42, "past u64: the default");
	CHECK(jr_u64(&d, jr_get(&d, 0, "neg"), 42) == 42, "negative: the default");
	CHECK(jr_num(&d, jr_get(&d, 0, "neg"), 0) == -5, "negative as a number");
	CHECK(jr_u64(&d, jr_get(&d, 0, "frac"), 42) == 42 && jr_num(&d, jr_get(&d, 0, "frac"), 0) == 2.5,
	      "fraction");
	CHECK(jr_u64(&d, jr_get(&d, 0, "exp"), 42) == 42, "exponent: not a whole u64 as written");
	CHECK(jr_bool(&d, jr_get(&d, 0, "t"), false) && !jr_bool(&d, jr_get(&d, 0, "f"), true), "bools");
	CHECK(jr_str(&d, jr_get(&d, 0, "n"), "dflt")[0] == 'd', "null: the default");
	CHECK(jr_get(&d, 0, "missing") == -1 && jr_u64(&d, -1, 9) == 9, "missing key");
	CHECK(jr_get(&d, srv, "connections") >= 0 && jr_get(&d, jr_get(&d, srv, "connections"), "x") == -1,
	      "a key of a number: none");
	int list = jr_get(&d, 0, "members"), n = 0;
	for (int m = jr_first(&d, list); m >= 0; m = jr_next(&d, m), n++)
		;
	CHECK(n == 4, "four members, %d", n);
	int m0 = jr_first(&d, list);
	CHECK(!strcmp(jr_str(&d, jr_get(&d, m0, "device"), "?"), "d0") &&
	      jr_u64(&d, jr_get(&d, m0, "writes"), 0) == 7, "first member");
	CHECK(jr_u64(&d, jr_get(&d, jr_next(&d, m0), "writes"), 11) == 11, "second: no writes key");
	jr_free(&d);
}

static void test_refusals(void)
{
	static const struct { const char *text; int rc; } t[] = {
		{ "", -EINVAL },
		{ "{", -EINVAL },
		{ "{\"a\" 1}", -EINVAL },
		{ "{\"a\": }", -EINVAL },
		{ "{\"a\": 1,}", -EINVAL },
		{ "{a: 1}", -EINVAL },
		{ "[1 2]", -EINVAL },
		{ "\"open", -EINVAL },
		{ "\"bad \\x escape\"", -EINVAL },
		{ "\"nul \\u0000 inside\"", -EINVAL },
		{ "\"short \\u12\"", -EINVAL },
		{ "\"ctl \x01 char\"", -EINVAL },
		{ "-", -EINVAL },
		{ "1.2.3", -EINVAL },
		{ "tru", -EINVAL },
		{ "{} {}", -EINVAL },
		{ "{\"a\": 1} x", -EINVAL },
		/* JSON's number grammar exactly: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
		{ "+1", -EINVAL },
		{ "007", -EINVAL },
		{ "-01", -EINVAL },
		{ ".5", -EINVAL },
		{ "5.", -EINVAL },
		{ "5.e3", -EINVAL },
		{ "1e", -EINVAL },
		{ "1e+", -EINVAL },
		{ "--1", -EINVAL },
		{ "[1-2]", -EINVAL },
		{ "0x10", -EINVAL },
		{ "1e999", -EINVAL },       /* not finite: refused */
		{ "-1e999", -EINVAL },
		{ "Infinity", -EINVAL },
		{ "NaN", -EINVAL },
		/* lone UTF-16 surrogates: not characters */
		{ "\"\\ud800\"", -EINVAL },
		{ "\"\\udc00\"", -EINVAL },
		{ "\"\\ud800\\u0041\"", -EINVAL },
	};
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct jr_doc d;
		char err[128] = "";
		int rc = jr_parse(t[i].text, strlen(t[i].text), &d, err, sizeof(err));
		CHECK(rc == t[i].rc && err[0], "'%s': %d (%s)", t[i].text, rc, err);
		jr_free(&d);
	}
}

/* A NUL byte is no part of a number (nor of any value) */
static void test_nul(void)
{
	static const char text[] = { '[', '1', '\0', '2', ']' };
	struct jr_doc d;
	char err[128] = "";

	CHECK(jr_parse(text, sizeof(text), &d, err, sizeof(err)) == -EINVAL, "NUL in a number: %s",
	      err);
	jr_free(&d);
}

/* Good numbers and a surrogate pair read back */
static void test_numbers(void)
{
	static const struct { const char *text; double v; } t[] = {
		{ "0", 0 }, { "-0", 0 }, { "10", 10 }, { "-12.5", -12.5 }, { "1e3", 1000 },
		{ "1E+2", 100 }, { "2.5e-1", 0.25 }, { "0.125", 0.125 },
	};
	struct jr_doc d;
	char err[128] = "";

	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK(jr_parse(t[i].text, strlen(t[i].text), &d, err, sizeof(err)) == 0 &&
		      jr_num(&d, 0, -99) == t[i].v, "'%s': %s", t[i].text, err);
		jr_free(&d);
	}
	const char *pair = "\"\\ud83d\\ude00\"";       /* U+1F600 */
	CHECK(jr_parse(pair, strlen(pair), &d, err, sizeof(err)) == 0 &&
	      !strcmp(jr_str(&d, 0, "?"), "\xf0\x9f\x98\x80"), "surrogate pair: %s", err);
	jr_free(&d);
}

/* The text's length is what counts, not a NUL: a document cut short is
 * refused even when the bytes after its end would complete it. */
static void test_bounds(void)
{
	const char *text = "{\"a\": \"bc\"}";
	struct jr_doc d;
	char err[128];

	for (size_t len = 0; len < strlen(text); len++) {
		CHECK(jr_parse(text, len, &d, err, sizeof(err)) < 0, "cut at %zu accepted", len);
		jr_free(&d);
	}
	/* nested deeper than the limit */
	char deep[JR_MAX_DEPTH * 2 + 8];
	size_t n = 0;
	for (unsigned i = 0; i < JR_MAX_DEPTH + 2; i++)
		deep[n++] = '[';
	for (unsigned i = 0; i < JR_MAX_DEPTH + 2; i++)
		deep[n++] = ']';
	CHECK(jr_parse(deep, n, &d, err, sizeof(err)) == -E2BIG, "too deep: %s", err);
	jr_free(&d);
	/* more values than the limit */
	char *many = malloc(JR_MAX_TEXT + 1);      /* room for the too-long case below */
	n = 0;
	memset(many, ' ', JR_MAX_TEXT + 1);
	many[n++] = '[';
	for (unsigned i = 0; i <= JR_MAX_NODES; i++) {
		many[n++] = '0';
		many[n++] = ',';
	}
	many[n - 1] = ']';
	CHECK(jr_parse(many, n, &d, err, sizeof(err)) == -E2BIG, "too many values: %s", err);
	jr_free(&d);
	CHECK(jr_parse(many, JR_MAX_TEXT + 1, &d, err, sizeof(err)) == -E2BIG, "too long: %s", err);
	jr_free(&d);
	free(many);
}

int main(void)
{
	test_values();
	test_refusals();
	test_nul();
	test_numbers();
	test_bounds();
	if (failures)
		fprintf(stderr, "test_json_read: %d failure(s)\n", failures);
	else
		printf("test_json_read: ok\n");
	return failures ? 1 : 0;
}
