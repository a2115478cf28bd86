// SPDX-License-Identifier: MIT
/* uraid: entry point and subcommand dispatch. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/pool_cli.h"
#include "cli/version.h"


static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "create", cmd_create, "write md superblocks to members, making a new array" },
	{ "examine", cmd_examine, "print the md superblock of each member (--json for scripts)" },
	{ "detail", cmd_detail, "assemble read-only and show the array's state and members" },
	{ "bench", cmd_bench, "measure IOPS, MiB/s and latency of files, devices, NBD exports or an array" },
	{ "plan", cmd_plan, "predict what each RAID layout does for a workload (--verify: measure)" },
	{ "serve", cmd_serve, "assemble an array and export it over NBD until stopped" },
	{ "status", cmd_status, "list served arrays, or show one's state (--json)" },
	{ "fail", cmd_fail, "mark a member of a served array faulty" },
	{ "remove", cmd_remove, "take faulty, spare or stale members out of a served array" },
	{ "add", cmd_add, "add spares to a served array (a missing slot is rebuilt)" },
	{ "replace", cmd_replace, "copy a member onto a new device while it serves, then swap" },
	{ "stop", cmd_stop, "stop serving an array: drain, flush, mark clean" },
	{ "check", cmd_check, "count parity mismatches of a served array in the background" },
	{ "repair", cmd_repair, "rewrite parity that does not match, in the background" },
	{ "speed", cmd_speed, "set a served array's background work limits (KiB/s)" },
	{ "tune", cmd_tune, "show or change a served array's run-time settings (stripe cache, "
	  "speed limits)" },
	{ "grow", cmd_grow, "change a served array's members, level, chunk, layout, size or "
	  "bitmap (mdadm --grow)" },
	{ "zero-superblock", cmd_zero_superblock, "erase the md superblock of devices no longer "
	  "in an array" },
	{ "pool", cmd_pool, "make a pool of drives (GPT each) and show its space and volumes" },
	{ "volume", cmd_volume, "create or delete a volume (an md array on partitions) in a pool" },
	{ "monitor", cmd_monitor, "report failed members, rebuilds and spares of served arrays" },
};

/* mdadm's mode options, typed as the command: the uraid verb to use. */
static const struct {
	const char *mdadm[3];           /* long, short and a second long spelling */
	const char *verb;               /* NULL: uraid has none */
	const char *hint;
} mdadm_modes[] = {
	{ { "--create", "-C", NULL }, "create", "uraid create --level=L --raid-devices=N "
	  "--name=NAME DEVICE..." },
	{ { "--assemble", "-A", "--incremental" }, "serve", "uraid serve DEVICE... assembles "
	  "the array and exports it over NBD" },
	{ { "--detail", "-D", NULL }, "detail", "uraid detail MEMBER... (an array not served) "
	  "or uraid status ARRAY (a served one)" },
	{ { "--examine", "-E", "--query" }, "examine", "uraid examine DEVICE..." },
	{ { "--manage", NULL, NULL }, "fail", "uraid fail|remove|add|replace ARRAY MEMBER..." },
	{ { "--fail", "--remove", "--add" }, "fail", "uraid fail|remove|add ARRAY MEMBER... "
	  "(ARRAY first, as mdadm /dev/md0 --fail)" },
	{ { "--stop", "-S", NULL }, "stop", "uraid stop ARRAY" },
	{ { "--monitor", "-F", "--follow" }, "monitor", "uraid monitor" },
	{ { "--grow", "-G", NULL }, "grow", "uraid grow ARRAY --raid-devices=N|--level=L|"
	  "--size=max|..." },
	{ { "--zero-superblock", NULL, NULL }, "zero-superblock", "uraid zero-superblock "
	  "DEVICE..." },
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
		fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"Run 'uraid COMMAND --help' for a command's options; 'man uraid' for details.\n"
		"Options: --help, --version\n");
}

static bool have_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return true;
	return false;
}

/* An mdadm spelling (a mode option, or an md device first): one line that
 * says what to type instead; false when cmd is none of them. */
static bool mdadm_hint(const char *cmd)
{
	for (size_t i = 0; i < sizeof(mdadm_modes) / sizeof(mdadm_modes[0]); i++) {
		for (unsigned k = 0; k < 3; k++) {
			const char *m = mdadm_modes[i].mdadm[k];
			size_t n = m ? strlen(m) : 0;
			/* "--create", "--create=..." (mdadm takes none, but be kind) */
			if (!m || strncmp(cmd, m, n) || (cmd[n] && cmd[n] != '='))
				continue;
			const char *verb = mdadm_modes[i].verb;
			if (verb && !have_command(verb))
				fprintf(stderr, "uraid: '%s' is mdadm's; this uraid has no %s command "
					"yet (see 'uraid --help')\n", cmd, verb);
			else
				fprintf(stderr, "uraid: '%s' is mdadm's spelling; %s\n", cmd,
					mdadm_modes[i].hint);
			return true;
		}
	}
	if (!strncmp(cmd, "/dev/md", 7)) {
		fprintf(stderr, "uraid: '%s' is an md device; uraid names an array by its export "
			"name, after the verb: 'uraid fail|remove|add|status|stop ARRAY ...'\n", cmd);
		return true;
	}
	return false;
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
	if (mdadm_hint(cmd))
		return CLI_EXIT_USAGE;
	fprintf(stderr, "uraid: unknown command '%s'; run 'uraid --help' for the list\n", cmd);
	return CLI_EXIT_USAGE;
}
