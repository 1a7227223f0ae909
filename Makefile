# clockbench: what the host's clocksource costs its KVM guests.
# `make help` lists the targets.

# Settings: packaging/settings, the one table (which target takes each,
# and how).  They come from make's command line (make bench ROUNDS=6) only:
# the build's conventions (HOW build there) from the environment too, as
# make's convention has it.  host-scripts/lib/make-settings.awk refuses here,
# before anything runs, a setting in the environment's MAKEFLAGS, a name
# the table does not have, and one no goal takes; each given value is plain
# text, never expanded by make.  make's own variables pass (those
# of its built-in rules and its special ones), and the two debhelper gives
# every package's make (INSTALL, AM_UPDATE_INFO_DIR).
MAKE_OWN := MAKEFLAGS GNUMAKEFLAGS MAKEFILES MAKEOVERRIDES MFLAGS MAKELEVEL MAKE MAKECMDGOALS MAKESHELL SHELL \
	.SHELLFLAGS VPATH CURDIR .DEFAULT_GOAL .RECIPEPREFIX .EXTRA_PREREQS .LIBPATTERNS .INCLUDE_DIRS SUFFIXES \
	AR AS CXX CPP FC M2C PC CO GET LEX YACC LINT MAKEINFO TEX TEXI2DVI WEAVE CWEAVE TANGLE CTANGLE RM \
	ARFLAGS ASFLAGS CXXFLAGS COFLAGS CPPFLAGS FFLAGS GFLAGS LDLIBS LFLAGS YFLAGS PFLAGS RFLAGS LINTFLAGS \
	INSTALL AM_UPDATE_INFO_DIR
# The names the suite once read, refused with the new one.
RENAMED_SETTINGS := LAB_STATES=STATES LAB_TIMEOUT=L1_TIMEOUT LAB_L1_APPEND=L1_APPEND
# $(call quote,VALUE): VALUE as one shell word, whatever it holds;
# $(call quotes,LIST): each word of LIST as one shell word.  Every setting
# a recipe passes to a command goes through one of them.
quote = '$(subst ','\'',$(1))'
quotes = $(foreach w,$(1),$(call quote,$(w)))
comma := ,
GIVEN_SETTINGS := $(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),$(v)))
# Each value made plain text first, before any $(shell) (whose environment,
# made 4.4 on, holds the command line's variables expanded): each given name
# of letters, digits, _ and . (make exports no other, and no other is a
# setting: refused below).  $(call bare,NAME,CHARS): NAME less CHARS.
bare = $(if $(2),$(call bare,$(subst $(firstword $(2)),,$(1)),$(wordlist 2,99,$(2))),$(1))
NAME_CHARS := A B C D E F G H I J K L M N O P Q R S T U V W X Y Z a b c d e f g h i j k l m n o p q r s t u v w x y z \
	0 1 2 3 4 5 6 7 8 9 _ .
$(foreach v,$(filter-out MAKE% MFLAGS GNUMAKEFLAGS,$(GIVEN_SETTINGS)),$(if $(call bare,$(v),$(NAME_CHARS)),,$(eval \
	override $(v) := $$(value $(v)))))
# The table's rows, NAME:TARGETS:HOW:--option:DEFAULT; make's environment read where
# the kernel keeps it as make was started (what a $(shell) sees is make's).
SETTING_ROWS := $(shell { tr '\0\n' '\n ' </proc/$$PPID/environ; } 2>/dev/null | awk -f host-scripts/lib/make-settings.awk \
	-v given=$(call quote,$(GIVEN_SETTINGS)) -v goals=$(call quote,$(MAKECMDGOALS)) -v own=$(call quote,$(MAKE_OWN)) \
	-v renamed=$(call quote,$(RENAMED_SETTINGS)) packaging/settings -)
$(if $(filter !%,$(firstword $(SETTING_ROWS))),$(error $(patsubst !%,%,$(SETTING_ROWS))))
$(if $(SETTING_ROWS),,$(error clockbench: packaging/settings: no settings read))
# Sub-makes get no settings through MAKEFLAGS (they would refuse them): the
# build's own, given here, on their command line.
MAKEOVERRIDES :=
row = $(subst :, ,$(filter $(1):%,$(SETTING_ROWS)))
# $(call takes,TARGET,HOW): the settings TARGET takes that reach it as HOW (% any).
takes = $(foreach r,$(SETTING_ROWS),$(if $(filter $(1),$(subst $(comma), ,$(word 2,$(subst :, ,$(r))))),$(if \
	$(filter $(2),$(word 3,$(subst :, ,$(r)))),$(firstword $(subst :, ,$(r))))))
SETTINGS := $(foreach r,$(SETTING_ROWS),$(firstword $(subst :, ,$(r))))
# Each setting make reads itself (HOW make), not given: the table's default
# (- none), never the environment's value.
$(foreach r,$(SETTING_ROWS),$(if $(filter make,$(word 3,$(subst :, ,$(r)))),$(eval \
	$(word 1,$(subst :, ,$(r))) := $(patsubst -,,$(word 5,$(subst :, ,$(r)))))))
ENV_SETTINGS := $(call takes,*,build)
SUBMAKE = $(MAKE) --no-print-directory $(foreach v,$(filter $(call takes,*,%),$(GIVEN_SETTINGS)),$(call quote,$(v)=$($(v))))
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DESTDIR ?=
CC ?= cc
MUSL_CC ?= musl-gcc
CFLAGS ?= -O2 -g
LDFLAGS ?=
PROJECT_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter
LDLIBS := -lpthread -lm

ifeq ($(V),1)
Q :=
else
Q := @
endif

BUILD := build
ENGINE_SRCS := $(filter-out bench/main.c,$(wildcard bench/*.c))
ENGINE_HDRS := $(wildcard bench/*.h)
HOST_OBJS := $(patsubst bench/%.c,$(BUILD)/host/%.o,$(ENGINE_SRCS))
MUSL_ENGINE_OBJS := $(patsubst bench/%.c,$(BUILD)/musl/%.o,$(ENGINE_SRCS))
MUSL_INC := $(BUILD)/musl-include

# The run id's rules live in the run-folder contract (docs/run-folder.md).
# Expanded when a recipe runs, after `make deps` has installed python3.
# Debian's interpreter, whose packages make deps installs (not the first
# python3 on PATH).
PYTHON := /usr/bin/python3
# Made once, when a recipe first needs it.
RUN_ID = $(eval RUN_ID := $$(shell ./host-scripts/runfolder run-id))$(RUN_ID)

# Settings passed as options: make passes a variable given on its command
# line as the option of its name (make bench ROUNDS=6: --rounds=6), quoted for
# the shell.  The lists are checked against each command's --help (tests/settings.t).
options = $(strip $(foreach v,$(1),$(if $(filter $(v),$(GIVEN_SETTINGS)),$(call quote,$(word 4,$(call row,$(v)))=$($(v))))))
# $(call flag,NAME,VALUE,OPTION,OTHER): OPTION when NAME=VALUE was given, nothing when NAME=OTHER, else an error.
flag = $(if $(filter $(1),$(GIVEN_SETTINGS)),$(if $(filter $(2),$($(1))),$(3),$(if $(filter $(4),$($(1))),,$(error $(1)=$($(1)): expected 0 or 1))))
HOST_SETTINGS := $(call takes,bench-host,option)
GUEST_SETTINGS := $(call takes,bench-guest,option)
COMPARE_SETTINGS := $(call takes,compare,option)
COMPARE_FLAGS = $(strip $(call flag,QUIET,1,-q,0) $(call flag,VERBOSE,1,-v,0) $(call flag,GUEST,0,--no-guest,1) \
	$(call flag,FORCE,1,--force,0))
CROSSCHECK_SETTINGS := $(call takes,crosscheck,option)
LAB_SETTINGS := $(call takes,lab,option)

.PHONY: all deps deps-lab deps-crosscheck deps-dev deps-integrations check check-fast bench bench-host bench-self bench-watch compare crosscheck health host-check lab lab-ci clean help help-dev
all: bench/clockbench $(BUILD)/clockbench-static

bench/clockbench: $(HOST_OBJS) $(BUILD)/host/main.o
	@echo "  LD      $@"
	$(Q)$(call quotes,$(CC)) $(PROJECT_CFLAGS) $(call quotes,$(CFLAGS)) $(call quotes,$(LDFLAGS)) -o $@ $^ $(LDLIBS)

$(BUILD)/host/%.o: bench/%.c $(ENGINE_HDRS)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)$(call quotes,$(CC)) $(PROJECT_CFLAGS) $(call quotes,$(CFLAGS)) -c -o $@ $<

# Debian's musl-gcc sees only musl's headers; the seccomp code needs three
# kernel header folders, and never glibc's.
$(MUSL_INC)/.stamp:
	$(Q)command -v $(call quote,$(firstword $(MUSL_CC))) >/dev/null || { echo clockbench: $(call quote,$(firstword $(MUSL_CC)))" not found: run 'make deps' (Debian: apt-get install musl-tools)" >&2; exit 1; }
	@mkdir -p $(@D)
	$(Q)ln -sfn /usr/include/linux $(@D)/linux
	$(Q)ln -sfn /usr/include/asm-generic $(@D)/asm-generic
	$(Q)ln -sfn /usr/include/$$(gcc -dumpmachine)/asm $(@D)/asm
	@touch $@

$(BUILD)/musl/%.o: bench/%.c $(ENGINE_HDRS) $(MUSL_INC)/.stamp
	@mkdir -p $(@D)
	@echo "  MUSLCC  $@"
	$(Q)$(call quotes,$(MUSL_CC)) $(PROJECT_CFLAGS) -isystem $(MUSL_INC) $(call quotes,$(CFLAGS)) -c -o $@ $<

$(BUILD)/clockbench-static: $(MUSL_ENGINE_OBJS) $(BUILD)/musl/main.o
	@echo "  LD      $@"
	$(Q)$(call quotes,$(MUSL_CC)) -static $(call quotes,$(CFLAGS)) $(call quotes,$(LDFLAGS)) -o $@ $^ $(LDLIBS)

-include guest-init/guest.mk
-include analysis/analysis.mk
-include fuzz/fuzz.mk
-include tests/torture/torture.mk
-include packaging/packaging.mk

# What each job needs, and no more (host-scripts/deps --help has the lists):
# a benchmark never installs a monitoring server or a virtualization daemon.
# INSTALL_DEPS=0: install nothing (print what is missing and the command).
DEPS_FLAGS = $(call flag,INSTALL_DEPS,0,--no-install,1)
# deps-GROUP installs that group; deps, bench's.
DEPS_GROUP = $(if $(filter deps,$@),bench,$(@:deps-%=%))
deps deps-lab deps-crosscheck deps-dev deps-integrations:
	$(Q)./host-scripts/deps $(strip $(DEPS_FLAGS) $(DEPS_GROUP))

$(BUILD)/test-unit: tests/bench/unit.c tests/lib/tap.h $(HOST_OBJS) $(ENGINE_HDRS)
	@echo "  LD      $@"
	$(Q)$(call quotes,$(CC)) $(PROJECT_CFLAGS) $(call quotes,$(CFLAGS)) -o $@ tests/bench/unit.c $(HOST_OBJS) $(LDLIBS)

# SANITIZE=1: the engine and the C unit tests also built with AddressSanitizer
# and UndefinedBehaviorSanitizer into $(SAN_BUILD)/, and run by tests/bench/sanitize.t.
SAN_BUILD := $(BUILD)/san
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_OBJS := $(patsubst bench/%.c,$(SAN_BUILD)/%.o,$(ENGINE_SRCS))
SAN_BINS := $(SAN_BUILD)/clockbench $(SAN_BUILD)/test-unit $(SAN_BUILD)/test-guest-unit

$(SAN_BUILD)/%.o: bench/%.c $(ENGINE_HDRS)
	@mkdir -p $(@D)
	@echo "  CC SAN  $@"
	$(Q)$(call quotes,$(CC)) $(PROJECT_CFLAGS) $(call quotes,$(CFLAGS)) $(SAN_FLAGS) -c -o $@ $<

$(SAN_BUILD)/clockbench: $(SAN_OBJS) $(SAN_BUILD)/main.o
	@echo "  LD SAN  $@"
	$(Q)$(call quotes,$(CC)) $(PROJECT_CFLAGS) $(call quotes,$(CFLAGS)) $(SAN_FLAGS) $(call quotes,$(LDFLAGS)) -o $@ $^ $(LDLIBS)

$(SAN_BUILD)/test-unit: tests/bench/unit.c tests/lib/tap.h $(SAN_OBJS) $(ENGINE_HDRS)
	@echo "  LD SAN  $@"
	$(Q)$(call quotes,$(CC)) $(PROJECT_CFLAGS) $(call quotes,$(CFLAGS)) $(SAN_FLAGS) -o $@ tests/bench/unit.c $(SAN_OBJS) $(LDLIBS)

$(SAN_BUILD)/test-guest-unit: tests/guest-init/unit.c tests/lib/tap.h $(filter-out guest-init/init.c,$(GUEST_SRCS)) $(GUEST_HDRS) $(SAN_OBJS)
	@echo "  LD SAN  $@"
	$(Q)$(call quotes,$(CC)) $(PROJECT_CFLAGS) -Ibench -Iguest-init $(call quotes,$(CFLAGS)) $(SAN_FLAGS) -o $@ $(filter %.c %.o,$^) $(LDLIBS)

# What the tests run, built before any starts (the tests run several at
# once: none builds a shared product while another reads it); the guest
# initramfs with busybox too where busybox is (tests/guest-init/faults.t).
CHECK_BUILD = all $(BUILD)/test-unit $(BUILD)/test-guest-unit guest-initramfs \
	$(if $(filter 1,$(SANITIZE)),$(SAN_BINS))
# JOBS=N: test files at once (default: one per CPU; the top of tests/run
# says how they are scheduled).
check: deps-dev
	$(Q)$(SUBMAKE) $(CHECK_BUILD)
	$(Q)[ ! -x $(call quote,$(BUSYBOX)) ] || $(SUBMAKE) -s guest-initramfs DEBUG=1 BUSYBOX=$(call quote,$(BUSYBOX))
	$(Q)CB_SANITIZE=$(call quote,$(SANITIZE)) ./tests/run

# The fast tier only: a developer's loop (no QEMU boot, no package build).
check-fast: deps-dev
	$(Q)$(SUBMAKE) $(CHECK_BUILD)
	$(Q)CB_SANITIZE=$(call quote,$(SANITIZE)) ./tests/run --tier fast

# The default host measurement on the current clocksource.
bench-host: deps
	$(Q)$(SUBMAKE) all
	$(Q)./host-scripts/bench-host $(call options,$(HOST_SETTINGS)) $(call quote,$(RESULTS)) $(call quote,$(RUN_ID))

# TSC against every other clocksource, host and guest, always restored, in
# ROUNDS rounds (default 4, 50 ms a cell; each kept in round-<N>/, every
# ratio to tsc then with its interval over the rounds); then the summary
# table and the report (REPORT_OUT=DIR, default
# results/_report/<run-id>; QUIET=1 or VERBOSE=1 for less or more progress).
# Its settings: host-scripts/bench --help.
compare: deps
	$(Q)$(SUBMAKE) all guest-initramfs
	$(Q)./host-scripts/bench $(COMPARE_FLAGS) $(call options,$(COMPARE_SETTINGS)) $(call quote,$(RESULTS)) $(call quote,$(RUN_ID))

# The main job.
bench: compare

# The emulated hypervisor: every host clock state, end to end (root).
lab: deps-lab
	$(Q)$(SUBMAKE) all guest-initramfs
	$(Q)./lab/run-lab $(call options,$(LAB_SETTINGS)) $(call quote,$(RESULTS)) $(call quote,$(RUN_ID)-lab)

# Its ci tier (.ci/run runs it after make check: lab/README.md): the states with `ci = yes`, each in an L1 of its own.
lab-ci: deps-lab
	$(Q)$(SUBMAKE) all guest-initramfs
	$(Q)./lab/run-lab --tier=ci $(call options,$(call takes,lab-ci,option)) $(call quote,$(RESULTS)) \
		$(call quote,$(RUN_ID)-lab-ci)

# The engine's workloads beside iperf3 and cyclictest on this host, side by
# side in one run (a benchmark that prints figures, not a test).
crosscheck: deps-crosscheck
	$(Q)$(SUBMAKE) all
	$(Q)./host-scripts/crosscheck $(call options,$(CROSSCHECK_SETTINGS)) $(call quote,$(RESULTS)) $(call quote,$(RUN_ID)-crosscheck)

# A health report of this host's clock: read-only, once the engine is built.
# host-check: its old name, kept as an alias that says the new one.
health host-check: all
	$(if $(filter host-check,$@),@echo "clockbench: make host-check is now make health" >&2)
	$(Q)./host-scripts/health

bench-self: deps
	$(Q)$(SUBMAKE) all
	$(Q)./tests/bench/bench-self.sh $(call quote,$(RESULTS)) $(call quote,$(RUN_ID))

# clockbench watch's own cost: CPU an hour and memory while idle, and the
# delay from a clocksource switch line to the textfile (a benchmark).
bench-watch:
	$(Q)PYTHONPATH=contract:host-scripts $(PYTHON) -m cbhost.watchbench $(call quotes,$(WATCH_SECONDS))

clean:
	rm -rf $(BUILD) bench/clockbench

# make help: one screen, the targets a user needs; make help-dev: the rest.
help:
	@echo "make bench        the main job (root): each clocksource offered (tsc first), host and guest,"
	@echo "                  always restored; then the verdict, the tables and the report (settings: docs/settings.md)"
	@echo "make check        run the tests (TAP; no root needed), JOBS at once; SANITIZE=1 adds ASan+UBSan"
	@echo "make check-fast   the fast tier of the tests only (no QEMU boot, no package build)"
	@echo "make health       health report of this host's clock, read-only once the engine is built (gcc, musl-tools);"
	@echo "                  exit 0 healthy, 1 degraded or not known, 2 usage"
	@$(SUBMAKE) -s help-analysis 2>/dev/null | grep '^make report ' || true
	@echo "make lab          each host clock state of lab/states.cfg on an emulated hypervisor (TCG, SVM),"
	@echo "                  asserted (root; states 1-4 and 6-10, about 35 min in all; STATES=1: one, 3-4 min);"
	@echo "                  make lab-ci: the ci tier (states 1, 2, 10, an L1 each; run by .ci/run)"
	@$(SUBMAKE) -s help-packaging 2>/dev/null | grep -E '^make (install|deb) ' || true
	@echo "make deps         install the Debian packages make bench needs (root), or print the command"
	@echo "make clean        remove build products (never results/)"
	@echo "make help-dev     the rest: the engine alone, each step of make bench, fuzzing, the developer's deps"

help-dev:
	@echo "make              build bench/clockbench (gcc) and $(BUILD)/clockbench-static (musl)"
	@echo "make deps-dev     the Debian packages of make check, deb and fuzz; deps-lab, deps-crosscheck;"
	@echo "                  deps-integrations (prometheus, ansible, libvirt: only when asked)"
	@echo "make compare      what make bench runs: flip the host clocksource (tsc first, then the others), bench"
	@echo "                  host and guest under each, trace KVM's master clock and stable bit; always restored"
	@echo "                  (root), in ROUNDS rounds, then the verdict, summary.md and the report; each target's"
	@echo "                  settings, their defaults and what they set: docs/settings.md (packaging/settings)"
	@echo "make bench-host   measure this host on its current clocksource into "$(call quote,$(RESULTS))"/<run-id>/"
	@$(SUBMAKE) -s help-guest 2>/dev/null || true
	@$(SUBMAKE) -s help-analysis 2>/dev/null || true
	@echo "make crosscheck   the engine's workloads beside iperf3, cyclictest and sockperf, side by side on this host"
	@echo "make bench-self   the engine's own accuracy: loop overhead, run-to-run spread of every figure make bench"
	@echo "                  divides, musl vs glibc, syscall vs the C library's syscall()"
	@echo "make bench-watch  the watch's own cost (CPU an hour, memory, switch line to textfile; WATCH_SECONDS)"
	@$(SUBMAKE) -s help-fuzz 2>/dev/null || true
	@echo "make torture      interrupt harness steps at random moments, fake and real clocksource; check nothing is left (root, ~15 min)"
	@$(SUBMAKE) -s help-packaging 2>/dev/null || true
