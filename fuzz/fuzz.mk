# fuzz.mk: libFuzzer targets (fuzz/<target>.c) for the engine's option
# parser, the guest's kernel-parameter parser, the JSON writer and the
# histogram, built with clang under ASan and UBSan into build/fuzz/.
# `make fuzz-c` runs each for FUZZ_SECONDS; `make fuzz` adds the Python
# property tests (tests/props/*.t: among them fleetpaths.t, random and
# hostile paths through the fleet playbook's filter of a host's listing);
# tests/bench/fuzz.t (make check) runs each briefly.
# Needs clang, libFuzzer (Debian: libclang-rt-14-dev) and libjansson-dev.

# Their defaults are packaging/settings's, but this one of two words.
FUZZ_CFLAGS := -O1 -g
FUZZ_BUILD := $(BUILD)/fuzz
FUZZ_TARGETS := opts params json hist
FUZZ_BINS := $(addprefix $(FUZZ_BUILD)/,$(FUZZ_TARGETS))
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The engine and the guest's parameters, instrumented for coverage.
FUZZ_OBJS := $(patsubst bench/%.c,$(FUZZ_BUILD)/obj/%.o,$(ENGINE_SRCS)) $(FUZZ_BUILD)/obj/params.o
FUZZ_LIBS_json := -ljansson
# The histogram's loops (and its target's) compare on every bucket: traced,
# they cost 90 % of the target's time and tell libFuzzer nothing; -O2 ran it 1.8 times faster here.
$(FUZZ_BUILD)/obj/hist.o $(FUZZ_BUILD)/hist: private FUZZ_EXTRA := -fno-sanitize-coverage=trace-cmp -O2

.PHONY: fuzz fuzz-c fuzz-build fuzz-fleet help-fuzz
fuzz-build: $(FUZZ_BINS)

$(FUZZ_BUILD)/obj/%.o: bench/%.c $(ENGINE_HDRS)
	@mkdir -p $(@D)
	@echo "  CC FUZZ $@"
	$(Q)$(call quotes,$(FUZZ_CC)) $(PROJECT_CFLAGS) $(call quotes,$(FUZZ_CFLAGS)) $(FUZZ_SAN) -fsanitize=fuzzer-no-link $(FUZZ_EXTRA) -c -o $@ $<

$(FUZZ_BUILD)/obj/params.o: guest-init/params.c guest-init/params.h
	@mkdir -p $(@D)
	@echo "  CC FUZZ $@"
	$(Q)$(call quotes,$(FUZZ_CC)) $(PROJECT_CFLAGS) $(call quotes,$(FUZZ_CFLAGS)) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BINS): $(FUZZ_BUILD)/%: fuzz/%.c fuzz/fuzz.h $(FUZZ_OBJS) $(ENGINE_HDRS) guest-init/params.h
	@echo "  LD FUZZ $@"
	$(Q)$(call quotes,$(FUZZ_CC)) $(PROJECT_CFLAGS) $(call quotes,$(FUZZ_CFLAGS)) $(FUZZ_SAN) -fsanitize=fuzzer $(FUZZ_EXTRA) -o $@ $< $(FUZZ_OBJS) \
		$(LDLIBS) $(FUZZ_LIBS_$*)

# Each target for FUZZ_SECONDS from a scratch copy of its seed corpus
# (fuzz/corpus/ never grows by itself); fails on any crash or sanitizer
# report, whose input is kept under $(FUZZ_BUILD)/crashes/<target>/.
fuzz-c: $(FUZZ_BINS)
	$(Q)./fuzz/run $(call quote,$(FUZZ_SECONDS)) $(FUZZ_TARGETS)

fuzz: fuzz-c
ifneq ($(wildcard tests/props/*.t),)
	$(Q)CB_PROP_EXAMPLES=$(call quote,$(PROP_EXAMPLES)) ./tests/run $(wildcard tests/props/*.t)
else
	@echo "fuzz: no tests/props/*.t: the Python property tests are skipped"
endif

# The fleet playbook's path filter alone (make fuzz runs it with the others).
fuzz-fleet:
	$(Q)CB_PROP_EXAMPLES=$(call quote,$(PROP_EXAMPLES)) ./tests/run tests/props/fleetpaths.t

help-fuzz:
	@echo "make fuzz-c       each libFuzzer target (fuzz/) for FUZZ_SECONDS (default 60) under ASan+UBSan"
	@echo "make fuzz         make fuzz-c, then the Python property tests (tests/props: the loader, frames, textfile,"
	@echo "                  the fleet playbook's path filter...; PROP_EXAMPLES, default 5000)"
	@echo "make fuzz-fleet   the fleet playbook's path filter only (tests/props/fleetpaths.t)"
