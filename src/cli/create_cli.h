/* SPDX-License-Identifier: MIT */
/* uraid create's pieces shared with its nested form (create_nested.c). */
#ifndef URAID_CLI_CREATE_CLI_H
#define URAID_CLI_CREATE_CLI_H

#include <stdbool.h>
#include <uraid/create.h>

struct json;   /* cli/util.h */

void create_print_summary(const struct uraid_create_opts *o, const struct uraid_create_result *r);
void create_print_json(const struct uraid_create_opts *o, const struct uraid_create_result *r);
/* The opening both JSON outputs share: the object, "version" and "written". */
void create_json_open(struct json *j, const struct uraid_create_opts *o);
/* "50", "raid50", "60", "raid60": the inner level (5, 6); else 0. */
int create_nested_level(const char *s);
/* RAID 50/60 (o->level the inner level, o->paths every member): exit code. */
int create_nested(struct uraid_create_opts *o, unsigned groups, bool json);

#endif
