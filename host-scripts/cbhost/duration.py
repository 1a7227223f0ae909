"""duration.py: a time span as cyclictest and fio take it (10s, 500ms, 2m): the host side's one parser.

The rule is the engine's (bench/duration.c, cb_parse_duration): a decimal
number (digits with an optional fraction, or a fraction alone: 1, 1.5, .5;
no sign, no exponent, no spaces), then optionally one unit; a bare number is
seconds.  tests/host-scripts/duration.t holds the two to the same answers.
"""
import re

from cbcontract.util import cut as _cut  # a value quoted in an error: the one helper

UNITS = {"": (1, 1), "s": (1, 1), "ms": (1, 1000), "us": (1, 1000000), "m": (60, 1), "h": (3600, 1)}
UNITS_TEXT = "us, ms, s, m, h"
_RE = re.compile(r"([0-9]*(?:[0-9]|\.[0-9]+))(us|ms|s|m|h)?")
_NUM_MAX = 39  # characters of number, as the engine reads them


class DurationError(ValueError):
    """A bad duration: its message is one line naming the value."""


def parse(value):
    """The seconds of value (a float), or None if it is not a duration."""
    m = _RE.fullmatch(value) if isinstance(value, str) and value.isascii() else None
    if not m or len(m.group(1)) > _NUM_MAX:
        return None
    mul, div = UNITS[m.group(2) or ""]
    # division, not a multiplication by 1e-3: 500ms is 0.5 exactly, as in C
    return float(m.group(1)) * mul / div


def seconds(label, value, lo, hi, whole=False, above=False, why_whole=None):
    """The seconds of value, checked after the unit's conversion: from lo
    (more than lo with above) to hi; whole: a whole number of seconds,
    returned as an int (why_whole says why, in the error).  label names the
    setting in the error (e.g. "--timeout" gives "--timeout=5x: ...").  Raises
    DurationError, one line."""
    head = "%s=%s" % (label, _cut(str(value)))
    s = parse(value)
    if s is None:
        raise DurationError("%s: not a duration: seconds, or a number with a unit (%s), e.g. 500ms, 2m"
                            % (head, UNITS_TEXT))
    if s < lo or (above and s <= lo) or s > hi:
        raise DurationError("%s: %g s: expected %s %g s %s %g s" % (
            head, s, "more than" if above else "from", lo, "and at most" if above else "to", hi))
    if whole:
        if s != int(s):
            raise DurationError("%s: %g s: expected whole seconds%s" % (head, s, " (%s)" % why_whole if why_whole
                                                                         else ""))
        return int(s)
    return s
