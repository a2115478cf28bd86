/* SPDX-License-Identifier: MIT */
/* The uraid command's subcommands. Each returns the process exit status. */
#ifndef URAID_CLI_H
#define URAID_CLI_H

#include <stdbool.h>
#include <stddef.h>

#define CLI_EXIT_OK    0
#define CLI_EXIT_FAIL  1   /* the operation failed or found a problem */
#define CLI_EXIT_USAGE 2   /* the command line is wrong */

int cmd_create(int argc, char **argv);
int cmd_examine(int argc, char **argv);
int cmd_detail(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_fail(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_repair(int argc, char **argv);
int cmd_speed(int argc, char **argv);
int cmd_add(int argc, char **argv);
/* cmd_add; append: the linear's new members, which uraid grow --add then
 * appends (the server refuses a linear spare otherwise) */
int cli_add(int argc, char **argv, bool append);
int cmd_replace(int argc, char **argv);
int cmd_zero_superblock(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_grow(int argc, char **argv);

/* How many served arrays have the member at path (any spelling), the first
 * one's export name in name; -1 after a message when the list of served
 * arrays cannot be read (ctl_cmds.c). */
int cli_served_owner(const char *cmd, const char *path, char *name, size_t len);
int cmd_monitor(int argc, char **argv);
int cmd_plan(int argc, char **argv);

/* For the commands of a served array outside ctl_cmds.c: the control socket
 * of TARGET (an export name, the export or control socket; NULL: the only
 * served array) in ctl, and a request whose answer's body goes to stdout.
 * Both return 0 or an exit status after one line on stderr. */
/* The control socket of pool `name` when one uraid serve serves it whole
 * (found through its volumes, "pool-is"): 1 with it in ctl, else 0 (quiet). */
int cli_pool_control(const char *name, char *ctl, size_t len);
int cli_ctl_target(const char *cmd, const char *target, char *ctl, size_t len);
int cli_ctl_call(const char *cmd, const char *ctl, const char *const *fields, unsigned n);

#endif
