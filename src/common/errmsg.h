/* SPDX-License-Identifier: MIT */
/*
 * The one way liburaid reports a refusal: a one-line reason into the
 * caller's buffer, and the negative errno returned.
 */
#ifndef URAID_COMMON_ERRMSG_H
#define URAID_COMMON_ERRMSG_H

#include <stddef.h>

/* Format the reason into err (when err and errlen are non-zero); return rc. */
int uraid_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
