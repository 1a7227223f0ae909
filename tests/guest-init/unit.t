#!/usr/bin/env bash
# tier: fast
# unit.t: /init's kernel-log verdicts on the host (build/test-guest-unit),
# and its frame writer read back by the host's frame reader: a result whose
# kernel lines hold invalid UTF-8 still reads as JSON, with U+FFFD in place.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/guest-init/guest-lib.sh
unit=build/test-guest-unit
[ -x "$unit" ] || skip_all "$unit not built (make check builds it)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tap_pass "$unit"

"$unit" frames >"$tmp/channel" && "$unit" frames more >"$tmp/more"
ok $? "$unit frames: exit 0"
# One "name verdict" line per check, over the reader's view of the channel.
python3 - "$tmp/channel" "$tmp/more" >"$tmp/verdicts" 2>&1 <<'EOF'
import json, sys
sys.path[:0] = ["contract", "host-scripts"]
from cbhost import frames
U = "\ufffd"
p, more = (frames.parse(open(f, "rb").read()) for f in sys.argv[1:])
checks = {
    "hello": lambda: p["hello"] == 700 and [f["seq"] for f in p["frames"]] == [1] and not p["problems"],
    "read": lambda: bool(frames.result(p)),
    "keys": lambda: list(d["guest"]) == ["clocksource_before", "clocksource_settle", "log", "channel", "engine_argv", "uptime_ms_init",
                                         "uptime_ms_engine_start", "uptime_ms_engine_end", "engine_status"]
                    and d["bench"] == {"schema": "clockbench/1"},
    "settle": lambda: d["guest"]["clocksource_settle"] == {"end": "settled", "settled": True, "ms": 700, "from": "tsc-early",
                                                          "to": "tsc", "tsc_early_listed": False, "refined_line": True,
                                                          "limit_ms": 10000, "quiet_ms": 2000},
    "ffc328": lambda: lines[0] == "tsc: Detected 2000.000 MHz " + U + U + "( processor",
    "lone": lambda: lines[1].endswith("kvm-clock " + U) and d["guest"]["log"]["switched_to"] == "kvm-clock",
    "cut": lambda: lines[2] == "kvm-clock: " + "x" * 187 + U,
    # A strict decoder (not json's surrogatepass) over the whole payload.
    "strict": lambda: all(U in x for x in json.loads(more["frames"][0]["payload"].decode("utf-8"))
                          ["guest"]["log"]["lines"][3:]),
}
try:
    d = frames.result(p)
    lines = d["guest"]["log"]["lines"]
except Exception as e:
    print("# the reader: %s" % e)
for name, check in checks.items():
    try:
        print(name, bool(check()))
    except Exception as e:
        print(name, "%s: %s" % (type(e).__name__, e))
EOF
verdict() { # verdict NAME DESCRIPTION
	local v
	v=$(sed -n "s/^$1 //p" "$tmp/verdicts")
	ok "$([ "$v" = True ]; echo $?)" "$2"
	[ "$v" = True ] || diag "$v"
}
verdict hello "hello, then one result frame, no problem"
verdict read "the frame reader accepts the result"
verdict keys "guest object holds only /init's facts; bench copied as it came"
verdict settle "the clocksource wait: how it ended, after how long, from and to"
verdict ffc328 "bytes ff c3 28 in a kernel line: U+FFFD U+FFFD ("
verdict lone "a lone lead byte at a line's end: U+FFFD"
verdict cut "a character cut at the line limit: U+FFFD"
verdict strict "surrogates, overlong forms, past U+10FFFF, f5-ff lead bytes: U+FFFD"
grep '^#' "$tmp/verdicts"
done_testing
