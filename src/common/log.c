// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

void ulog(const struct ulog *l, enum uraid_log_level level, const char *fmt, ...)
{
	char msg[ULOG_MAX_LINE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (l && l->fn)
		l->fn(l->opaque, level, msg);
	else
		uraid_log_stderr(NULL, level, msg);   /* opaque belongs to fn, if any */
}

void uraid_log_stderr(void *opaque, enum uraid_log_level level, const char *msg)
{
	const char *prefix = opaque ? (const char *)opaque : "uraid";
	char line[ULOG_MAX_LINE + 64];
	int n = snprintf(line, sizeof(line), "%s: %s%s\n", prefix,
			 level == URAID_LOG_WARNING ? "warning: " : "", msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	/* one write(2): stdio's stderr is unbuffered and would split the line */
	ssize_t w = write(STDERR_FILENO, line, (size_t)n);
	(void)w;
}
