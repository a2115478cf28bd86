/* SPDX-License-Identifier: MIT */
#ifndef URAID_TESTS_RUN_CMD_H
#define URAID_TESTS_RUN_CMD_H

/*
 * Run a shell command; return its output (malloc'd, at most 64 KiB) with
 * runs of blanks squeezed to one space and leading blanks dropped, so that
 * "  Checksum : x" matches whatever mdadm's column alignment.
 */
char *test_run_cmd(const char *cmd);

#endif
