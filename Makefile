# uraid — user-space RAID controller in md's on-disk format.
# `make` builds build/uraid and build/liburaid.a; `make check` runs every test.

CC      ?= gcc
CFLAGS  ?= -O2 -g
# Flags the code needs, kept apart so that `make CFLAGS=...` only changes the rest.
override CFLAGS += -std=gnu11 -Wall -Wextra -Wshadow -Wno-unused-parameter -D_GNU_SOURCE -Iinclude -Isrc
LDLIBS  ?=
override LDLIBS += -lisal -luring -lgnutls -lnbd -lm
BUILD   ?= build

LIB_SRCS  := $(sort $(wildcard src/common/*.c src/geom/*.c src/parity/*.c src/format/*.c src/io/*.c src/setup/*.c src/engine/*/*.c src/bench/*.c src/plan/*.c src/nbd/*.c src/ops/*.c src/pool/*.c))
CLI_SRCS  := $(sort $(wildcard src/cli/*.c src/ctl/*.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
# Each fuzz target also runs in `make check` through a bounded seeded driver.
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/tests/%)

LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tests/tools/%)
# Helpers shared by unit tests (scalar references, seeded RNG), not part of liburaid.
TEST_SUPPORT := $(sort $(wildcard tests/support/*.c))
TEST_SUPPORT_OBJS := $(TEST_SUPPORT:%.c=$(BUILD)/%.o)
# As an archive for the unit tests, so each takes only the helpers it uses
# (test_raid5 stubs the engine and must not pull it in through a fixture).
TEST_SUPPORT_LIB := $(BUILD)/tests/libsupport.a

DEPS_STAMP := $(BUILD)/.deps-ok

.SECONDARY:
.PHONY: all deps demo check check-unit check-interop check-asan fuzz bench clean install
all: $(BUILD)/uraid $(BUILD)/liburaid.a

# Install build and test prerequisites when any is missing (idempotent).
deps $(DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh
	@mkdir -p $(BUILD) && touch $(DEPS_STAMP)

$(BUILD)/%.o: %.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/liburaid.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/uraid: $(CLI_OBJS) $(BUILD)/liburaid.a
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJS) $(BUILD)/liburaid.a $(LDLIBS)

$(TEST_SUPPORT_LIB): $(TEST_SUPPORT_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(TEST_SUPPORT_LIB) $(BUILD)/liburaid.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(TEST_SUPPORT_LIB) $(BUILD)/liburaid.a $(LDLIBS)

# A unit test of a CLI file (not in liburaid) links that object too.
$(BUILD)/tests/test_metrics_merge: $(BUILD)/tests/unit/test_metrics_merge.o $(BUILD)/src/cli/metrics_all.o $(TEST_SUPPORT_LIB) $(BUILD)/liburaid.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/src/cli/metrics_all.o $(TEST_SUPPORT_LIB) $(BUILD)/liburaid.a $(LDLIBS)

$(BUILD)/tests/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/standalone.o $(BUILD)/liburaid.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/tools/%: $(BUILD)/tests/tools/%.o $(TEST_SUPPORT_OBJS) $(BUILD)/liburaid.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(TEST_SUPPORT_OBJS) $(BUILD)/liburaid.a $(LDLIBS)

# The README's first command: a RAID 5 on image files in a temporary folder.
demo: all
	@URAID=$(BUILD)/uraid scripts/demo.sh

# Everything: unit programs, CLI scripts, referee (qemu guest) tests.
check: all $(UNIT_BINS) $(FUZZ_BINS) $(TOOL_BINS)
	@BUILD=$(BUILD) tests/run-tests.sh $(UNIT_BINS) $(FUZZ_BINS) $(sort $(wildcard tests/cli/*.sh)) $(sort $(wildcard tests/interop/test-*.sh))

check-unit: all $(UNIT_BINS) $(FUZZ_BINS)
	@BUILD=$(BUILD) tests/run-tests.sh $(UNIT_BINS) $(FUZZ_BINS)

# Longer randomised runs: the engine model with many seeds, members failing
# while several reactor threads run, uraid serve killed with SIGKILL in the
# middle of writes (tests/cli/test-crash.sh), SOAK_SEEDS runs, each its own
# seed; then uraid serve under SOAK_CYCLES bad clients beside fio verify.
SOAK_SEEDS ?= 50
# 1: members fail under two threads in the threaded configurations; 2: in all of them
SOAK_LEVEL ?= 1
# connection cycles of bad NBD clients (tests/cli/test-serve-soak.sh)
SOAK_CYCLES ?= 2000
soak: all $(BUILD)/tests/test_engine_model
	@fails=0; for s in $$(seq 1 $(SOAK_SEEDS)); do \
		URAID_MODEL_SOAK=$(SOAK_LEVEL) $(BUILD)/tests/test_engine_model $$s >$(BUILD)/soak-$$s.log 2>&1 || \
			{ echo "soak: seed $$s failed, see $(BUILD)/soak-$$s.log"; fails=$$((fails + 1)); }; \
	done; echo "soak: $(SOAK_SEEDS) seeds, $$fails failed"; [ $$fails -eq 0 ]
	@echo "soak: uraid serve killed mid-writes, $(SOAK_SEEDS) seeds per level"
	@CRASH_SEEDS=$(SOAK_SEEDS) BUILD=$(BUILD) bash tests/cli/test-crash.sh >$(BUILD)/soak-crash.log 2>&1; \
		rc=$$?; grep FAIL $(BUILD)/soak-crash.log; tail -1 $(BUILD)/soak-crash.log; exit $$rc
	@echo "soak: uraid serve, $(SOAK_CYCLES) cycles of bad clients beside fio verify"
	@CYCLES=$(SOAK_CYCLES) BUILD=$(BUILD) bash tests/cli/test-serve-soak.sh >$(BUILD)/soak-serve.log 2>&1; \
		rc=$$?; grep -E 'FAIL|before:|after:|cut by the server|over the limit|^fio:' $(BUILD)/soak-serve.log; tail -1 $(BUILD)/soak-serve.log; exit $$rc

# Coverage-guided fuzzing with libFuzzer (clang), FUZZ_TIME seconds per target.
FUZZ_TIME ?= 60
fuzz: $(FUZZ_BINS)
	@command -v clang >/dev/null || { echo "make fuzz needs clang (apt-get install clang)"; exit 1; }
	@mkdir -p $(BUILD)/libfuzzer
	@for t in $(FUZZ_SRCS); do n=$$(basename $$t .c); \
		mkdir -p $(BUILD)/libfuzzer/corpus-$$n && \
		$(BUILD)/tests/$$n --seeds $(BUILD)/libfuzzer/corpus-$$n && \
		clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude -Isrc \
			-o $(BUILD)/libfuzzer/$$n $$t $(LIB_SRCS) -lisal -luring -lgnutls && \
		$(BUILD)/libfuzzer/$$n -max_total_time=$(FUZZ_TIME) $(BUILD)/libfuzzer/corpus-$$n || exit 1; \
		done

check-interop: all $(TOOL_BINS)
	@BUILD=$(BUILD) tests/run-tests.sh $(sort $(wildcard tests/interop/test-*.sh))

# Unit and CLI tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
check-asan:
	@$(MAKE) --no-print-directory BUILD=build-asan \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDLIBS="-fsanitize=address,undefined" \
		build-asan/uraid build-asan/liburaid.a \
		$(UNIT_BINS:$(BUILD)/%=build-asan/%) $(FUZZ_BINS:$(BUILD)/%=build-asan/%) \
		$(TOOL_BINS:$(BUILD)/%=build-asan/%)
	@BUILD=build-asan tests/run-tests.sh $(UNIT_BINS:$(BUILD)/%=build-asan/%) \
		$(FUZZ_BINS:$(BUILD)/%=build-asan/%) $(sort $(wildcard tests/cli/*.sh))

# uraid against fio on the same tmpfs files, in one run: figure, reference, ratio.
# Not part of `make check` (benchmarks report ratios; tests check behaviour).
bench: all $(BUILD)/tests/tools/nested_bench $(BUILD)/tests/tools/lat_pool
	@BUILD=$(BUILD) scripts/bench.sh

PREFIX ?= /usr/local
# systemd finds units of /usr/local here too
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
install: all
	install -D -m 0755 $(BUILD)/uraid $(DESTDIR)$(PREFIX)/sbin/uraid
	install -D -m 0644 $(BUILD)/liburaid.a $(DESTDIR)$(PREFIX)/lib/liburaid.a
	install -d $(DESTDIR)$(PREFIX)/include/uraid
	install -m 0644 include/uraid/*.h $(DESTDIR)$(PREFIX)/include/uraid/
	install -D -m 0644 docs/uraid.8 $(DESTDIR)$(PREFIX)/share/man/man8/uraid.8
	install -D -m 0644 contrib/bash-completion/uraid $(DESTDIR)$(PREFIX)/share/bash-completion/completions/uraid
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	for u in uraid@.service uraid-scan.service uraid-monitor.service; do \
		sed 's|@SBINDIR@|$(PREFIX)/sbin|g' systemd/$$u.in >$(DESTDIR)$(SYSTEMDUNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; done

clean:
	rm -rf $(BUILD) build-asan

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
