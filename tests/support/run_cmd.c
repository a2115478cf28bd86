// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>

#include "run_cmd.h"

char *test_run_cmd(const char *cmd)
{
	size_t cap = 1 << 16, len = 0;
	char *out = malloc(cap), line[1024];
	FILE *p = popen(cmd, "r");

	if (!out)
		return NULL;
	out[0] = '\0';
	if (!p)
		return out;
	while (fgets(line, sizeof(line), p)) {
		const char *s = line;
		int blank = 1;
		while (*s == ' ' || *s == '\t')
			s++;
		for (; *s && len + 2 < cap; s++) {
			int is_blank = (*s == ' ' || *s == '\t');
			if (is_blank && blank)
				continue;
			out[len++] = is_blank ? ' ' : *s;
			blank = is_blank;
		}
		out[len] = '\0';
	}
	pclose(p);
	return out;
}
