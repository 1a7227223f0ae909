"""healthadvice.py: what clockbench health tells an operator to do, as data: one row per cause, one per cost.

Adding a cause is adding a row to CAUSES (and the reading that finds it,
healthjudge.classify); adding a cost is a row of COSTS.
"""
from cbcontract import names

# Switching back is not enough for the VMs already running: KVM keeps
# their master clock off until each VM's clock is set again (cbhost.heal).
RUNNING_VMS = "but every VM that was running keeps its master clock off and reads the clock by syscall until it " \
              "is paused and resumed (clockbench heal), migrated or restarted, least disruptive first"
REBOOT = "a TSC marked unstable comes back only after a reboot"
SWITCH_BACK = "(as root: echo tsc > " + names.CS_SYSFS + "/current_clocksource)"

# Each cause of a clock off the TSC: (its key, what it is, what an operator
# does about it or None).  A TSC the kernel marked unstable comes back only
# with a reboot; one left by hand or by clocksource= is still offered and
# can be switched back at once.
CAUSE_ROWS = (
    ("never_lost", "never lost: the kernel uses the TSC", None),
    ("boot_warp", "boot warp: the boot-time TSC sync check (tsc_sync.c) found CPUs apart",
     "the firmware left the CPUs' TSCs apart: update the BIOS (TSC_ADJUST), then reboot; "
     "a lost TSC comes back only after a reboot"),
    ("watchdog", "watchdog: the clocksource watchdog marked the TSC unstable after boot",
     "clockbench health's watchdog section says which test failed and the readout's risk; find what delays the "
     "watchdog or skews the TSC (firmware, SMIs, a loaded host), then reboot: a lost TSC comes back only after a reboot"),
    ("forced_unstable", "forced: tsc=unstable on the kernel command line",
     "remove tsc=unstable from the kernel command line and reboot: " + REBOOT),
    ("marked_unstable", "marked unstable by the kernel at boot", "the kernel's own line names its reason; " + REBOOT),
    ("set_at_boot", "set at boot: clocksource= on the kernel command line",
     "remove clocksource= from the kernel command line, and switch back now " + SWITCH_BACK
     + ": the TSC is still offered; " + RUNNING_VMS),
    ("by_hand", "changed by hand: the TSC is still offered, no log line says it was lost",
     "switch back " + SWITCH_BACK + ": the TSC is still offered, no reboot of the host needed; " + RUNNING_VMS),
    ("not_chosen", "never chosen: the kernel log shows no switch to the TSC", None),
    ("unknown", "unknown: not on tsc, and no kernel log line or option read says why",
     "read this boot's kernel log as root (dmesg) to learn why; a TSC the kernel marked unstable comes back only "
     "after a reboot"),
)
CAUSES = {key: text for key, text, _ in CAUSE_ROWS}
ADVICE = {key: todo for key, _, todo in CAUSE_ROWS if todo}
# A healthy guest off the TSC: nothing is wrong with its clock.
GUEST_HEALTHY = "nothing, for this guest's clock (its reads stay in user space); to read the TSC directly instead: "

# What a degraded clock costs, the first row whose case fits: (case, text);
# {reads} is what the path probe says of this machine's reads (READS).
COSTS = (
    ("host", "what it costs: {reads}; its KVM guests lose the\n"
             "  master clock and PVCLOCK_TSC_STABLE_BIT (make bench measures it). A lost TSC stays lost\n"
             "  until reboot; find the cause above. Do not paper over it with tsc=reliable."),
    ("vms_lost", "what it costs: each VM that lost the stable bit answers every clock_gettime() by a syscall\n"
                 "  (make bench measures it); `clockbench heal --yes` gives the bit back with a pause of a few ms each."),
    ("guest", "what it costs: this guest's clock reads leave user space; the fix is on its host (a host on tsc\n"
              "  gives its guests the stable bit). Do not paper over it with tsc=reliable."),
)
READS = {"syscall": "every clock read is a syscall on this host (the path probe says so)",
         "user": "clock reads are still answered in user space here (the path probe: vDSO)",
         None: "whether clock reads are syscalls here is not known ({note})"}


def advise(cause, healthy, guest):
    """What to do about a cause (None: nothing to say), for a host or a guest."""
    todo = ADVICE.get(cause)
    return GUEST_HEALTHY + todo if todo and healthy and guest else todo


def cost(state, guest, lost_vms, path, path_note):
    """The lines of what a degraded clock costs (None when it is not degraded)."""
    if state != "degraded":
        return None
    case = "host" if not guest else "vms_lost" if lost_vms else "guest"
    text = dict(COSTS)[case]
    return text.format(reads=READS.get(path, READS[None]).format(note=path_note))
