"""kernels.py: the clocksource watchdog's rules per kernel era, as read in the kernel source.

One table, ERAS: each row is an era of x86 Linux's clocksource watchdog
(kernel/time/clocksource.c, include/linux/clocksource.h, kernel/time/Kconfig,
arch/x86/kernel/tsc.c, arch/x86/kernel/tsc_sync.c), with the release it was
read at, cited as kernel.org's tree and that release's tag (TREES: the tag's
commit once checked), the blob id of every file read (a git blob id names
the file's content, so anyone can check it against the tag:
tests/contract/kernels-upstream.t) and the functions the figures come
from.  docs/watchdog.md says the same in words.

  rules_for(release, version=None) -> dict | None
      the era's rules for a running kernel: `release` is `uname -r`
      ("6.1.0-57-amd64", "6.12.48+deb13-amd64", "6.18.44"); `version` is
      the optional `uname -v`, where Debian names its upstream release
      ("... Debian 6.1.158-1 ...").  None: the table does not cover it.
  why_unknown(release, version=None) -> str   why rules_for said None ("" if not)
  unwatched_rules(release, version=None) -> list | None
      the conditions under which that kernel does not watch the TSC
  rules_for(release, version, params): params = the names in
      /sys/module/clocksource/parameters/; within 6.1.y and 6.6.y they pick
      the row (max_cswd_read_retries present: the legacy row)
  limits(rules, ...) -> dict   the era's formulas made numbers for one host
  watchdog_for(rules, available) -> name | None   which clocksource watches
      (WATCHDOG_CANDIDATES: ratings; 6.1-6.19 fall back to refined-jiffies)
  messages(release, version=None) -> list | None   the lines that era prints
  all_messages() -> [(era id, message)]   every format string of every row,
      and WORDINGS: the wordings of the rules before 6.1 (2.6.18 on)

Message kinds use kmsg.py's names (kmsg.KINDS: verdict/..., near-miss/...,
detail/...); kmsg.py owns the classifier, this table the format strings.

A release the table does not cover gets None and a reason, never the
nearest row.  Within a covered stable series a figure that moved by a
backport at a sublevel not pinned here says so ("varies"): read the
running system (/sys/module/clocksource/parameters/, /boot/config-*).
Pure data and arithmetic: nothing here reads a file.
"""
import re

NS_PER_US = 1000
NS_PER_MS = 1000 * 1000
WATCHDOG_INTERVAL_S = 0.5          # WATCHDOG_INTERVAL = HZ >> 1, every era read
TSC_EARLY_MARGIN_NS = 32 * NS_PER_MS  # tsc.c clocksource_tsc_early.uncertainty_margin (6.1-6.19)

# The trees read, each cited as the upstream release whose files it holds:
# kernel.org's mainline tree for a .0 release, the stable tree for the rest;
# tag: that release's tag; commit: the tag's commit, None until the blob
# ids below have been compared with the tag in a clone of that tree
# (tests/contract/kernels-upstream.t with CLOCKBENCH_KERNEL_GIT does it),
# and checked: the date they were.
#
# copy: where the files were in fact read, on 2026-12-01: public copies of
# each release (a release imported in one commit, then a project's own
# commits that, save 6.12.19's, touch none of the files below; 6.12.19's
# copy reached that release by its own "up to 6.12.N" commits).  It is
# provenance, never the citation: a reader should trust the tag, not the
# copy, and until `commit` is filled in the blob ids are the copy's.
MAINLINE = "git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git"
STABLE = "git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git"
TREES = {
    "6.1.158": {
        "tree": STABLE,
        "tag": "v6.1.158",
        "commit": None,
        "checked": None,
        "copy": "github.com/HDevices/linux-6.1.158@71dd535994d7e3ec9784a45b82d1ba34b868f7f6",
        "files": {
            "kernel/time/clocksource.c": "e89fd0bbc3b359cd06f145cbcbec790c7d7c5b5f",
            "include/linux/clocksource.h": "0ad8b550bb4b4674fab70fc81dda94a76a7c9579",
            "kernel/time/Kconfig": "a41753be1a2bf266183071a9e3c3964ffeabbc81",
            "arch/x86/kernel/tsc.c": "e5ec68ce938a245a7ab32b4611144f984a5e7947",
            "arch/x86/kernel/tsc_sync.c": "7a1e3f53be24b261a5afc41e430a141dd3d07ac1",
            "arch/x86/kernel/hpet.c": "54732da52dc14bdf5bce7b26dc65ef45df50a657",
            "drivers/clocksource/acpi_pm.c": "279ddff81ab4955a7106dd3504433fa41f546a4e",
        },
    },
    "6.1.55": {
        "tree": STABLE,
        "tag": "v6.1.55",
        "commit": None,
        "checked": None,
        "copy": "github.com/BaptistePires/purgatory-linux-6.1.55@9c4b332c95c2658c7a262f5f6a992646f0bca476",
        "files": {
            "kernel/time/clocksource.c": "1c90e710d537f1ede70f09ce0216c8d229d3839e",
            "include/linux/clocksource.h": "1d42d4b1732717056c4d7acca4ae311a3ca1cffc",
            "kernel/time/Kconfig": "a41753be1a2bf266183071a9e3c3964ffeabbc81",
            "arch/x86/kernel/tsc.c": "cafacb2e58cceb1d106896b00fea7462db066052",
            "arch/x86/kernel/tsc_sync.c": "9452dc9664b51fddcfaeb6274935c91885814fda",
        },
    },
    "6.6.9": {
        "tree": STABLE,
        "tag": "v6.6.9",
        "commit": None,
        "checked": None,
        "copy": "github.com/mihaelbh/adding-new-sched-policy-to-linux-6.6.9@b0e4488ba24cdd25763888543ec84b9fe8a6f5b2",
        "files": {
            "kernel/time/clocksource.c": "c108ed8a9804ada919575c97b42dd663e33c1a16",
            "include/linux/clocksource.h": "1d42d4b1732717056c4d7acca4ae311a3ca1cffc",
            "kernel/time/Kconfig": "bae8f11070befeefb1fe5c5ed1957c806f9195ff",
            "arch/x86/kernel/tsc.c": "15f97c0abc9d09e80bc67a21adf76103d2cefea1",
            "arch/x86/kernel/tsc_sync.c": "1123ef3ccf9011f55f60d72fb78de75b947b0474",
        },
    },
    "6.6.63": {
        "tree": STABLE,
        "tag": "v6.6.63",
        "commit": None,
        "checked": None,
        "copy": "github.com/OpenNuvoton/MA35D1_linux-6.6.y@a4595a4caf6f28051f111c6fa4d96499a9bb756f",
        "files": {
            "kernel/time/clocksource.c": "aa864999dc21be9fe11a00df79e90b0ae794e897",
            "include/linux/clocksource.h": "0ad8b550bb4b4674fab70fc81dda94a76a7c9579",
            "kernel/time/Kconfig": "bae8f11070befeefb1fe5c5ed1957c806f9195ff",
            "arch/x86/kernel/tsc.c": "15f97c0abc9d09e80bc67a21adf76103d2cefea1",
            "arch/x86/kernel/tsc_sync.c": "4334033658edfbbe71ec48bda9f8fbcda2749c33",
            "arch/x86/kernel/hpet.c": "046bc9d57e996617a0bdfa8af4d86cf3f84a4074",
            "drivers/clocksource/acpi_pm.c": "82338773602cae8011ee375709dc138255e810bb",
        },
    },
    "6.12.19": {
        "tree": STABLE,
        "tag": "v6.12.19",
        "commit": None,
        "checked": None,
        "copy": "github.com/wishday/linux-6.12.y@21ae40e85ea77ea637c424763d05253726bb349e",
        "files": {
            "kernel/time/clocksource.c": "58fb7280cabbe6a6371b21a7c0e96f95fcc07d98",
            "include/linux/clocksource.h": "c846436b64593e913d452d2ba07870e13729ea21",
            "kernel/time/Kconfig": "b0b97a60aaa6fc21c93005ef393d56afbac7fa5c",
            "arch/x86/kernel/tsc.c": "dfe6847fd99e5e1e8dd1349f6a72bc53a7960bf4",
            "arch/x86/kernel/tsc_sync.c": "4334033658edfbbe71ec48bda9f8fbcda2749c33",
            "arch/x86/kernel/hpet.c": "c96ae8fee95e443b262c1083fe0a9f96e4e6a67c",
            "drivers/clocksource/acpi_pm.c": "b4330a01a566bf5d12d2d61f4b36e9bc8eff5926",
        },
    },
    "6.18.26": {
        "tree": STABLE,
        "tag": "v6.18.26",
        "commit": None,
        "checked": None,
        "copy": "github.com/nickfox-taterli/nanopi-r5c-linux-6.18.26@aa1ac7b608458f3fcd6c17c86f5514a475f04b3f",
        "files": {
            "kernel/time/clocksource.c": "df719496165849aee21730886ad497822201f579",
            "include/linux/clocksource.h": "65b7c41471c390463770c2da13694e58e83b84ea",
            "kernel/time/Kconfig": "7c6a52f7836cef248e0949060b50baa293f446cf",
            "arch/x86/kernel/tsc.c": "87e749106dda669e8788904d984ac60fa5aa026c",
            "arch/x86/kernel/tsc_sync.c": "ec3aa340d351dc49f42c14489819caf544e89456",
        },
    },
    "6.19.0": {
        "tree": MAINLINE,
        "tag": "v6.19",
        "commit": None,
        "checked": None,
        "copy": "github.com/matankalina/linux-6.19.10-fork@483059de9f9396c5ccd4bbf3731d3a3d7e5b1089",
        "files": {
            "kernel/time/clocksource.c": "df719496165849aee21730886ad497822201f579",
            "include/linux/clocksource.h": "65b7c41471c390463770c2da13694e58e83b84ea",
            "kernel/time/Kconfig": "7c6a52f7836cef248e0949060b50baa293f446cf",
            "arch/x86/kernel/tsc.c": "7d3e13e14eabe602acf57c30f1c5eab01c89ec75",
            "arch/x86/kernel/tsc_sync.c": "ec3aa340d351dc49f42c14489819caf544e89456",
        },
    },
    "7.1.3": {
        "tree": STABLE,
        "tag": "v7.1.3",
        "commit": None,
        "checked": None,
        "copy": "github.com/rikudousennin22/linux-7.1.3@037c6bf47ba7b581c3b798e5220e3746ff6c24f2",
        "files": {
            "kernel/time/clocksource.c": "baee13a1f87f327ccfb4e70529376dc2b0f9abd1",
            "include/linux/clocksource.h": "7c38190b10bf0c6e2c176d5243c9572e0ff19840",
            "kernel/time/Kconfig": "02aac7c5aa768108ffffae273ead85dc69b57231",
            "arch/x86/kernel/tsc.c": "c5110eb554bcf17f1ca9f3af1ed63a77f1c2b4ad",
            "arch/x86/kernel/tsc_sync.c": "ec3aa340d351dc49f42c14489819caf544e89456",
            "arch/x86/kernel/hpet.c": "8dc7b710e12504e82337680baa08c2714024aace",
            "drivers/clocksource/acpi_pm.c": "67792937242fa3b26326962e2e251397706049e6",
        },
    },
}

# Upstream commits that draw the era lines, each seen (id, subject, and
# where it landed) in a kernel.org mail: tip-bot or stable review.
COMMITS = {
    "c37e85c135ce": ("c37e85c135cead4256dc8860073c468d8925c3df", "clocksource: Loosen clocksource watchdog constraints",
                     "tip timers/core, Dec 2022: WATCHDOG_MAX_SKEW to 125 us (500 ppm of the 0.5 s interval)"),
    "2ed08e4bc532": ("", "clocksource: Scale the watchdog read retries automatically",
                     "removes clocksource.max_cswd_read_retries; stable 6.6.46 (review 2024-08-12) and 6.1.y in the same week"),
    "f2655ac2c06a": ("f2655ac2c06a15558e51ed6529de280e1553c86e", "clocksource: Fix brown-bag boolean thinko in cs_watchdog_read()",
                     "the 'retried' message condition || -> &&; backported with 2ed08e4bc532"),
    "4ac1dd3245b9": ("4ac1dd3245b9067f929ab30141bb0475e9e32fc5", "clocksource: Set cs_watchdog_read() checks based on .uncertainty_margin",
                     "pull timers-clocksource-2024-09-16: in v6.12"),
    "e7ff4ebffe3b": ("e7ff4ebffe3bedf55560ef861d80f6500ff0d76f", "x86/tsc: Check for sockets instead of CPUs to make code match comment",
                     "tip, 2024, beside 4ac1dd3245b9: the qualified-platform rule counts packages"),
    "c06343be0b4e": ("c06343be0b4e03fe319910dd7a5d5b9929e1c0cb", "clocksource: Reduce watchdog readout delay limit to prevent false positives",
                     "tip timers/urgent 2026-01-21; stable 6.12.68 and 6.18.8 (reviews of 2026-01-28); in 6.19"),
    "rewrite": ("763aacf86f1b (one of several ids of its rebases seen in push logs; not pinned)",
                "clocksource: Rewrite watchdog code completely",
                "tglx, patch of 2026-01-24, v2 2026-03-17; applied after v7.0-rc4; first release read: 7.1.3"),
}

_CS = "kernel/time/clocksource.c"
_TSC = "arch/x86/kernel/tsc.c"
_SYNC = "arch/x86/kernel/tsc_sync.c"


def _m(kind, level, fmt, where, prefix="clocksource: ", meaning=""):
    return {"kind": kind, "level": level, "prefix": prefix, "fmt": fmt, "where": where, "meaning": meaning}


# Lines every era read prints (tsc.c, tsc_sync.c, clocksource selection).
_COMMON_MESSAGES = [
    _m("switched", "info", "Switched to clocksource %s\n", _CS + " __clocksource_select()",
       meaning="the kernel changed clocksource"),
    _m("unstable", "info", "Marking TSC unstable due to clocksource watchdog\n", _TSC + " tsc_cs_mark_unstable()",
       prefix="tsc: ", meaning="the watchdog's verdict reached the TSC"),
    _m("unstable", "info", "Marking TSC unstable due to %s\n", _TSC + " mark_tsc_unstable()",
       prefix="tsc: ", meaning="another cause (boot parameter, TSCs unsynchronized, check_tsc_sync_source failed, ...)"),
    _m("warp", "warn", "Measured %Ld cycles TSC warp between CPUs, turning off TSC clock.\n",
       _SYNC + " check_tsc_sync_source()", prefix="", meaning="boot/hotplug warp test failed"),
    _m("sync-check", "warn", "TSC synchronization [CPU#%d -> CPU#%u]:\n", _SYNC + " check_tsc_sync_source()",
       prefix="", meaning="first line of a warp verdict (6.1.158: CPU#%d for both)"),
    _m("warp", "warn", "TSC warped randomly between CPUs\n", _SYNC + " check_tsc_sync_source()", prefix=""),
    _m("tsc-adjust", "warn", "TSC ADJUST differs: CPU%u %lld --> %lld. Restoring\n",
       _SYNC + " tsc_verify_tsc_adjust()", prefix="[Firmware Bug]: ",
       meaning="IA32_TSC_ADJUST changed after boot (checked on idle and by a 10-minute timer)"),
    _m("tsc-adjust", "warn", "TSC ADJUST: CPU%u: %lld force to 0\n", _SYNC + " tsc_sanitize_first_cpu()",
       prefix="[Firmware Bug]: "),
    _m("tsc-adjust", "warn", "TSC ADJUST compensate: CPU%u observed %lld warp. Adjust: %lld\n",
       _SYNC + " check_tsc_sync_target()", prefix=""),
    _m("sched-clock/unstable", "warn", "TSC found unstable after boot, most likely due to broken BIOS. Use 'tsc=unstable'.\n",
       "kernel/sched/clock.c __sched_clock_work() (read at 6.1.158)", prefix="",
       meaning="follows a verdict after boot: sched_clock leaves the TSC too"),
    _m("sched-clock/unstable", "info", "sched_clock: Marking unstable (%lld, %lld)<-(%lld, %lld)\n",
       "kernel/sched/clock.c __sched_clock_work() (read at 6.1.158)", prefix=""),
]

# cs_watchdog_read() and clocksource_watchdog() of 6.1-6.19.
_RETRIED = _m("near-miss/retried", "warn", "timekeeping watchdog on CPU%d: %s retried %d times before success\n",
              _CS + " cs_watchdog_read()",
              meaning="a readout succeeded only at the last allowed attempt (nretries > 1 && nretries >= max_retries); "
                      "earlier successes after retries print nothing")
_SKIP = [
    _m("detail/wd-wd", "info", "timekeeping watchdog on CPU%d: %s wd-wd read-back delay of %lldns\n",
       _CS + " cs_watchdog_read()", meaning="first of the two skip lines: the back-to-back watchdog reads were slow too"),
    _m("near-miss/skip", "info", "wd-%s-wd read-back delay of %lldns, clock-skew test skipped!\n",
       _CS + " cs_watchdog_read()", meaning="a slow readout on a machine too busy to judge: the check is skipped "
                                            "and the watchdog pauses 300 s"),
]
_LONG = _m("near-miss/long-interval", "warn",
           "Long readout interval, skipping watchdog check: cs_nsec: %lld wd_nsec: %lld\n",
           _CS + " clocksource_watchdog()",
           meaning="more than 1 s since the last check; printed only after boot and when the interval doubled the longest seen")
_SKEW_HEAD = _m("verdict/skew", "warn",
                "timekeeping watchdog on CPU%d: Marking clocksource '%s' as unstable because the skew is too large:\n",
                _CS + " clocksource_watchdog()", meaning="TSC and watchdog disagreed over the interval by more than the two margins")
_SKEW_DETAIL = [
    _m("detail/skew", "warn", "                      '%s' wd_nsec: %lld wd_now: %llx wd_last: %llx mask: %llx\n", _CS + " clocksource_watchdog()"),
    _m("detail/skew", "warn", "                      '%s' cs_nsec: %lld cs_now: %llx cs_last: %llx mask: %llx\n", _CS + " clocksource_watchdog()"),
]
_SKEW_NS = _m("detail/skew", "warn",
              "                      Clocksource '%s' skewed %lld ns (%lld ms) over watchdog '%s' interval of %lld ns (%lld ms)\n",
              _CS + " clocksource_watchdog()")
_SKEW_TAIL = [
    _m("detail/skew", "warn", "                      '%s' is current clocksource.\n", _CS + " clocksource_watchdog()"),
    _m("detail/skew", "warn", "                      '%s' (not '%s') is current clocksource.\n", _CS + " clocksource_watchdog()"),
    _m("detail/skew", "warn", "                      No current clocksource.\n", _CS + " clocksource_watchdog()"),
]


def _percpu(check_level, durations_level):
    where = _CS + " clocksource_verify_percpu()"
    return [
        _m("detail/percpu", check_level, "Checking clocksource %s synchronization from CPU %d to CPUs %*pbl.\n", where,
           meaning="after a verdict on the current clocksource: each chosen CPU read once"),
        _m("detail/percpu", "warn", "        CPUs %*pbl ahead of CPU %d for clocksource %s.\n", where),
        _m("detail/percpu", "warn", "        CPUs %*pbl behind CPU %d for clocksource %s.\n", where),
        _m("detail/percpu", durations_level, "        CPU %d check durations %lldns - %lldns for clocksource %s.\n", where),
        _m("detail/percpu", "warn", "Not enough CPUs to check clocksource '%s'.\n", where),
    ]


_READBACK_61 = _m("verdict/readback", "warn",
                  "timekeeping watchdog on CPU%d: %s read-back delay of %lldns, attempt %d, marking unstable\n",
                  _CS + " cs_watchdog_read()",
                  meaning="every attempt of one tick was slow: the TSC is marked unstable; 'attempt %d' is the number of attempts made")
_READBACK_66 = _m("verdict/readback", "warn",
                  "timekeeping watchdog on CPU%d: wd-%s-wd excessive read-back delay of %lldns vs. limit of %ldns, "
                  "wd-wd read-back delay only %lldns, attempt %d, marking %s unstable\n",
                  _CS + " cs_watchdog_read()",
                  meaning="every attempt of one tick was slow: the TSC is marked unstable; 'limit of' prints WATCHDOG_MAX_SKEW")

_RETRIED_LEGACY = dict(_RETRIED, meaning="a readout succeeded after 2 or more retries, or at the last allowed attempt "
                                         "(nretries > 1 || nretries >= max_cswd_read_retries)")
_MSG_61_LEGACY = [_RETRIED_LEGACY, _READBACK_61] + _SKIP + [_SKEW_HEAD] + _SKEW_DETAIL + _SKEW_TAIL + _percpu("warn", "warn")
_MSG_61 = [_RETRIED, _READBACK_61] + _SKIP + [_LONG, _SKEW_HEAD] + _SKEW_DETAIL + _SKEW_TAIL + _percpu("info", "warn")
_MSG_66_LEGACY = [_RETRIED_LEGACY, _READBACK_66] + _SKIP + [_SKEW_HEAD] + _SKEW_DETAIL + [_SKEW_NS] + _SKEW_TAIL + _percpu("warn", "warn")
_MSG_66 = [_RETRIED, _READBACK_66] + _SKIP + [_LONG, _SKEW_HEAD] + _SKEW_DETAIL + [_SKEW_NS] + _SKEW_TAIL + _percpu("warn", "warn")
_MSG_612 = [_RETRIED, _READBACK_66] + _SKIP + [_LONG, _SKEW_HEAD] + _SKEW_DETAIL + [_SKEW_NS] + _SKEW_TAIL + _percpu("info", "warn")
_MSG_618 = [_RETRIED, _READBACK_66] + _SKIP + [_LONG, _SKEW_HEAD] + _SKEW_DETAIL + [_SKEW_NS] + _SKEW_TAIL + _percpu("info", "info")
_MSG_71 = [
    _m("near-miss/readout-timeout", "info", "Watchdog %s read timed out. Readout sequence took: %lluns\n",
       _CS + " watchdog_print_freq_timeout()",
       meaning="all 3 readouts of one tick over 50 us: reported (rate-limited, 2 per 5 s), reference reset, not marked"),
    _m("verdict/freq-skew", "warn", "Marking clocksource %s unstable due to frequency skew\n", _CS + " watchdog_print_freq_skew()"),
    _m("detail/freq-skew", "warn", "Watchdog    %20s interval: %16lluns\n", _CS + " watchdog_print_freq_skew()"),
    _m("detail/freq-skew", "warn", "Clocksource %20s interval: %16lluns\n", _CS + " watchdog_print_freq_skew()"),
    _m("near-miss/remote-timeout", "info", "Watchdog remote CPU %u read timed out\n", _CS + " watchdog_handle_remote_timeout()",
       meaning="printed once per boot (pr_info_once); the check is retried next tick"),
    _m("verdict/cpu-skew", "warn", "Marking clocksource %s unstable due to inter CPU skew\n", _CS + " watchdog_print_remote_skew()"),
    _m("detail/cpu-skew", "warn", "CPU%u %16llu < CPU%u %16llu (cycles)\n", _CS + " watchdog_print_remote_skew()"),
]

# The conditions that leave the TSC unwatched, in tsc_init() order.  Each:
# what health reads, and what follows.  "any" rules: one suffices.

_UNW_COMMON = [
    {"id": "tsc=reliable", "cmdline": "tsc=reliable", "effect": "unwatched",
     "where": _TSC + " tsc_setup(), tsc_init()"},
    {"id": "tsc=nowatchdog", "cmdline": "tsc=nowatchdog", "effect": "unwatched",
     "where": _TSC + " tsc_setup(), tsc_init()"},
    {"id": "tsc_reliable-flag", "cpu_flags": ["tsc_reliable"], "effect": "unwatched",
     "where": _TSC + " check_system_tsc_reliable() (X86_FEATURE_TSC_RELIABLE, set by some hypervisors and Atom SoCs)"},
]


def _qualified(count, limit):
    return {"id": "qualified-platform", "cpu_flags": ["constant_tsc", "nonstop_tsc", "tsc_adjust"],
            "count": count, "max": limit, "effect": "unwatched",
            "where": _TSC + " check_system_tsc_reliable()"}


_UNW_61 = _UNW_COMMON + [_qualified("online NUMA nodes (nr_online_nodes)", 2),
                         {"id": "tsc=watchdog", "cmdline": "tsc=watchdog", "effect": "none",
                          "note": "not a 6.1 option: tsc_setup() ignores it"}]
_UNW_66 = _UNW_COMMON + [_qualified("online NUMA nodes (nr_online_nodes)", 4),
                         {"id": "tsc=watchdog", "cmdline": "tsc=watchdog", "effect": "tsc-watches-others",
                          "note": "does NOT watch the TSC: when the TSC is unwatched it makes hpet/acpi_pm watched, "
                                  "with the TSC as their watchdog (tsc_clocksource_watchdog_disabled()); "
                                  "an earlier or later tsc=nowatchdog wins"}]
_UNW_612 = _UNW_COMMON + [_qualified("packages (topology_max_packages())", 4), _UNW_66[-1]]
_UNW_71 = [dict(r, overridden_by="tsc=watchdog") for r in _UNW_COMMON] + [
    dict(_qualified("packages (topology_max_packages())", 4), overridden_by="tsc=watchdog"),
    {"id": "tsc=watchdog", "cmdline": "tsc=watchdog", "effect": "watched",
     "note": "forces the TSC watched over every rule above (tsc_disable_clocksource_watchdog() returns early); "
             "of tsc=watchdog and tsc=nowatchdog the last on the command line wins"}]


def _row(**kw):
    base = {
        "interval_s": WATCHDOG_INTERVAL_S,
        "watchdog_choice": "the highest-rated registered clocksource without CLOCK_SOURCE_MUST_VERIFY "
                           "(clocksource_select_watchdog(); hpet 250, acpi_pm 200, or 120 on chipsets with the "
                           "PIIX4 read bug); 6.1-6.19 do not require it to be continuous",
        "readout": ["watchdog", "clocksource", "watchdog", "watchdog"],
        "irqs_off": True,
        "max_skew_us_range": (50, 1000),
        "long_interval_ns": 2 * 500 * NS_PER_MS,
        "skip_pause_s": 300,
        "all_slow": "marked-unstable",
        "skew_margin": "cs+wd",
        "freq_check": None,
        "module_params": ["verify_n_cpus"],
        "cpu": "round-robin: each tick re-arms the timer on the next online CPU",
    }
    base.update(kw)
    return base


ERAS = (
    _row(id="6.1-legacy", covers=((6, 1, 0, 104),), read_at="6.1.55", max_skew_us_default=100,
         functions=[_CS + ": cs_watchdog_read() (max_cswd_read_retries), clocksource_watchdog(), "
                    "__clocksource_update_freq_scale()",
                    "kernel/time/Kconfig: CLOCKSOURCE_WATCHDOG_MAX_SKEW_US (default 100)",
                    _TSC + ": tsc_setup(), check_system_tsc_reliable(), tsc_init()"],
         readout_limit="max_skew", wd_wd_skip="max_skew/2", long_interval_ns=None,
         retries={"param": "max_cswd_read_retries", "param_default": 2, "attempts": "param + 1",
                  "legacy_param": "max_cswd_read_retries"},
         module_params=["max_cswd_read_retries", "verify_n_cpus"],
         varies=["the 'Long readout interval' skip (644649553508): absent at 6.1.55, present at 6.1.158, "
                 "backported in between at a sublevel not pinned",
                 "6.1.0-6.1.54 not read (6.1.55 already has the 300 s pause after a skipped check)"],
         exact_from={"6.1": 55}, messages=_MSG_61_LEGACY, unwatched=_UNW_61, commits=[],
         marker_param="max_cswd_read_retries"),
    _row(id="6.1", covers=((6, 1, 107, None),), read_at="6.1.158", max_skew_us_default=100,
         functions=[_CS + ": cs_watchdog_read(), clocksource_watchdog(), __clocksource_update_freq_scale()",
                    "include/linux/clocksource.h: clocksource_get_max_watchdog_retry()",
                    "kernel/time/Kconfig: CLOCKSOURCE_WATCHDOG_MAX_SKEW_US (default 100)",
                    _TSC + ": tsc_setup(), check_system_tsc_reliable(), tsc_init()"],
         readout_limit="max_skew", wd_wd_skip="max_skew/2",
         retries={"formula": "ilog2(online_cpus) // 2 + 1", "attempts": "retries + 1",
                  "legacy_param": "max_cswd_read_retries",
                  "note": "a 6.1 that still has /sys/module/clocksource/parameters/max_cswd_read_retries is the "
                          "6.1-legacy row: attempts = its value + 1"},
         varies=["6.1.107-6.1.157 not read: the retries backport (2ed08e4bc532) is in 6.1.105 or 6.1.106"],
         exact_from={"6.1": 158}, messages=_MSG_61, unwatched=_UNW_61,
         commits=["2ed08e4bc532", "f2655ac2c06a"], hidden_sublevel_default=True),
    _row(id="6.6-legacy", covers=((6, 6, 0, 45),), read_at="6.6.9", max_skew_us_default=125,
         functions=[_CS + ": cs_watchdog_read() (max_cswd_read_retries), clocksource_watchdog(), "
                    "__clocksource_update_freq_scale()",
                    "kernel/time/Kconfig: CLOCKSOURCE_WATCHDOG_MAX_SKEW_US (default 125)",
                    _TSC + ": tsc_setup(), check_system_tsc_reliable(), tsc_clocksource_watchdog_disabled(), tsc_init()"],
         readout_limit="max_skew", wd_wd_skip="max_skew/2", long_interval_ns=None,
         retries={"param": "max_cswd_read_retries", "param_default": 2, "attempts": "param + 1",
                  "legacy_param": "max_cswd_read_retries"},
         module_params=["max_cswd_read_retries", "verify_n_cpus"],
         varies=["the 'Long readout interval' skip (644649553508): absent at 6.6.9, present at 6.6.63, "
                 "backported in between at a sublevel not pinned", "6.6.0-6.6.8 not read"],
         exact_from={"6.6": 9}, messages=_MSG_66_LEGACY, unwatched=_UNW_66, commits=["c37e85c135ce"],
         marker_param="max_cswd_read_retries"),
    _row(id="6.6", covers=((6, 6, 46, None),), read_at="6.6.63", max_skew_us_default=125,
         functions=[_CS + ": cs_watchdog_read(), clocksource_watchdog(), __clocksource_update_freq_scale()",
                    "include/linux/clocksource.h: clocksource_get_max_watchdog_retry()",
                    "kernel/time/Kconfig: CLOCKSOURCE_WATCHDOG_MAX_SKEW_US (default 125)",
                    _TSC + ": tsc_setup(), check_system_tsc_reliable(), tsc_clocksource_watchdog_disabled(), tsc_init()"],
         readout_limit="max_skew", wd_wd_skip="max_skew/2",
         retries={"formula": "ilog2(online_cpus) // 2 + 1", "attempts": "retries + 1",
                  "legacy_param": "max_cswd_read_retries",
                  "note": "a 6.6 that still has /sys/module/clocksource/parameters/max_cswd_read_retries is the "
                          "6.6-legacy row: attempts = its value + 1"},
         varies=["6.6.46-6.6.62 not read: the retries backport (2ed08e4bc532) arrived in 6.6.46"],
         exact_from={"6.6": 63}, messages=_MSG_66, unwatched=_UNW_66,
         commits=["c37e85c135ce", "2ed08e4bc532", "f2655ac2c06a"], hidden_sublevel_default=True),
    _row(id="6.12-750", covers=((6, 12, 0, 67),), read_at="6.12.19", max_skew_us_default=125,
         functions=[_CS + ": cs_watchdog_read() (md = 2 * watchdog->uncertainty_margin), clocksource_watchdog(), "
                    "__clocksource_update_freq_scale()",
                    "include/linux/clocksource.h: clocksource_get_max_watchdog_retry()",
                    "kernel/time/Kconfig: CLOCKSOURCE_WATCHDOG_MAX_SKEW_US (default 125)",
                    _TSC + ": tsc_setup(), check_system_tsc_reliable(), tsc_init()"],
         readout_limit="2*wd+cs", wd_wd_skip="2*wd",
         retries={"formula": "ilog2(online_cpus) // 2 + 1", "attempts": "retries + 1"},
         varies=["6.12.0-6.12.18 not read; 'CPU %d check durations' and verify_n_cpus choices moved "
                 "by backports between 6.12.19 and 6.12.67"], exact_from={"6.12": 19}, messages=_MSG_612, unwatched=_UNW_612,
         commits=["4ac1dd3245b9", "e7ff4ebffe3b"]),
    _row(id="6.12-500", covers=((6, 12, 68, None),), read_at="6.12.19", max_skew_us_default=125,
         functions=[_CS + ": cs_watchdog_read() as 6.12.19 with c06343be0b4e's one line "
                    "(md = watchdog->uncertainty_margin), read in the 6.12.68 stable review patch"],
         readout_limit="wd+cs", wd_wd_skip="wd",
         retries={"formula": "ilog2(online_cpus) // 2 + 1", "attempts": "retries + 1"},
         varies=["not read in a 6.12.68+ tree: 6.12.19 plus the stable patch"], exact_from={},
         messages=_MSG_612, unwatched=_UNW_612, commits=["c06343be0b4e"]),
    _row(id="6.18-750", covers=((6, 18, 0, 7),), read_at="6.18.26", max_skew_us_default=125,
         functions=[_CS + ": cs_watchdog_read() as 6.18.26 with the 6.18.8 stable patch's pre-image "
                    "(md = 2 * watchdog->uncertainty_margin)"],
         readout_limit="2*wd+cs", wd_wd_skip="2*wd",
         retries={"formula": "ilog2(online_cpus) // 2 + 1", "attempts": "retries + 1"},
         varies=["6.18.0-6.18.7 not read in a tree: 6.18.26 with the md line of the patch's pre-image"],
         exact_from={}, messages=_MSG_618, unwatched=_UNW_612, commits=["4ac1dd3245b9", "c06343be0b4e"]),
    _row(id="6.18-500", covers=((6, 18, 8, None), (6, 19, 0, None)), read_at="6.18.26",
         also_read=["6.19.0"], max_skew_us_default=125,
         functions=[_CS + ": cs_watchdog_read() (md = watchdog->uncertainty_margin), clocksource_watchdog(), "
                    "__clocksource_update_freq_scale(), clocksource_verify_percpu()",
                    "include/linux/clocksource.h: clocksource_get_max_watchdog_retry()",
                    "kernel/time/Kconfig: CLOCKSOURCE_WATCHDOG_MAX_SKEW_US (default 125)",
                    _TSC + ": tsc_setup(), check_system_tsc_reliable(), tsc_init()"],
         readout_limit="wd+cs", wd_wd_skip="wd",
         retries={"formula": "ilog2(online_cpus) // 2 + 1", "attempts": "retries + 1"},
         varies=[], exact_from={"6.18": 26, "6.19": 0}, messages=_MSG_618, unwatched=_UNW_612, commits=["c06343be0b4e"]),
    _row(id="7.1", covers=((7, 1, 0, None),), read_at="7.1.3", max_skew_us_default=None,
         max_skew_us_range=None,
         functions=[_CS + ": watchdog_check_freq(), watchdog_check_cpu_skew(), watchdog_check_skew(), "
                    "wd_get_remote_timeout(), watchdog_check_result(), clocksource_watchdog(), clocksource_start_watchdog()",
                    _TSC + ": tsc_setup(), tsc_disable_clocksource_watchdog(), check_system_tsc_reliable(), "
                    "tsc_refine_calibration_work(), tsc_init()"],
         watchdog_choice="the highest-rated registered continuous clocksource without CLOCK_SOURCE_MUST_VERIFY "
                         "(clocksource_select_watchdog(); hpet 250, acpi_pm 200 or 120)",
         cpu="the boot CPU only (timer pinned, add_timer_local()); each tick also compares one other online CPU, round-robin, with it",
         readout=["watchdog", "clocksource", "watchdog"],
         readout_limit="fixed", readout_limit_ns=50 * NS_PER_US, wd_wd_skip=None, skip_pause_s=None,
         long_interval_ns=None,
         retries={"fixed_attempts": 3, "note": "WATCHDOG_FREQ_RETRIES"},
         all_slow="reported", skew_margin="ppm",
         freq_check={"shift_calibrated": 11, "shift_uncalibrated": 8,
                     "ppm_calibrated": 1e6 / 2048, "ppm_uncalibrated": 1e6 / 256,
                     "rule": "abs(wd_delta - cs_delta) < (max(wd_delta, cs_delta) >> shift) + readout_ns; "
                             "shift 11 (about 488 ppm) when both clocksources are CLOCK_SOURCE_CALIBRATED "
                             "(hpet and acpi_pm always; tsc after 'Refined TSC clocksource calibration'), else 8 (about 3906 ppm)",
                     "reset_when": "either delta exceeds its clocksource's max_idle_ns",
                     "tsc_calibrated_evidence": "tsc: Refined TSC clocksource calibration: ",
                     "tsc_uncalibrated_when": "X86_FEATURE_TSC_KNOWN_FREQ (frequency from CPUID 0x15/MSR, and every "
                                              "KVM guest with kvmclock): the refinement is skipped, so 1/256"},
         remote_check={"reads_each_side": 5, "timeout_ns_no_numa": 50 * NS_PER_US,
                       "timeout_numa": "5 us x node_distance, at most 500 us",
                       "verdict": "a later TSC read lower than an earlier one across the two CPUs"},
         module_params=[],
         varies=["the rewrite's mainline commit id is not pinned here (rebased several times)"],
         exact_from={"7.1": 3}, messages=_MSG_71, unwatched=_UNW_71, commits=["rewrite"]),
)

# Series the table says nothing about, and why.
_NOT_READ = {
    (6, 13): "6.13 not read", (6, 14): "6.14 not read", (6, 15): "6.15 not read",
    (6, 16): "6.16 not read", (6, 17): "6.17 not read",
    (7, 0): "7.0 not read (by the history, 6.19's rules until the rewrite, which came after v7.0-rc4; unverified)",
}

_UPSTREAM = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")
# Debian and Ubuntu name the ABI, not the upstream sublevel: "6.1.0-57-amd64",
# "6.1.0-0.deb11.17-amd64" (bullseye-backports), "6.8.0-45-generic".
_DEBIAN_ABI = re.compile(r"^(\d+)\.(\d+)\.0-\d+(?:[.-][A-Za-z0-9.+~-]*)?$")
_DEBIAN_V = re.compile(r"Debian (\d+)\.(\d+)\.(\d+)-")
MAX_RELEASE = 200


def parse_release(release, version=None):
    """(major, minor, sublevel or None, how) of a uname -r string; sublevel
    None when the release hides it (Debian's "6.1.0-57-amd64": 0 is the
    ABI's, not upstream's), unless uname -v names it.  None if unreadable."""
    if not isinstance(release, str) or not release or len(release) > MAX_RELEASE:
        return None
    m = _UPSTREAM.match(release)
    if not m:
        return None
    major, minor = int(m.group(1)), int(m.group(2))
    sub = int(m.group(3)) if m.group(3) is not None else 0
    how = "release"
    if _DEBIAN_ABI.match(release):
        sub, how = None, "debian-abi"
        if isinstance(version, str):
            v = _DEBIAN_V.search(version[:MAX_RELEASE * 2])
            if v and (int(v.group(1)), int(v.group(2))) == (major, minor):
                sub, how = int(v.group(3)), "debian-version"
    return major, minor, sub, how


def _by_params(rows, params):
    """Of one series' rows, the one the running kernel's module parameters
    (names in /sys/module/clocksource/parameters/) point to, or None."""
    names = set(params)
    marked = [r for r in rows if r.get("marker_param")]
    if not marked:
        return None
    legacy = [r for r in marked if r["marker_param"] in names]
    if legacy:
        return legacy[0]
    rest = [r for r in rows if not r.get("marker_param")]
    return rest[0] if len(rest) == 1 else None


def _find(release, version, params):
    """((row, parsed, how chosen), "") or (None, why)."""
    p = parse_release(release, version)
    if p is None:
        return None, "not a kernel release string: %r" % (str(release)[:80],)
    major, minor, sub, how = p
    rows = [row for row in ERAS if any((ma, mi) == (major, minor) for (ma, mi, _, _) in row["covers"])]
    if len(rows) > 1 and params is not None:
        # The running kernel's parameters are evidence; they beat the version.
        row = _by_params(rows, params)
        if row is not None:
            return (row, p, "module parameters"), ""
    if rows and sub is None:
        if len(rows) == 1 and any(lo == 0 and hi is None for (_, _, lo, hi) in rows[0]["covers"]):
            return (rows[0], p, "series"), ""
        dflt = [r for r in rows if r.get("hidden_sublevel_default")]
        if dflt:
            return (dflt[0], p, "series default (sublevel hidden; no module parameters given)"), ""
        return None, ("%d.%d with its upstream sublevel hidden (%s): the rules change within %d.%d.y; "
                      "give uname -v" % (major, minor, release[:80], major, minor))
    for row in rows:
        for (ma, mi, lo, hi) in row["covers"]:
            if (ma, mi) == (major, minor) and sub >= lo and (hi is None or sub <= hi):
                return (row, p, "release"), ""
    if rows:
        spans = sorted((lo, hi) for row in rows for (ma, mi, lo, hi) in row["covers"] if (ma, mi) == (major, minor))
        return None, ("%d.%d.%d: not in the sublevels the table pins for %d.%d.y (%s); give the module parameters"
                      % (major, minor, sub, major, minor,
                         ", ".join("%d-%s" % (lo, "" if hi is None else hi) for lo, hi in spans)))
    if (major, minor) in _NOT_READ:
        return None, "%d.%d: %s" % (major, minor, _NOT_READ[(major, minor)])
    if (major, minor) < (6, 1):
        return None, "%d.%d is older than the oldest series read (6.1)" % (major, minor)
    if (major, minor) > (7, 1):
        return None, "%d.%d is newer than the newest tree read (7.1.3)" % (major, minor)
    series = sorted({(ma, mi) for row in ERAS for (ma, mi, _, _) in row["covers"]})
    return None, "%d.%d is not a series the table has read (%s)" % (
        major, minor, ", ".join("%d.%d" % s for s in series))


def rules_for(release, version=None, params=None):
    """The watchdog rules of the era `release` runs, or None (why_unknown says why).
    params: the names in /sys/module/clocksource/parameters/ where read;
    within 6.1.y and 6.6.y they decide between the legacy row (it has
    max_cswd_read_retries) and the scaled-retries row.  chosen_by says
    how the row was picked; a Debian 6.1.0-N or 6.6 release without
    uname -v or parameters gets the series' current row, so said."""
    found, _ = _find(release, version, params)
    if found is None:
        return None
    row, (major, minor, sub, how), chosen = found
    tree = TREES[row["read_at"]]
    # at_or_after_read: the release is at or after the sublevel read in
    # this series (later stable backports can still move a figure).
    return dict(row, release=release[:MAX_RELEASE], series="%d.%d" % (major, minor), sublevel=sub, parsed_by=how,
                chosen_by=chosen, tree=tree["tree"], tag=tree["tag"], tree_commit=tree["commit"], files=dict(tree["files"]),
                at_or_after_read=sub is not None and sub >= row["exact_from"].get("%d.%d" % (major, minor), 1 << 30))


def why_unknown(release, version=None, params=None):
    """Why rules_for(release) is None; "" when it is not."""
    return _find(release, version, params)[1]


def unwatched_rules(release, version=None, params=None):
    """The conditions under which the running kernel does not watch the TSC, or None."""
    r = rules_for(release, version, params)
    return None if r is None else [dict(u) for u in r["unwatched"]]


def messages(release, version=None, params=None):
    """Every watchdog-related line that era prints: its era's list and the common ones."""
    r = rules_for(release, version, params)
    return None if r is None else [dict(m) for m in r["messages"] + _COMMON_MESSAGES]


# The wordings of the kernel's rules before the eras above (2.6.18 to
# 5.x), for reading old logs: what took the TSC away, and the lines of
# the same loss that follow it.  Watchdog figures of these eras are not
# in ERAS (health gives "unknown" for their limits); their lines are
# read.  seen: the fixture holding a logged line of that wording, or None
# where only the format string was read.
_FIX = "tests/host-scripts/fixtures/kmsg/"
WORDINGS = [
    ("2.6.18-2.6.21", _m("switched", "info", "Time: %s clocksource has been installed.\n",
                         _CS + " change_clocksource()", prefix="",
                         meaning="the switch, before \"Switching to\" (2.6.22 to 2.6.2x logs still print it)")),
    ("2.6.21-3.x", _m("switched", "info", "Switching to clocksource %s\n", _CS + " timekeeping_notify()/change_clocksource()",
                      prefix="")),
    ("2.6.18-2.6.2x", _m("unstable", "info", "Marking TSC unstable due to: %s.\n",
                         "arch/i386/kernel/tsc.c, arch/x86/kernel/tsc_32.c mark_tsc_unstable()", prefix="",
                         meaning="i386's wording, the reason then a dot; seen in " + _FIX + "paste-era-2.6.24-cpufreq.log "
                                 "and paste-era-2.6.22-c2-syslog.log")),
    ("2.6.2x-3.x", _m("unstable", "info", "Marking TSC unstable due to %s\n", "arch/x86/kernel/tsc.c mark_tsc_unstable()",
                      prefix="", meaning="x86_64's, then the merged tsc.c's, before its pr_fmt gave \"tsc: \"")),
    ("2.6.2x", _m("unstable", "info", "Marking TSC unstable due to possible TSC halt in C2\n",
                  "drivers/acpi/processor_idle.c acpi_idle_enter_simple()", prefix="",
                  meaning="the C-state rule: a CPU whose TSC stops in C2 (later \"TSC halts in idle\")")),
    ("2.6.2x-6.x", _m("unstable", "info", "Marking TSC unstable due to TSC halts in idle\n",
                      "drivers/acpi/processor_idle.c tsc_check_state()", prefix="")),
    ("2.6.18-4.x", _m("unstable", "info", "Marking TSC unstable due to cpufreq changes\n",
                      "arch/x86/kernel/tsc.c time_cpufreq_notifier()", prefix="",
                      meaning="a frequency change on a CPU without constant_tsc")),
    ("2.6.21-3.x", _m("verdict/skew", "warn", "Clocksource %s unstable (delta = %Ld ns)\n", _CS + " clocksource_watchdog()",
                      prefix="", meaning="the watchdog's verdict, one line; after tsc.c's own rule it is that "
                                         "loss's consequence (seen in paste-era-2.6.24-cpufreq.log)")),
    ("3.x-4.x", _m("verdict/skew", "warn",
                   "timekeeping watchdog: Marking clocksource '%s' as unstable because the skew is too large:\n",
                   _CS + " clocksource_watchdog()",
                   meaning="before \"on CPU%d\" (seen in " + _FIX + "paste-markdown-table.log, a 4.4 kernel)")),
    ("2.6.23-4.x", _m("sync-check", "warn", "checking TSC synchronization [CPU#%d -> CPU#%d]:\n", _SYNC + " check_tsc_sync_source()",
                      prefix="", meaning="followed by \" passed.\" on the same line when there is no warp (not a loss)")),
    ("2.6.18-", _m("info/cmdline", "notice", "Kernel command line: %s\n", "init/main.c start_kernel()", prefix="",
                   meaning="the boot's own parameters: clocksource= and tsc= as that boot had them")),
]


def all_messages():
    """(era id, message) of every row, ("common", m), and each older
    wording (WORDINGS): for kmsg's checks."""
    out = [("common", dict(m)) for m in _COMMON_MESSAGES]
    for row in ERAS:
        out.extend((row["id"], dict(m)) for m in row["messages"])
    out.extend((era, dict(m)) for era, m in WORDINGS)
    return out


# Which clocksource can watch: clocksource_select_watchdog() takes the
# highest rating among registered clocksources without MUST_VERIFY (7.1:
# continuous ones only).  Ratings as read (hpet.c, acpi_pm.c, jiffies.c at
# 6.1.158 and 7.1.3; kvmclock.c at 6.1.158).
WATCHDOG_CANDIDATES = {
    "kvm-clock": {"rating": 400, "continuous": True,
                  "note": "299 when the guest sees constant_tsc and nonstop_tsc and the TSC is stable (kvmclock_init())"},
    "hpet": {"rating": 250, "continuous": True},
    "acpi_pm": {"rating": 200, "continuous": True, "note": "120 on chipsets with the PIIX4/ICH read bug"},
    "refined-jiffies": {"rating": 2, "continuous": False, "margin_ns": 32 * NS_PER_MS},
    "jiffies": {"rating": 1, "continuous": False, "margin_ns": 32 * NS_PER_MS},
}


# x86 registers refined-jiffies in setup_arch() (arch/x86/kernel/setup.c,
# read at 6.1.158) and jiffies at core_initcall: always there, but not
# listed in available_clocksource once the tick is in one-shot mode.
ALWAYS_REGISTERED = ("refined-jiffies", "jiffies")


def watchdog_for(rules, available):
    """The clocksource that watches the TSC under `rules`, of the names in
    `available` (the kernel's available_clocksource, under names.CS_SYSFS)
    and the jiffies clocksources x86 always registers: 6.1-6.19 fall back to refined-jiffies (32 ms margin); 7.1
    takes continuous ones only, so None when there is no hpet, acpi_pm or
    kvm-clock."""
    best = None
    for name in list(available) + list(ALWAYS_REGISTERED):
        c = WATCHDOG_CANDIDATES.get(name)
        if c is None or (rules["id"] == "7.1" and not c["continuous"]):
            continue
        if best is None or c["rating"] > WATCHDOG_CANDIDATES[best]["rating"]:
            best = name
    return best


def margin_ns(name, max_skew_us):
    """A clocksource's uncertainty_margin as __clocksource_update_freq_scale()
    sets it (6.1-6.19): tsc-early and the jiffies clocksources have 32 ms of
    their own; tsc, hpet, acpi_pm, kvm-clock and every clocksource
    registered with a frequency above 2 kHz get 2 * WATCHDOG_MAX_SKEW."""
    if name == "tsc-early":
        return TSC_EARLY_MARGIN_NS
    if name in ("jiffies", "refined-jiffies"):
        return WATCHDOG_CANDIDATES[name]["margin_ns"]
    return 2 * max_skew_us * NS_PER_US


def limits(rules, max_skew_us=None, online_cpus=None, cs="tsc", watchdog="hpet",
           max_cswd_read_retries=None, calibrated=True, interval_s=WATCHDOG_INTERVAL_S):
    """The era's rules as numbers for one host.  max_skew_us: the kernel's
    CONFIG_CLOCKSOURCE_WATCHDOG_MAX_SKEW_US (None: the Kconfig default of
    that era); max_cswd_read_retries: the module parameter where the
    running kernel has one.  A figure that needs what was not given is None."""
    out = {"era": rules["id"], "all_slow": rules["all_slow"], "interval_s": rules["interval_s"],
           "readout_limit_ns": None, "wd_wd_skip_ns": None, "attempts": None, "skew_margin_ns": None,
           "freq_ppm": None, "max_skew_us": None}
    if rules["readout_limit"] == "fixed":
        out["readout_limit_ns"] = rules["readout_limit_ns"]
    else:
        ms = max_skew_us if max_skew_us is not None else rules["max_skew_us_default"]
        lo, hi = rules["max_skew_us_range"]
        if not isinstance(ms, int) or isinstance(ms, bool) or not lo <= ms <= hi:
            raise ValueError("max_skew_us %r outside %d..%d" % (ms, lo, hi))
        out["max_skew_us"] = ms
        wd, c = margin_ns(watchdog, ms), margin_ns(cs, ms)
        out["readout_limit_ns"] = {"max_skew": ms * NS_PER_US, "2*wd+cs": 2 * wd + c, "wd+cs": wd + c}[rules["readout_limit"]]
        out["wd_wd_skip_ns"] = {"max_skew/2": ms * NS_PER_US // 2, "2*wd": 2 * wd, "wd": wd}[rules["wd_wd_skip"]]
        out["skew_margin_ns"] = wd + c
    r = rules["retries"]
    if "fixed_attempts" in r:
        out["attempts"] = r["fixed_attempts"]
    elif max_cswd_read_retries is not None:
        out["attempts"] = int(max_cswd_read_retries) + 1
    elif "param_default" in r:
        out["attempts"] = r["param_default"] + 1
    elif online_cpus is not None:
        if not isinstance(online_cpus, int) or isinstance(online_cpus, bool) or online_cpus < 1:
            raise ValueError("online_cpus %r: not a CPU count" % (online_cpus,))
        out["attempts"] = (online_cpus.bit_length() - 1) // 2 + 1 + 1  # ilog2(online_cpus) // 2 + 1 retries, + 1
    if rules["freq_check"]:
        f = rules["freq_check"]
        shift = f["shift_calibrated"] if calibrated else f["shift_uncalibrated"]
        out["freq_ppm"] = 1e6 / (1 << shift)
        out["skew_margin_ns"] = int(interval_s * 1e9) >> shift
    return out
