/* names.h: the facts the engine's C and the commands' Python and shell
 * share, each written here once.  Not a header of declarations: a list of
 * lines read three ways, so each fact is one whole line of one of the
 * shapes below and nothing else.
 *   C       clockbench.h includes it for the #define lines; a table is made
 *           by defining the line macro it needs (CB_CLOCK, CB_METHOD,
 *           CB_EXIT, CB_GUEST_EXIT, CB_WORKLOAD) and including this file again (the
 *           others expand to nothing): bench/opts.c, clockbench.h's enums,
 *           guest-init/exit-codes.h.
 *   Python  contract/cbcontract/names.py, one regular expression a line.
 *   shell   host-scripts/lib/version.sh's cb_fact (make reads it there too).
 * tests/contract/names.t holds the commands' own outputs to what this file
 * says, and fails where another file spells one of these facts again.
 *
 * Each was written by hand in several places before: the clock names
 * (bench/opts.c twice and in its --help, names.py), the methods
 * (clockbench.h's enum, bench/opts.c, names.py), the exit statuses
 * (clockbench.h, names.py), the guest's exit codes (guest-init/exit-codes.h,
 * names.py), the version (clockbench.h, read by a sed in each reader), the
 * kernel's files below (C, Python and shell) and the debug-exit port
 * (guest-init/init.c, the launcher's QEMU and libvirt devices). */

/* The one version of every command and of the package. */
#define CB_VERSION "0.2.0"
/* The kernel's clocksource folder (current_clocksource, available_clocksource). */
#define CB_CS_SYSFS "/sys/devices/system/clocksource/clocksource0"
/* The kernel log, record by record. */
#define CB_KMSG_DEV "/dev/kmsg"
/* The clocksource bracket's state folder: the saved clocksource and the lock. */
#define CB_STATE_DIR "/run/clockbench"
/* The watch's own folder (root's, 0700; its unit's RuntimeDirectory=): its single-instance lock. */
#define CB_WATCH_RUN_DIR "/run/clockbench-watch"
/* heal's records of each VM's clock it set or saw, for this boot: root's, 0700. */
#define CB_HEAL_DIR "/run/clockbench-heal"
/* The clocksources the kernel stands in with while it settles (tsc-early at
 * boot; jiffies and refined-jiffies, listed in available_clocksource only
 * on a periodic tick): never measured, never switched to. */
#define CB_CS_STAND_INS "tsc-early jiffies refined-jiffies"
/* The KVM device: a process holding it runs a VM. */
#define CB_KVM_DEV "/dev/kvm"
/* The guest's isa-debug-exit device's port: /init writes its exit code there. */
#define CB_DEBUG_EXIT_PORT 0xf4

#ifndef CB_EXIT
#define CB_EXIT(name, code)
#endif
#ifndef CB_CLOCK
#define CB_CLOCK(name, id)
#endif
#ifndef CB_METHOD
#define CB_METHOD(member, name, clocked)
#endif
#ifndef CB_GUEST_EXIT
#define CB_GUEST_EXIT(name, code, meaning)
#endif
#ifndef CB_WORKLOAD
#define CB_WORKLOAD(member, name, unit, short_unit, latency)
#endif
#ifndef CB_CLOCKSOURCE
#define CB_CLOCKSOURCE(name, kind, what, published)
#endif

/* Exit statuses every command shares: CB_EXIT_<name>.  CANNOT: the check
 * asked for cannot be made on this machine. */
CB_EXIT(OK, 0)
CB_EXIT(FAIL, 1)
CB_EXIT(USAGE, 2)
CB_EXIT(CANNOT, 3)

/* The clocks in the engine's order: the --clocks name, the clock it reads. */
CB_CLOCK("realtime", CLOCK_REALTIME)
CB_CLOCK("monotonic", CLOCK_MONOTONIC)
CB_CLOCK("monotonic_raw", CLOCK_MONOTONIC_RAW)
CB_CLOCK("boottime", CLOCK_BOOTTIME)
CB_CLOCK("tai", CLOCK_TAI)
CB_CLOCK("realtime_coarse", CLOCK_REALTIME_COARSE)
CB_CLOCK("monotonic_coarse", CLOCK_MONOTONIC_COARSE)

/* The methods in the engine's order: enum cb_method's CB_<member>, the
 * --methods name, 1 if it reads a clock (one row per clock). */
CB_METHOD(VDSO, "vdso", 1)
CB_METHOD(SYSCALL, "syscall", 1)
CB_METHOD(SYSCALL_INLINE, "syscall-inline", 1)
CB_METHOD(RDTSC, "rdtsc", 0)
CB_METHOD(RDTSCP, "rdtscp", 0)
CB_METHOD(NULL, "null", 0)

/* The workloads in the engine's order, one row each: enum cb_workload's
 * CB_WL_<member>, the --workloads name, the unit of its rate (higher is
 * better), the unit as the screen's tables shorten it, 1 if it also
 * measures a latency (microseconds, lower is better).  The JSON key of
 * each is "workload": NAME in the engine's "workloads".  A new workload is
 * a row here and its function in bench/workload.c (docs/engine.md). */
CB_WORKLOAD(TCP_STREAM, "tcp-stream", "Gbit/s", "Gbit/s", 0)
CB_WORKLOAD(TCP_RR, "tcp-rr", "transactions/s", "trans/s", 1)
CB_WORKLOAD(TIMER, "timer", "wakeups/s", "wake/s", 1)

/* The clocksource kinds, one row each: the kernel's name; its kind: tsc
 * (the TSC itself: KVM keeps its master clock on and guests get
 * PVCLOCK_TSC_STABLE_BIT only on these, pvclock_gtod_notify() in
 * arch/x86/kvm/x86.c), paravirtual (a guest's clock from its hypervisor:
 * healthy read in user space), device (a timer read by syscall: a host's
 * fallback); what it is, as a person names it; what others measured a
 * host read through it to cost, with the source, where this host offers
 * none to measure ("-": none to plan with).  Read by Python only. */
CB_CLOCKSOURCE("tsc", "tsc", "the TSC", "-")
CB_CLOCKSOURCE("tsc-early", "tsc", "the TSC (early boot)", "-")
CB_CLOCKSOURCE("kvm-clock", "paravirtual", "KVM's pvclock", "-")
CB_CLOCKSOURCE("hyperv_clocksource_tsc_page", "paravirtual", "Hyper-V's TSC page", "-")
CB_CLOCKSOURCE("hyperv_clocksource_msr", "paravirtual", "Hyper-V's reference MSR", "-")
CB_CLOCKSOURCE("xen", "paravirtual", "Xen's pvclock", "-")
CB_CLOCKSOURCE("hpet", "device", "the HPET", "561 to 1,542 ns a host read (bare metal and a laptop, published)")
CB_CLOCKSOURCE("acpi_pm", "device", "the ACPI PM timer", "about 2,500 ns a host read (Red Hat's real-time guide)")

/* The guest's exit codes: /init writes CODE to isa-debug-exit, and QEMU
 * exits with (CODE << 1) | 1; the launcher says MEANING for it. */
CB_GUEST_EXIT(GX_ENGINE, 1, "engine failed")
CB_GUEST_EXIT(GX_SETUP, 2, "guest setup failed (mount, channel or fork)")
CB_GUEST_EXIT(GX_SIGNAL, 3, "engine killed by a signal")
CB_GUEST_EXIT(GX_PARAM, 4, "bad clockbench.* parameter")
CB_GUEST_EXIT(GX_OUTPUT, 5, "engine output missing or unreadable")

#undef CB_EXIT
#undef CB_CLOCK
#undef CB_METHOD
#undef CB_GUEST_EXIT
#undef CB_WORKLOAD
#undef CB_CLOCKSOURCE
