# guest.mk: the guest path: a static PID 1 running the engine, its initramfs,
# and `make bench-guest`.  Included by the top Makefile; docs/guest.md.

GUEST_BUILD := $(BUILD)/guest
GUEST_INIT := $(GUEST_BUILD)/init
# DEBUG=1: a debug initramfs with busybox, from BUSYBOX.
ifeq ($(DEBUG),1)
GUEST_INITRAMFS := $(GUEST_BUILD)/initramfs-debug.cpio
GUEST_CPIO_FLAGS := --busybox $(call quote,$(BUSYBOX))
else
GUEST_INITRAMFS := $(GUEST_BUILD)/initramfs.cpio
GUEST_CPIO_FLAGS :=
endif

# tests/guest-init/*.t run under tests/run after `make all`.  Those that boot
# build the initramfs themselves (make guest-initramfs, after the musl engine
# objects exist, so no race with the top-level build) and skip without
# qemu-system-x86 or a kernel image (KERNEL=, else /boot/vmlinuz-*).

.PHONY: guest-init guest-initramfs bench-guest help-guest
guest-init: $(GUEST_INIT)
guest-initramfs: $(GUEST_INITRAMFS)

GUEST_SRCS := $(wildcard guest-init/*.c)
GUEST_HDRS := $(wildcard guest-init/*.h)
GUEST_OBJS := $(patsubst guest-init/%.c,$(GUEST_BUILD)/%.o,$(GUEST_SRCS))

$(GUEST_BUILD)/%.o: guest-init/%.c $(GUEST_HDRS) $(ENGINE_HDRS) $(MUSL_INC)/.stamp
	@mkdir -p $(@D)
	@echo "  MUSLCC  $@"
	$(Q)$(call quotes,$(MUSL_CC)) $(PROJECT_CFLAGS) -isystem $(MUSL_INC) -Ibench $(call quotes,$(CFLAGS)) -c -o $@ $<

# Stripped: the image holds /init alone and stays well under 1 MiB.  The
# engine it links: the same musl objects as build/clockbench-static.
$(GUEST_INIT): $(GUEST_OBJS) $(MUSL_ENGINE_OBJS)
	@echo "  LD      $@"
	$(Q)$(call quotes,$(MUSL_CC)) -static -s $(call quotes,$(CFLAGS)) $(call quotes,$(LDFLAGS)) -o $@ $^ $(LDLIBS)

# The guest's facts and frames on the host, linked with the host engine:
# tests/guest-init/unit.t.
$(BUILD)/test-guest-unit: tests/guest-init/unit.c tests/lib/tap.h $(filter-out guest-init/init.c,$(GUEST_SRCS)) $(GUEST_HDRS) $(HOST_OBJS) $(ENGINE_HDRS)
	@echo "  LD      $@"
	$(Q)$(call quotes,$(CC)) $(PROJECT_CFLAGS) -Ibench -Iguest-init $(call quotes,$(CFLAGS)) -o $@ $(filter %.c %.o,$^) $(LDLIBS)

$(GUEST_INITRAMFS): $(GUEST_INIT) guest-init/mkinitramfs.py
	@echo "  CPIO    $@"
	$(Q)$(PYTHON) guest-init/mkinitramfs.py -o $@ --init $(GUEST_INIT) $(GUEST_CPIO_FLAGS)

# One guest run on the host's current clocksource, ending in a table.
# Settings (KERNEL, ACCEL, VCPUS, MACHINE, CPU, PIN, ...) from the make
# command line, each as its option (packaging/settings);
# `host-scripts/bench-guest --help`.
bench-guest: $(GUEST_INITRAMFS)
	$(Q)./host-scripts/bench-guest $(if $(filter INITRAMFS,$(GIVEN_SETTINGS)),,--initramfs="$(GUEST_INITRAMFS)") \
		$(call options,$(GUEST_SETTINGS)) \
		--results $(call quote,$(RESULTS)) --run-id $(call quote,$(RUN_ID))

help-guest:
	@echo "make bench-guest  boot a QEMU guest with clockbench as PID 1; result in "$(call quote,$(RESULTS))"/<run-id>/guest-*.json"
	@echo "make guest-initramfs [DEBUG=1]  build $(GUEST_BUILD)/initramfs.cpio (DEBUG=1 adds busybox)"
