/* SPDX-License-Identifier: MIT */
/*
 * systemd's readiness protocol without libsystemd (sd_notify.c): one
 * datagram of NAME=VALUE lines to the Unix socket $NOTIFY_SOCKET names (a
 * path, or an abstract name written with a leading '@'), as Type=notify
 * units expect. Without $NOTIFY_SOCKET nothing is sent.
 */
#ifndef URAID_CLI_SD_NOTIFY_H
#define URAID_CLI_SD_NOTIFY_H

/* 1 sent, 0 no $NOTIFY_SOCKET, -errno (a socket name too long, not a
 * path or '@name', or the send failed). */
int cli_sd_notify(const char *state);

#endif
