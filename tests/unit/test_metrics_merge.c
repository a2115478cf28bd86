// SPDX-License-Identifier: MIT
/*
 * Merging the metrics of several served arrays (src/cli/metrics_all.c):
 * each family's HELP and TYPE once, all its samples together after them
 * (a histogram's _bucket, _sum and _count included), every sample of every
 * answering server kept, a server that does not answer `metrics` or does
 * not answer in time left out, every call bounded in time and size.
 * The registry and the control client are stubbed here: three "servers"
 * answer from strings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/metrics_all.h"
#include "common/clock.h"
#include "ctl/ctl.h"
#include "../support/check.h"

static const char text_a[] =
	"# HELP uraid_array_size_bytes Size.\n"
	"# TYPE uraid_array_size_bytes gauge\n"
	"uraid_array_size_bytes{array=\"a\"} 100\n"
	"# HELP uraid_member_writes_total Writes.\n"
	"# TYPE uraid_member_writes_total counter\n"
	"uraid_member_writes_total{array=\"a\",member=\"x\"} 5\n"
	"uraid_member_writes_total{array=\"a\",member=\"y\"} 6\n"
	"# HELP uraid_request_duration_seconds Time.\n"
	"# TYPE uraid_request_duration_seconds histogram\n"
	"uraid_request_duration_seconds_bucket{array=\"a\",le=\"1e-06\"} 1\n"
	"uraid_request_duration_seconds_bucket{array=\"a\",le=\"+Inf\"} 2\n"
	"uraid_request_duration_seconds_sum{array=\"a\"} 0.5\n"
	"uraid_request_duration_seconds_count{array=\"a\"} 2\n";

/* another array, with a family the first lacks */
static const char text_b[] =
	"# HELP uraid_array_size_bytes Size.\n"
	"# TYPE uraid_array_size_bytes gauge\n"
	"uraid_array_size_bytes{array=\"b\"} 200\n"
	"# HELP uraid_array_bitmap_bits Bits.\n"
	"# TYPE uraid_array_bitmap_bits gauge\n"
	"uraid_array_bitmap_bits{array=\"b\"} 7\n"
	"# HELP uraid_member_writes_total Writes.\n"
	"# TYPE uraid_member_writes_total counter\n"
	"uraid_member_writes_total{array=\"b\",member=\"z\"} 9\n"
	"# HELP uraid_request_duration_seconds Time.\n"
	"# TYPE uraid_request_duration_seconds histogram\n"
	"uraid_request_duration_seconds_bucket{array=\"b\",le=\"1e-06\"} 0\n"
	"uraid_request_duration_seconds_bucket{array=\"b\",le=\"+Inf\"} 3\n"
	"uraid_request_duration_seconds_sum{array=\"b\"} 0.25\n"
	"uraid_request_duration_seconds_count{array=\"b\"} 3\n";

/* ---- stubs of the registry and the control client ---- */

int ctl_for_each(int (*fn)(const char *ctl_path, void *arg), void *arg, char *err, size_t errlen)
{
	static const char *const servers[] = { "a.ctl", "old.ctl", "late.ctl", "b.ctl" };
	int answered = 0;
	for (unsigned i = 0; i < 4; i++)
		answered += fn(servers[i], arg) == 0;
	return answered;
}

int ctl_call_limited(const char *ctl_path, const char *const *fields, unsigned nfields,
		     FILE *out, uint64_t deadline_ns, size_t max_body, char *msg, size_t msglen)
{
	if (nfields != 1 || strcmp(fields[0], "metrics"))
		return -EINVAL;
	/* every call is bounded: by a deadline at most a few seconds away and a size */
	uint64_t now = uraid_now_ns();
	CHECK(deadline_ns > now && deadline_ns - now <= 2000000000ull,
	      "%s: a deadline within 2 s", ctl_path);
	CHECK(max_body > 0 && max_body <= (64u << 20), "%s: an answer size limit", ctl_path);
	if (!strcmp(ctl_path, "old.ctl")) {
		snprintf(msg, msglen, "unknown control request 'metrics'");
		return CTL_CODE_USAGE;
	}
	if (!strcmp(ctl_path, "late.ctl")) {
		/* what the real client leaves in out when the time is up */
		fputs("# HELP uraid_late_family Cut off.\nuraid_late", out);
		snprintf(msg, msglen, "late.ctl: the server did not finish answering in time");
		return -ETIMEDOUT;
	}
	fputs(!strcmp(ctl_path, "a.ctl") ? text_a : text_b, out);
	return 0;
}

/* The family a sample line belongs to: its name without a histogram's suffix. */
static void family_of(const char *line, char *fam, size_t len)
{
	size_t n = strcspn(line, "{ ");
	snprintf(fam, len, "%.*s", (int)n, line);
	static const char *const suffixes[] = { "_bucket", "_sum", "_count" };
	for (unsigned i = 0; i < 3; i++) {
		size_t sl = strlen(suffixes[i]), fl = strlen(fam);
		if (fl > sl && !strcmp(fam + fl - sl, suffixes[i]) &&
		    !strncmp(fam, "uraid_request_duration_seconds", fl - sl))
			fam[fl - sl] = 0;
	}
}

int main(void)
{
	char *text = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int n = metrics_all_write(f, err, sizeof(err));
	fclose(f);
	printf("%s", text);
	CHECK(n == 2, "answered: %d", n);

	/* walk it: a TYPE opens a family, which must be new; samples follow their own */
	char seen[16][64], cur[64] = "", fam[64];
	unsigned nseen = 0, helps = 0, samples = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "# HELP ", 7)) {
			helps++;
		} else if (!strncmp(line, "# TYPE ", 7)) {
			snprintf(cur, sizeof(cur), "%.*s", (int)strcspn(line + 7, " "), line + 7);
			for (unsigned i = 0; i < nseen; i++)
				CHECK(strcmp(seen[i], cur), "TYPE of %s twice", cur);
			if (nseen < 16)
				snprintf(seen[nseen++], sizeof(seen[0]), "%s", cur);
		} else {
			family_of(line, fam, sizeof(fam));
			CHECK(!strcmp(fam, cur), "sample %s after the TYPE of %s", line, cur);
			samples++;
		}
	}
	/* 4 families of the arrays, and uraid_served_arrays */
	CHECK(nseen == 5 && helps == 5, "families %u, HELP lines %u", nseen, helps);
	CHECK(samples == 7 + 7 + 1, "samples %u", samples);
	CHECK(nseen == 5 && !strcmp(seen[0], "uraid_array_size_bytes") &&
	      !strcmp(seen[1], "uraid_member_writes_total") &&
	      !strcmp(seen[2], "uraid_request_duration_seconds") &&
	      !strcmp(seen[3], "uraid_array_bitmap_bits") && !strcmp(seen[4], "uraid_served_arrays"),
	      "the families in the order first seen");
	free(text);

	/* the served count itself */
	text = NULL;
	f = open_memstream(&text, &len);
	metrics_all_write(f, err, sizeof(err));
	fclose(f);
	CHECK(strstr(text, "\nuraid_served_arrays 2\n") != NULL, "uraid_served_arrays 2");
	CHECK(strstr(text, "uraid_member_writes_total{array=\"a\",member=\"y\"} 6\n"
			   "uraid_member_writes_total{array=\"b\",member=\"z\"} 9\n") != NULL,
	      "a family's samples of both arrays together");
	free(text);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
