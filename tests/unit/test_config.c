// SPDX-License-Identifier: MIT
/*
 * test_config: the configuration file's grammar (src/ops/config.c): mdadm.conf
 * lines as mdadm writes them, uraid's serve keys on ARRAY lines, continuation
 * lines and comments; every malformed line refused with its line number;
 * globs expanded once per path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/config.h"
#include "../support/check.h"

static const uint8_t uuid_a[16] = { 0x3a, 0xaa, 0x01, 0x22, 0x29, 0x82, 0x7c, 0xfa,
				    0x53, 0x31, 0xad, 0x66, 0xca, 0x76, 0x73, 0x71 };

static void test_good(void)
{
	const char *text =
		"# mdadm.conf as Debian writes it, plus uraid's words\n"
		"HOMEHOST <system>\n"
		"MAILADDR root\n"
		"DEVICE /dev/sd[bc]1 partitions\n"
		"ARRAY /dev/md/data metadata=1.2 UUID=3aaa0122:29827cfa:5331ad66:ca767371 "
		"name=host:data\n"
		"   spare-group=g1 socket=/run/data.sock   # a continuation line\n"
		"\tread-only threads=2\n"
		"array name=other devices=/tmp/a.img,/tmp/b.img spares=1 level=raid5 "
		"num-devices=3 export=\"my export\" tls-verify-peer=no\n"
		"PROGRAM /usr/local/bin/raid#event\n"
		"PROGRAM /second/wins/not\n"
		"MAILADDR second@example.org\n";
	struct uraid_config cfg;
	char err[256] = "";
	int rc = config_parse("t.conf", text, &cfg, err, sizeof(err));
	CHECK(rc == 0, "rc %d: %s", rc, err);
	if (rc)
		return;
	CHECK(cfg.mailaddr && !strcmp(cfg.mailaddr, "root"), "mailaddr");
	/* '#' inside a word is no comment; a second PROGRAM or MAILADDR: the first wins */
	CHECK(cfg.program && !strcmp(cfg.program, "/usr/local/bin/raid#event"),
	      "program '%s'", cfg.program ? cfg.program : "");
	CHECK(cfg.any_device_line && cfg.partitions, "partitions");
	CHECK(cfg.ndevice_globs == 1 && !strcmp(cfg.device_globs[0], "/dev/sd[bc]1"), "globs");
	CHECK(cfg.narrays == 2, "%u arrays", cfg.narrays);
	if (cfg.narrays == 2) {
		const struct config_array *a = &cfg.arrays[0], *b = &cfg.arrays[1];
		CHECK(a->line == 5, "line %u", a->line);
		CHECK(a->devname && !strcmp(a->devname, "/dev/md/data"), "devname");
		CHECK(a->has_uuid && !memcmp(a->uuid, uuid_a, 16), "uuid");
		CHECK(a->name && !strcmp(a->name, "host:data"), "name");
		CHECK(a->spare_group && !strcmp(a->spare_group, "g1"), "spare group");
		CHECK(a->nserve == 3, "%u serve options", a->nserve);
		if (a->nserve == 3) {
			CHECK(!strcmp(a->serve[0].key, "socket") &&
			      !strcmp(a->serve[0].value, "/run/data.sock"), "socket");
			CHECK(!strcmp(a->serve[1].key, "read-only") && !a->serve[1].value, "flag");
			CHECK(!strcmp(a->serve[2].key, "threads") && !strcmp(a->serve[2].value, "2"),
			      "threads");
		}
		CHECK(b->line == 8 && !b->devname && !b->has_uuid, "second entry");
		CHECK(b->ndevices == 2 && !strcmp(b->devices[1], "/tmp/b.img"), "devices=");
		CHECK(b->spares == 1 && b->level == 5 && b->num_devices == 3, "counts");
		CHECK(b->nserve == 1 && !strcmp(b->serve[0].key, "export") &&
		      !strcmp(b->serve[0].value, "my export"), "quoted export, key=no dropped");
		CHECK(config_find_array(&cfg, uuid_a, "host:data") == a, "find by uuid");
		CHECK(config_find_array(&cfg, uuid_a, "else") == NULL, "uuid and other name");
		uint8_t other[16] = { 1 };
		CHECK(config_find_array(&cfg, other, "other") == b, "find by name");
		CHECK(config_find_array(&cfg, other, NULL) == NULL, "no name, no uuid match");
	}
	config_free(&cfg);
}

/* Each bad text, and the line number and words its message must carry. */
static void test_bad(void)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "ARRAY uuid=1234\n", "t.conf:1: uuid=" },
		{ "\n\nARRAY name=x colour=red\n", "t.conf:3: unknown key 'colour'" },
		{ "ARRAY /dev/md0\n", "t.conf:1: ARRAY needs uuid=" },
		{ "MAILADDR a b\n", "t.conf:1: MAILADDR wants one address" },
		{ "\nPROGRAM /bin/x --verbose\n", "t.conf:2: PROGRAM wants one program's path" },
		{ "ARRAY name=\"x #y\" colour=red\n", "t.conf:1: unknown key 'colour'" },
		{ "FROBNICATE x\n", "t.conf:1: unknown keyword 'FROBNICATE'" },
		{ "ARRAY name=x spares=-1\n", "t.conf:1: spares=" },
		{ "ARRAY name=x level=raid7\n", "t.conf:1: level=" },
		{ "ARRAY name=x metadata=0.90\n", "t.conf:1: metadata=0.90" },
		{ "ARRAY name=x socket\n", "t.conf:1: 'socket' in ARRAY needs a value" },
		{ "ARRAY name=x read-only=maybe\n", "t.conf:1: 'read-only' in ARRAY is yes or no" },
		{ "ARRAY name=x threads=1 threads=2\n", "t.conf:1: 'threads' given twice" },
		{ "ARRAY name=\"x\n", "t.conf:1: a quote is not closed" },
		{ "ARRAY name=x\n  uuid=zz\n", "t.conf:1: uuid=" },
		{ "ARRAY name=123456789012345678901234567890123\n", "t.conf:1: name=" },
		{ "DEV /dev/sda\n", "t.conf:1: unknown keyword 'DEV'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct uraid_config cfg;
		char err[256] = "";
		int rc = config_parse("t.conf", cases[i].text, &cfg, err, sizeof(err));
		CHECK(rc == -EINVAL, "case %zu: rc %d", i, rc);
		CHECK(strstr(err, cases[i].want), "case %zu: '%s' lacks '%s'", i, err, cases[i].want);
		CHECK(cfg.narrays == 0 && !cfg.arrays, "case %zu: nothing kept", i);
	}
}

static int collect(const char *path, void *arg)
{
	char *out = arg;
	strcat(out, path);
	strcat(out, ";");
	return 0;
}

static void test_globs(void)
{
	char dir[] = "/tmp/uraid-test-config-XXXXXX", path[128], got[2048] = "";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	const char *names[] = { "d1.img", "d2.img", "x.img" };
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		fclose(fopen(path, "w"));
	}
	char g1[128], g2[128], g3[128];
	snprintf(g1, sizeof(g1), "%s/d?.img", dir);
	snprintf(g2, sizeof(g2), "%s/*.img", dir);
	snprintf(g3, sizeof(g3), "%s/none*", dir);
	char *globs[] = { g1, g2, g3 };
	int rc = config_for_each_glob(globs, 3, collect, got);
	char want[1024];
	snprintf(want, sizeof(want), "%s/d1.img;%s/d2.img;%s/x.img;", dir, dir, dir);
	CHECK(rc == 0 && !strcmp(got, want), "rc %d, got '%s', want '%s'", rc, got, want);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	test_good();
	test_bad();
	test_globs();
	if (failures)
		fprintf(stderr, "test_config: %d failures\n", failures);
	else
		printf("test_config: ok\n");
	return failures ? 1 : 0;
}
