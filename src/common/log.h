/* SPDX-License-Identifier: MIT */
/*
 * The library's side of the log hook (include/uraid/log.h): a sink that an
 * engine carries and hands to what reports through it (arrays, members,
 * the NBD server). A NULL sink, or one without a function, writes to
 * stderr as uraid_log_stderr does, so code that runs before an engine
 * exists (or in a test) still reports.
 */
#ifndef URAID_COMMON_LOG_H
#define URAID_COMMON_LOG_H

#include <uraid/log.h>

struct ulog {
	uraid_log_fn fn;
	void *opaque;
};

/* Format one message (at most ULOG_MAX_LINE bytes, longer ones cut) and hand it to l. */
#define ULOG_MAX_LINE 1024
void ulog(const struct ulog *l, enum uraid_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
