// SPDX-License-Identifier: MIT
/* uraid: entry point and subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/version.h"


static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "create", cmd_create, "write md superblocks to members, making a new array" },
	{ "examine", cmd_examine, "print the md superblock of each member (--json for scripts)" },
	{ "detail", cmd_detail, "assemble read-only and show the array's state and members" },
	{ "bench", cmd_bench, "measure IOPS, MiB/s and latency of raw targets or an array" },
	{ "serve", cmd_serve, "assemble an array and export it over NBD until stopped" },
	{ "status", cmd_status, "list served arrays, or show one's state (--json)" },
	{ "fail", cmd_fail, "mark a member of a served array faulty" },
	{ "remove", cmd_remove, "take a faulty or spare member out of a served array" },
	{ "add", cmd_add, "add spares to a served array (a missing slot is rebuilt)" },
	{ "replace", cmd_replace, "copy a member onto a new device while it serves, then swap" },
	{ "stop", cmd_stop, "stop serving an array: drain, flush, mark clean" },
	{ "check", cmd_check, "count parity mismatches of a served array in the background" },
	{ "repair", cmd_repair, "rewrite parity that does not match, in the background" },
	{ "speed", cmd_speed, "set a served array's background work limits (KiB/s)" },
	{ "monitor", cmd_monitor, "report failed members, rebuilds and spares of served arrays" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid COMMAND [OPTIONS] ...\n"
		"\n"
		"uraid is a user-space RAID controller that keeps arrays in Linux md's on-disk\n"
		"format: arrays it creates assemble with mdadm and the kernel, and the other way\n"
		"round.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"Run 'uraid COMMAND --help' for a command's options; 'man uraid' for details.\n"
		"Options: --help, --version\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("uraid %s\n", URAID_VERSION);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "uraid: unknown command '%s'; run 'uraid --help' for the list\n", cmd);
	return CLI_EXIT_USAGE;
}
