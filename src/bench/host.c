// SPDX-License-Identifier: MIT
/* The machine a benchmark ran on (host.h). */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench/host.h"

/* The first "model name" of /proc/cpuinfo (x86), else "Hardware"/"cpu model" (others). */
static void read_cpu_model(char *buf, size_t len)
{
	static const char *const keys[] = { "model name", "Hardware", "cpu model", "Model" };
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(buf, len, "?");
	if (!f)
		return;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && !strcmp(buf, "?"); k++) {
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			char *colon = strchr(line, ':');
			if (!colon || strncmp(line, keys[k], strlen(keys[k])))
				continue;
			colon++;
			colon += strspn(colon, " \t");
			colon[strcspn(colon, "\n")] = 0;
			if (*colon) {
				snprintf(buf, len, "%s", colon);
				break;
			}
		}
	}
	fclose(f);
}

void bench_host_read(struct bench_host *h)
{
	struct utsname u;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(h, 0, sizeof(*h));
	if (uname(&u)) {
		snprintf(h->hostname, sizeof(h->hostname), "?");
		snprintf(h->kernel, sizeof(h->kernel), "?");
	} else {
		snprintf(h->hostname, sizeof(h->hostname), "%s", u.nodename);
		snprintf(h->kernel, sizeof(h->kernel), "%s %s %s", u.sysname, u.release, u.machine);
	}
	read_cpu_model(h->cpu_model, sizeof(h->cpu_model));
	h->cores = n > 0 ? (unsigned)n : 0;
}

char *bench_utc_iso8601(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "?");
	return buf;
}
