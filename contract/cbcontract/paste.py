"""paste.py: a recorded kernel log read as people paste it, and the name of its format.

A recorded log (host-check --log FILE, --boots DIR) is another host's
statement, copied by a person: every format a real tool writes, quoted in
mail or a forum, indented, a serial console's login prompt before a line.
This module finds where the kernel's message text begins in each line and
names the format; kmsg.messages() (the one classifier) matches its rules
at that start.  The live reader never comes here (kmsg.message()).

head(line) -> Head(text, stamp, framed, fmt, depth), or None when the line
says it is not the kernel's (another facility, another program's syslog
line, a journal entry of another transport).  Formats read:
  dmesg                 [   12.345678] (util-linux and busybox), -r's <6>,
                        -x's "kern  :warn  : ", the printk caller id
                        ("[ 1.2][    T1] ", dmesg's "[ 1.2] [    T1] "),
                        --time-format ctime (-T) in any locale, reltime,
                        delta, -T with delta, iso, notime (bare)
  /dev/kmsg records     "6,123,4567,-;" (cat /dev/kmsg)
  journalctl            -o short, short-precise, short-iso(-precise),
                        short-monotonic, short-unix, short-full, json,
                        export (one field a line, entries split by blanks)
  syslog                RFC 3164 (with or without <PRI>), RFC 5424,
                        rsyslog's RFC 3339 stamps, OpenWrt's logread (a
                        weekday and year, facility.level), a year first
A line is cut to MAX_LINE by the caller; every pattern is bounded and
has no nested repetition (linear).  Quoting is stripped without a regex.
"""
import json
import re

# Mail and forum quoting: at most this many levels ("> > ", ">>").
MAX_DEPTH = 8

_LEVEL = r"(?:emerg|alert|crit|err|error|warn|warning|notice|info|debug)"
_FACILITY = r"(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local[0-7])"
# dmesg's stamp and its delta: "[   12.345678]", "[   12.345678 <    0.000004>]".
_SEC = r"\[\ {0,16}(?P<stamp>\d{1,12}\.\d{1,9})(?:\ <\ {0,16}[\d.,]{1,22}>)?\]"
# CONFIG_PRINTK_CALLER: the console's "[    T1]" after the stamp, dmesg's " [    T1]".
_CALLER = r"(?:\ ?\[\ {0,8}(?P<caller>[TC]\d{1,10})\])?"
# "host kernel: ", "kern.warn kernel: " (OpenWrt), "host kern.warn kernel: ".
_TAG = (r"(?:(?P<fac1>" + _FACILITY + r")\." + _LEVEL + r"\ |(?P<host>[^\s\[\]]{1,64})\ (?:(?P<fac2>" + _FACILITY
        + r")\." + _LEVEL + r"\ )?)?kernel:\ (?:\[\ {0,16}(?P<stamp2>\d{1,12}\.\d{1,9})\]" + _CALLER + r"\ ?)?")

# (format, pattern): the first that matches at the line's start (past
# quoting) names it.  Wall-clock stamps are no time since boot: only
# groups named stamp/stamp2/mono are.
FORMATS = [
    ("/dev/kmsg records", r"(?P<pri>\d{1,4}),\d{1,20},(?P<usec>\d{1,20}),[^;\n]{0,64};"),
    ("dmesg -x", r"(?P<fac>[a-z]{2,8})\ {0,8}:[a-z]{1,8}\ {0,8}:\ (?:" + _SEC + _CALLER + r"\ ?)?"),
    ("dmesg -r", r"<(?P<pri>\d{1,3})>" + _SEC + _CALLER + r"\ ?"),
    ("dmesg (printk caller id)", _SEC + r"\ ?\[\ {0,8}(?P<caller>[TC]\d{1,10})\]\ ?"),
    ("dmesg", _SEC + r"\ ?"),
    ("journalctl -o short-monotonic", r"\[\ {0,16}(?P<mono>\d{1,12}\.\d{1,9})\]\ " + _TAG),
    ("dmesg --time-format delta", r"\[<\ {0,16}[\d.,]{1,22}>\]\ ?"),
    ("dmesg --time-format reltime", r"\[(?:\ {0,16}\+[\d.,]{1,22}|\S{1,12}\ ?\d{1,2}\ \d\d:\d\d)\]\ ?"),
    ("dmesg -T", r"\[(?P<ctime>[^\]\n]{1,40}\d\d:\d\d:\d\d\ \d{4})(?:\ <\ {0,16}[\d.,]{1,22}>)?\]\ ?"),
    ("dmesg --time-format iso", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d,\d{6}[+-]\d\d:\d\d\ "),
    ("syslog (RFC 5424)", r"<(?P<pri>\d{1,3})>1\ (?:-|\d{4}-\d\d-\d\dT[\d:.]{8,21}(?:Z|[+-]\d\d:\d\d))\ [^\s]{1,255}\ "
                          r"kernel\ [^\s]{1,32}\ [^\s]{1,32}\ (?:-|\[[^\]\n]{0,512}\])\ (?:\ufeff)?"
                          r"(?:\[\ {0,16}(?P<stamp2>\d{1,12}\.\d{1,9})\]\ ?)?"),
    ("journalctl -o short-unix", r"\d{9,11}\.\d{1,9}\ " + _TAG),
    ("journalctl -o short-full", r"\S{1,12}\ \d{4}-\d\d-\d\d\ \d\d:\d\d:\d\d(?:\.\d{1,9})?\ \S{1,8}\ " + _TAG),
    ("ISO stamp (journalctl -o short-iso)", r"(?:<(?P<pri>\d{1,3})>)?\d{4}-\d\d-\d\d[T\ ]\d\d:\d\d:\d\d(?P<frac>[.,]\d{1,9})?"
                                            r"(?P<tz>Z|[+-]\d\d:?\d\d)?\ " + _TAG),
    ("syslog, weekday and year (OpenWrt logread)", r"\S{1,12}\ \S{1,12}\ {1,2}\d{1,2}\ \d\d:\d\d:\d\d\ \d{4}\ " + _TAG),
    ("syslog, year first", r"\d{4}\ \S{1,12}\ {1,2}\d{1,2}\ \d\d:\d\d:\d\d\ " + _TAG),
    ("syslog (RFC 3164) or journalctl -o short", r"(?:<(?P<pri>\d{1,3})>)?\S{1,12}\ {1,2}\d{1,2}\ \d\d:\d\d:\d\d"
                                                 r"(?P<frac>\.\d{1,9})?\ " + _TAG),
    ("kernel: prefix", r"kernel:\ (?:\[\ {0,16}(?P<stamp2>\d{1,12}\.\d{1,9})\]" + _CALLER + r"\ ?)?"),
]
_FORMATS = [(n, re.compile(p)) for n, p in FORMATS]
# Formats whose stamp is only the wall clock: a line of them names its
# format; the syslog ones must say "kernel:" to be the kernel's.
_SYSLOG = {n for n, p in FORMATS if "kernel" in p and not n.startswith("dmesg")}
# A serial console's login prompt before the kernel's line (a console
# shared by getty and printk): "myhost login: [   77.120034] ...".  Only
# a prompt, and only before dmesg's stamp: other text before a stamp may
# be a user's (a file name in a record), never read as a console's.
_CONSOLE = re.compile(r"[\w.-]{1,64} login:\ (?=\[\ {0,16}\d)")

# journalctl -o json: one entry a line; the fields read, found by name.
_JSON = {k: re.compile(r'"%s"\s{0,4}:\s{0,4}"((?:[^"\\]|\\.){0,%d})"' % (k, n)) for k, n in (
    ("MESSAGE", 2048), ("_TRANSPORT", 16), ("_SOURCE_MONOTONIC_TIMESTAMP", 20), ("__MONOTONIC_TIMESTAMP", 20),
    ("SYSLOG_FACILITY", 4))}
_EXPORT = re.compile(r"(?P<key>[A-Z0-9_]{1,64})(?:=(?P<value>.*))?$")

# dmesg -T in a locale: glibc 2.36's abbreviated weekdays and months
# (locale abday, abmon), to name the locale a paste was printed in.
LOCALES = {
    "C": ("Sun Mon Tue Wed Thu Fri Sat", "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec"),
    "fr_FR": ("dim. lun. mar. mer. jeu. ven. sam.", "janv. févr. mars avril mai juin juil. août sept. oct. nov. déc."),
    "de_DE": ("So Mo Di Mi Do Fr Sa", "Jan Feb Mär Apr Mai Jun Jul Aug Sep Okt Nov Dez"),
    "es_ES": ("dom lun mar mié jue vie sáb", "ene feb mar abr may jun jul ago sep oct nov dic"),
    "it_IT": ("dom lun mar mer gio ven sab", "gen feb mar apr mag giu lug ago set ott nov dic"),
    "pt_BR": ("dom seg ter qua qui sex sáb", "jan fev mar abr mai jun jul ago set out nov dez"),
    "nl_NL": ("zo ma di wo do vr za", "jan feb mrt apr mei jun jul aug sep okt nov dec"),
    "ru_RU": ("Вс Пн Вт Ср Чт Пт Сб", "янв фев мар апр мая июн июл авг сен окт ноя дек"),
    "pl_PL": ("nie pon wto śro czw pią sob", "sty lut mar kwi maj cze lip sie wrz paź lis gru"),
    "ja_JP": ("日 月 火 水 木 金 土", " ".join("%d月" % i for i in range(1, 13))),
}
_LOCALES = {k: (set(d.split()), set(m.split())) for k, (d, m) in LOCALES.items()}


class Head:
    """Where the kernel's message begins in one recorded line: text (the
    message), stamp (seconds since boot, else None), framed (a header or
    stamp stood before it), fmt (the format's name, None when bare) and
    depth (the quoting levels stripped)."""
    __slots__ = ("text", "stamp", "framed", "fmt", "depth", "console")

    def __init__(self, text, stamp, framed, fmt, depth, console=False):
        self.text, self.stamp, self.framed, self.fmt, self.depth = text, stamp, framed, fmt, depth
        self.console = console


def unquote(line):
    """(depth, rest, console) of one line: mail and forum quoting ("> ",
    ">>", "> > ", at most MAX_DEPTH levels) and indentation (blanks, tabs)
    stripped, then a console's login prompt before dmesg's stamp."""
    depth, i, n = 0, 0, len(line)
    while True:
        while i < n and line[i] in " \t":
            i += 1
        if i < n and line[i] == ">" and depth < MAX_DEPTH:
            depth += 1
            i += 1
            continue
        break
    rest = line[i:]
    m = _CONSOLE.match(rest)
    return depth, rest[m.end():] if m else rest, bool(m)


def _kernel_facility(m):
    """False when a header names a facility other than kern (a program's
    write to /dev/kmsg is never facility 0), else True."""
    g = m.groupdict()
    pri = g.get("pri")
    if pri is not None and int(pri) >> 3 != 0:
        return False
    return all(g.get(k) in (None, "kern") for k in ("fac", "fac1", "fac2"))


def _name(fmt, m):
    """The format's name, refined by what its match shows."""
    g = m.groupdict()
    if fmt.startswith("ISO stamp"):
        tz = g.get("tz") or ""
        if ":" in tz:
            return "syslog with RFC 3339 stamps (rsyslog)"
        return "journalctl -o short-iso-precise" if g.get("frac") else "journalctl -o short-iso"
    if fmt.startswith("syslog (RFC 3164)"):
        if g.get("pri") is not None:
            return "syslog (RFC 3164, with priority)"
        if g.get("frac"):
            return "journalctl -o short-precise"
        if g.get("fac2"):
            return "syslog with facility.level"
    if fmt.startswith("syslog, weekday") and not g.get("fac1"):
        return "syslog, weekday and year"
    return fmt


def _json(rest):
    """Head parts of a journalctl -o json line: (text, stamp) or None."""
    got = {}
    for k, rx in _JSON.items():
        m = rx.search(rest)
        if m:
            try:
                got[k] = json.loads('"%s"' % m.group(1))
            except ValueError:
                return None
    if "MESSAGE" not in got or got.get("_TRANSPORT", "kernel") != "kernel" or got.get("SYSLOG_FACILITY", "0") != "0":
        return None
    mono = got.get("_SOURCE_MONOTONIC_TIMESTAMP") or got.get("__MONOTONIC_TIMESTAMP")
    return got["MESSAGE"], (int(mono) / 1e6 if mono and mono.isdigit() else None)


def head(line):
    """The Head of one recorded line (see Head), or None when its header
    says it is not the kernel's (another facility, a journal entry of
    another transport, a syslog line of another program)."""
    depth, rest, console = unquote(line)
    if rest.startswith("{"):
        j = _json(rest)
        return None if j is None else Head(j[0], j[1], True, "journalctl -o json", depth)
    for fmt, rx in _FORMATS:
        m = rx.match(rest)
        if not m:
            continue
        if fmt in _SYSLOG and "kernel:" not in m.group(0) and not fmt.startswith("syslog (RFC 5424"):
            return None
        if not _kernel_facility(m):
            return None
        g = m.groupdict()
        stamp = g.get("stamp") or g.get("stamp2") or g.get("mono")
        stamp = float(stamp) if stamp else (int(g["usec"]) / 1e6 if g.get("usec") else None)
        return Head(rest[m.end():], stamp, True, _name(fmt, m), depth, console)
    return Head(rest, None, False, None, depth)


class Log:
    """What was read of one recorded log, for its format's name: the
    formats of its lines counted (a bounded table), the quoting seen, the
    lines rejoined, a journal export's entries."""

    def __init__(self):
        self.counts = {}
        self.depth = 0
        self.indented = False
        self.bare = 0
        self.rejoined = 0
        self.consoles = 0
        self.locales = None
        self.export = None  # the current export entry's fields, while in one

    def saw(self, h, line):
        """Counts one line's Head."""
        self.depth = max(self.depth, h.depth)
        self.consoles += h.console
        self.indented = self.indented or (h.depth == 0 and line[:1] in (" ", "\t"))
        if h.fmt is None:
            self.bare += 1
            return
        if h.fmt == "dmesg -T" and (self.locales is None or self.locales):
            words = h_words(line)
            if len(words) >= 2:
                c = {k for k, (d, mo) in _LOCALES.items() if words[0] in d and words[1] in mo}
                self.locales = c if self.locales is None else self.locales & c
        if h.fmt in self.counts or len(self.counts) < 16:
            self.counts[h.fmt] = self.counts.get(h.fmt, 0) + 1

    def name(self):
        """The format read, in words: one format ("dmesg -T (fr_FR)"), or
        "mixed: ..." with the counts of the most common, or bare messages;
        with the quoting or indentation stripped and the lines rejoined."""
        def one(f):
            if f == "dmesg -T":
                loc = sorted(self.locales or ())
                return "dmesg -T (%s)" % (" or ".join(loc) if loc else "a locale not known here")
            return f
        if not self.counts:
            base = "bare messages (dmesg --notime, or a quote without stamps)" if self.bare else "unknown (no lines)"
        elif len(self.counts) == 1:
            base = one(next(iter(self.counts)))
        else:
            top = sorted(self.counts.items(), key=lambda x: -x[1])
            base = "mixed/unknown: " + ", ".join("%s (%d lines)" % (one(f), c) for f, c in top[:3]) + (
                ", ..." if len(top) > 3 else "")
        notes = []
        if self.depth:
            notes.append("quoted (%d level%s of '>' stripped)" % (self.depth, "s" if self.depth > 1 else ""))
        if self.indented:
            notes.append("indented")
        if self.consoles:
            notes.append("a console's login prompt before %d line%s" % (self.consoles, "s" if self.consoles > 1 else ""))
        if self.rejoined:
            notes.append("%d wrapped line%s rejoined" % (self.rejoined, "s" if self.rejoined > 1 else ""))
        return base + ("; " + ", ".join(notes) if notes else "")

    def export_line(self, line):
        """Reads one line of journalctl -o export: returns a finished
        kernel entry's Head at its blank line, else None.  An entry with a
        binary field (a value holding control bytes, printed with its
        length) is not read further: its payload may hold a newline, which
        a line reader cannot frame."""
        if self.export is None:
            if not line.startswith("__CURSOR="):
                return False
            self.export = {}
        if not line.strip():
            e, self.export = self.export, None
            if e.get("binary") or "MESSAGE" not in e or e.get("_TRANSPORT", "kernel") != "kernel" \
                    or e.get("SYSLOG_FACILITY", "0") != "0":
                return None
            mono = e.get("_SOURCE_MONOTONIC_TIMESTAMP") or e.get("__MONOTONIC_TIMESTAMP") or ""
            return Head(e["MESSAGE"], int(mono) / 1e6 if mono.isdigit() else None, True, "journalctl -o export", 0)
        m = _EXPORT.match(line)
        if m is None or m.group("value") is None:
            self.export["binary"] = True
        elif not self.export.get("binary"):
            k = m.group("key")
            if k in ("MESSAGE", "_TRANSPORT", "_SOURCE_MONOTONIC_TIMESTAMP", "__MONOTONIC_TIMESTAMP", "SYSLOG_FACILITY"):
                if k in self.export and self.export[k] != m.group("value"):
                    self.export["binary"] = True  # a field twice, two values: not read
                self.export.setdefault(k, m.group("value"))
        return None


def h_words(line):
    """The first two words inside dmesg -T's brackets (weekday, month)."""
    _, rest, _ = unquote(line)
    end = rest.find("]")
    return rest[1:end].split()[:2] if rest.startswith("[") and end > 0 else []
