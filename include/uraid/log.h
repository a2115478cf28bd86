/* SPDX-License-Identifier: MIT */
/*
 * Where liburaid's messages go. The library never writes to stderr itself:
 * an embedder passes a log function in uraid_engine_opts and receives each
 * message as one line (no trailing newline) with its level; the uraid
 * command installs uraid_log_stderr. Levels are syslog's numbers, so a
 * daemon can hand them to syslog(3) or journald as they are.
 */
#ifndef URAID_LOG_H
#define URAID_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

enum uraid_log_level {
	URAID_LOG_ERR = 3,          /* a member or the array lost something */
	URAID_LOG_WARNING = 4,      /* went on, but an admin should look */
	URAID_LOG_NOTICE = 5,       /* state changes: failed, added, rebuilt */
	URAID_LOG_INFO = 6,         /* progress of background work, clients */
};

/* Called from any engine thread, reactor threads included: must not block for long. */
typedef void (*uraid_log_fn)(void *opaque, enum uraid_log_level level, const char *msg);

/*
 * "PREFIX: msg" on stderr, with "warning: " before warnings and "BUG: "
 * never added (the message says so itself). opaque is the prefix (a
 * const char *, e.g. "uraid serve"); NULL means "uraid". One write per
 * line, so lines from several threads do not mix.
 */
void uraid_log_stderr(void *opaque, enum uraid_log_level level, const char *msg);

#ifdef __cplusplus
}
#endif

#endif
