# torture.mk: `make torture` (root): harness steps interrupted at random
# moments, on a fake clocksource folder and on this machine's sysfs, then
# checked for anything left changed (tests/torture/torture --help).
# TORTURE_ITERATIONS (50 per mode), TORTURE_SEED (printed, to replay),
# TORTURE_MODES (fake,real).
# They are tests/torture/torture's, read from its environment (make passes
# those given on its command line).
.PHONY: torture
torture: all guest-initramfs
	$(Q)tests/torture/torture
