"""paste.py: a recorded kernel log as people paste it: its transport undone, each record found by its structure.

A recorded log (health --log FILE, --boots DIR) is another host's
statement, copied by a person: every format a real tool writes, in mail
(quoted, quoted-printable), a web page (HTML), Markdown (a table, inline
code), a comment block, behind an agent's level prefix, cut by a pager,
newest first.  This module undoes what it can recognise with certainty
(decoded(): only where the paste as a whole shows an encoding), then finds
in each line where the kernel's message text begins (head()): past a
bounded grammar of prefixes (unquote()), a stamp or header of a known kind
(FORMATS), then the text; kmsg.messages() (the one classifier) matches its
rules at that start, and kmsg._recorded() decides which lines are records
and which continue one.  The live reader never comes here
(kmsg.message()).

head(line) -> Head(text, stamp, framed, fmt, depth, ...), or None when the
line says it is not the kernel's (another facility, another program's
syslog line, a journal entry of another transport).  Headers read:
  dmesg                 [   12.345678] (util-linux and busybox), -r's <6>,
                        -x's "kern  :warn  : ", the printk caller id
                        ("[ 1.2][    T1] ", dmesg's "[ 1.2] [    T1] "),
                        --time-format ctime (-T) in any locale, reltime,
                        delta, -T with delta, iso, notime (bare)
  /dev/kmsg records     "6,123,4567,-;" (cat /dev/kmsg)
  journalctl            -o short, short-precise, short-iso(-precise),
                        short-monotonic (with or without --no-hostname),
                        short-unix, short-full, json (parsed whole),
                        export (one field a line, entries split by blanks)
  syslog                RFC 3164 (with or without <PRI>), RFC 5424,
                        rsyslog's RFC 3339 stamps, OpenWrt's logread (a
                        weekday and year, facility.level), a year first,
                        kern.log's "kernel: [stamp]"
A line is cut to MAX_LINE by the caller (a JSON line to JSON_MAX); every
pattern is bounded and has no nested repetition (linear); all recorded
logs of a process share one Budget (BUDGET).
"""
import collections
import html
import itertools
import json
import re
import time

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
    ("journalctl -o short-monotonic", r"\[\ {0,16}(?P<mono>\d{1,12}\.\d{1,9})\]\ " + _TAG),
    ("/dev/kmsg records", r"(?P<pri>\d{1,4}),\d{1,20},(?P<usec>\d{1,20}),[^;\n]{0,64};"),
    ("dmesg -x", r"(?P<fac>[a-z]{2,8})\ {0,8}:[a-z]{1,8}\ {0,8}:\ (?:" + _SEC + _CALLER + r"\ ?)?"),
    ("dmesg -r", r"<(?P<pri>\d{1,3})>" + _SEC + _CALLER + r"\ ?"),
    ("dmesg (printk caller id)", _SEC + r"\ ?\[\ {0,8}(?P<caller>[TC]\d{1,10})\]\ ?"),
    ("dmesg", _SEC + r"\ ?"),
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
# A serial console's login prompt before a stamp ("myhost login: [
# 77.120034] ..."): a console shared by getty and printk, or a user's file
# name printed raw on a console after a newline.  Either way the line is
# read as the continuation of the record before it, never as a record.
_CONSOLE = re.compile(r"[\w.-]{1,64} login:\ (?=\S)")
# What may stand before a record's stamp in a line (each bounded; at most
# MAX_DEPTH*2 of them): blanks, mail quoting, a Markdown table's pipe or
# inline code's backquote, a comment marker, a list bullet, an agent's
# own facility/level prefix ("kern: warning: ", "kern.warn: ").  Nothing
# else: free text before a stamp is a record's own (a file name), never a
# prefix.
_AGENT = re.compile(r"(?:kern(?:\." + _LEVEL + r")?|" + _LEVEL + r"):\ ")
_COMMENT = ("# ", "// ", "; ", "-- ", "* ", "- ", "+ ")
# A shell prompt and the command that printed the log: noted, never read.
_COMMAND = re.compile(r"(?:[\w.@-]{0,64}(?::[~\w./-]{0,128})?\ ?)?[$#%]\ {1,4}(?:sudo\ {1,4})?"
                      r"(?P<cmd>(?:dmesg|journalctl|cat|zcat|grep|egrep|less|tail|head|logread)(?:\ [^\n]{0,200})?)$")
# Wall-clock time in a header, for the order of a paste without boot stamps.
_WALL = re.compile(r"(\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?")
# Where a pager cut a line: less -S's ">" in the last column, journalctl's "…".
_CUT_MARKS = (">", "\u2026")

# journalctl -o json: one entry a line, parsed whole (json.loads); the
# kernel's only where _TRANSPORT is "kernel" (see journal()).
JSON_MAX = 64 << 10
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


# Where the kernel's message begins in one recorded line: text (the
# message), stamp (seconds since boot, else None), framed (a header or
# stamp stood before it), fmt (the format's name, None when bare), depth
# (the quoting levels stripped), console (a console's login prompt stood
# before it), indent (the blank columns before it, past quoting), wall
# (seconds of the day of a wall-clock header, else None), cut (a pager cut
# the line: its end is missing) and marks (the prefixes stripped:
# "table", "comment", "agent", "code").
Head = collections.namedtuple("Head", "text stamp framed fmt depth console indent wall cut marks",
                              defaults=(False, 0, None, False, ()))


def unquote(line):
    """(depth, rest, console, indent, marks) of one line: what may stand
    before a record stripped, left to right (see _AGENT, _COMMENT): mail
    quoting ("> ", ">>", at most MAX_DEPTH levels), blanks (counted as
    indent: a tab to the next multiple of 8; the one blank after a quote
    mark, pipe or marker is not), a Markdown table row's pipes, inline
    code's backquotes, comment markers and bullets, an agent's level
    prefix, then a console's login prompt."""
    depth, i, n, indent, marks = 0, 0, len(line), 0, []
    end = n
    for _ in range(MAX_DEPTH * 2):
        col = 0
        while i < n and line[i] in " \t":
            col = (col // 8 + 1) * 8 if line[i] == "\t" else col + 1
            i += 1
        indent += col
        if i >= n:
            break
        c = line[i]
        if c == ">" and depth < MAX_DEPTH:
            depth += 1
        elif c == "|" and i == line.find("|") and "table" not in marks:
            marks.append("table")
            e = line.rstrip(" \t")
            if e.endswith("|") and len(e) - 1 > i:
                end = len(e) - 1
        elif c == "`" and "code" not in marks:
            marks.append("code")
            e = line[:end].rstrip(" \t")
            if e.endswith("`") and len(e) - 1 > i:
                end = len(e) - 1
            while i + 1 < end and line[i + 1] == "`":
                i += 1
        elif line.startswith(_COMMENT, i) and (c not in "-*+" or not marks or marks[-1] != "bullet"):
            marks.append("comment" if c in "#/;" or line.startswith("--", i) else "bullet")
            i += len(next(m for m in _COMMENT if line.startswith(m, i))) - 2  # to the marker's last character
        else:
            m = _AGENT.match(line, i)
            if m is None:
                break
            marks.append("agent")
            i = m.end() - 1
        i += 1
        if i < n and line[i] == " ":  # the one blank after a marker belongs to it
            i += 1
    rest = line[i:end]
    if "table" in marks:
        rest = rest.rstrip(" \t").replace("\\|", "|")
    m = _CONSOLE.match(rest)
    return depth, rest[m.end():] if m else rest, bool(m), indent, tuple(marks)


def command(line):
    """The command a shell prompt line ran ("journalctl -r -k"), else None."""
    _, rest, _, _, _ = unquote(line)
    m = _COMMAND.match(rest[:400]) or _COMMAND.match(line.lstrip(" \t>")[:400])  # root's "# " is no comment
    return m.group("cmd") if m else None


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
        if ":" in (g.get("tz") or ""):
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


def escape(text):
    """Control characters (a decoded =0A, a raw CR) as \\xNN: a line stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else "\\x%02x" % ord(c) if ord(c) < 256 else "\\u%04x" % ord(c)
                   for c in text)


def journal_entry(line, most):
    """(MESSAGE, stamp) of a journalctl -o json line, parsed whole, or
    None: longer than JSON_MAX, not one JSON object, no _TRANSPORT
    "kernel" (a missing one is not the kernel's), another facility, no
    MESSAGE.  MESSAGE is a str, or bytes where the journal gave its list
    form (at most `most` of them); stamp the entry's monotonic time in
    seconds, else None.  The one reader of the journal's JSON: the paste
    reader (journal()) and the live one (klog.journal_record())."""
    if len(line) > JSON_MAX:
        return None
    try:
        e = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(e, dict) or e.get("_TRANSPORT") != "kernel" or e.get("SYSLOG_FACILITY", "0") != "0":
        return None
    m = e.get("MESSAGE")
    if isinstance(m, list) and len(m) <= most and all(isinstance(c, int) and 0 <= c < 256 for c in m):
        m = bytes(m)
    if not isinstance(m, (str, bytes)):
        return None
    mono = next((e[k] for k in ("_SOURCE_MONOTONIC_TIMESTAMP", "__MONOTONIC_TIMESTAMP")
                 if isinstance(e.get(k), str) and e[k].isascii() and e[k].isdigit() and len(e[k]) <= 20), None)
    return m, (int(mono) / 1e6 if mono else None)


def journal(rest):
    """(text, stamp) of a journalctl -o json line (journal_entry()), or
    None.  A MESSAGE of bytes (the journal's list form) is decoded, its
    control characters escaped."""
    j = journal_entry(rest, JSON_MAX)
    if j is None:
        return None
    m = j[0].decode("utf-8", "replace") if isinstance(j[0], bytes) else j[0]
    return escape(m[:MAX_TEXT]), j[1]


MAX_TEXT = 8 << 10  # a record's text: the kernel formats at most 1 KiB (LOG_LINE_MAX), 8 KiB with its dictionary


def head(line, cut=False):
    """The Head of one recorded line (see Head), or None when its header
    says it is not the kernel's (another facility, a journal entry of
    another transport, a syslog line of another program).  cut: the
    caller knows a pager cut this line (its marker already removed)."""
    depth, rest, console, indent, marks = unquote(line)
    if "table" in marks and "|" in rest:
        # A Markdown table row: the record is one cell's (the first that has a header).
        for cell in rest.split("|")[:16]:
            h = head(cell.strip(), cut)
            if h is None:
                return None
            if h.framed:
                return h._replace(depth=depth, indent=indent, marks=marks, console=h.console or console)
        return Head(rest, None, False, None, depth, console, indent, None, cut, marks)
    if rest.startswith("{"):
        j = journal(rest)
        return None if j is None else Head(j[0], j[1], True, "journalctl -o json", depth, indent=indent, marks=marks)
    # Every header holds a digit or a colon early: without one, no header.
    if rest.startswith("<") or ":" in rest[:80] or any(c.isdigit() for c in rest[:80]):
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
            w = _WALL.search(m.group(0)) if stamp is None else None
            wall = int(w.group(1)) * 3600 + int(w.group(2)) * 60 + int(w.group(3)) + float("0." + (w.group(4) or "0")) \
                if w else None
            return Head(rest[m.end():], stamp, True, _name(fmt, m), depth, console, indent, wall, cut, marks)
    return Head(rest, None, False, None, depth, console, indent, None, cut, marks)


# Transport encodings undone before any line is read, each only where the
# paste as a whole shows it (SNIFF_LINES lines looked at first): a
# decoding applied to a paste that is not so encoded would let a user's
# text (a file name holding "<br>" or "=0A") split or join lines.
SNIFF_LINES = 256
_QP_HEADER = re.compile(r"content-transfer-encoding:\s{0,4}quoted-printable", re.I)
_QP_ESC = re.compile(r"=([0-9A-F]{2})")
_QP_BAD = re.compile(r"=(?![0-9A-F]{2}|$)")
_HTML_TAGS = (r"(?:br|p|div|pre|code|span|tt|b|i|em|strong|blockquote|li|ul|ol|td|th|tr|table|font|a|html|body|head"
              r"|samp|kbd)")
_HTML_TAG = re.compile(r"</?" + _HTML_TAGS + r"\b[^<>\n]{0,256}>|<!DOCTYPE[^<>\n]{0,64}>", re.I)
_HTML_BREAK = re.compile(r"<br\s{0,4}/?>|</?(?:p|div|pre|li|tr|blockquote)\b[^<>\n]{0,256}>", re.I)
_HTML_ENTITY = re.compile(r"&(?:nbsp|gt|lt|amp|quot|apos|#\d{1,7}|#x[0-9a-fA-F]{1,6});")
_FENCE = ("```", "~~~")


def sniff(lines):
    """The transport encodings a paste's first lines show, with certainty:
    "quoted-printable" (its header, or soft line breaks and =XX escapes
    with no bare "=" anywhere: QP encodes every "="), "html" (markup on
    at least half of the non-blank lines)."""
    out = set()
    soft = esc = bad = 0
    marked = nonblank = 0
    for x in lines:
        if _QP_HEADER.search(x[:200]):
            out.add("quoted-printable")
        if x.strip():
            nonblank += 1
            marked += bool(_HTML_TAG.search(x) or _HTML_ENTITY.search(x))
        soft += x.endswith("=") and not x.endswith("==")
        esc += bool(_QP_ESC.search(x))
        bad += bool(_QP_BAD.search(x))
    if soft and esc and not bad:
        out.add("quoted-printable")
    if marked and 2 * marked >= nonblank:
        out.add("html")
    return out


_QP_ESC_B = re.compile(rb"=([0-9A-F]{2})")


def _qp(text):
    """=XX escapes of a quoted-printable line decoded (UTF-8), control characters escaped."""
    if "=" not in text:
        return text
    b = _QP_ESC_B.sub(lambda m: bytes((int(m.group(1), 16),)), text.encode("utf-8", "surrogateescape"))
    return escape(b.decode("utf-8", "replace"))


def _html(text):
    """One HTML line as the lines it shows: broken at <br> and block tags,
    other tags removed, entities decoded (&nbsp; a blank)."""
    pieces = (html.unescape(_HTML_TAG.sub("", p)).replace("\xa0", " ") for p in _HTML_BREAK.split(text))
    return [escape(p) for p in pieces]


class Budget:
    """What health's reader may spend on recorded logs, all of them
    together (--log and every --boots file): bytes read, and seconds spent
    reading (counted only while a log is read).  spent says why reading
    stopped, once it did."""

    def __init__(self, nbytes=1 << 30, seconds=60.0):
        self.nbytes, self.seconds = nbytes, seconds
        self.left, self.used, self.spent = nbytes, 0.0, None

    def describe(self):
        return "%d MiB and %g s for all recorded logs together" % (self.nbytes >> 20, self.seconds)

    def take(self, n, elapsed=None):
        """False once the budget is spent (and spent says why): n more
        bytes; elapsed, when given, the seconds this log has taken so far."""
        if self.spent:
            return False
        self.left -= n
        if self.left < 0:
            self.spent = "health's reader stopped at its budget (%s): %d MiB read" % (
                self.describe(), self.nbytes >> 20)
        elif elapsed is not None and self.used + elapsed > self.seconds:
            self.spent = "health's reader stopped at its budget (%s): %g s spent" % (self.describe(), self.seconds)
        return not self.spent


# One budget a process: health's reading of every recorded log.
BUDGET = Budget()


def decoded(lines, log, budget=None):
    """The lines of a recorded log as they were meant: the transport
    encodings sniff() finds undone (quoted-printable soft breaks joined
    and =XX decoded; HTML broken at <br> and block tags, tags removed,
    entities decoded), Markdown code fences dropped; a pager's cut marker
    removed from a line it cut (cut: (line, True)).  Yields (line, cut).
    Stops, noting it in log.stopped, when budget is spent."""
    budget = budget if budget is not None else BUDGET
    it = iter(lines)
    first = []
    for x in it:
        if isinstance(x, str):
            first.append(x)
        if len(first) >= SNIFF_LINES:
            break
    log.transport = sniff(first)
    width = _pager_width(first)
    if width:
        log.transport.add("pager")
    t0 = time.monotonic()
    try:
        yield from _decode(itertools.chain(first, it), log, budget, width, t0)
    finally:
        budget.used += time.monotonic() - t0


def _decode(lines, log, budget, width, t0):
    """decoded()'s loop: each line taken from budget (its bytes; the time
    since t0 every 1024 lines), its transport undone as log.transport
    says, a pager's marker removed at width; yields (line, cut)."""
    held, count = None, 0
    for line in lines:
        if not isinstance(line, str):
            continue
        count += 1
        if not budget.take(len(line) + 1, time.monotonic() - t0 if count % 1024 == 0 else None):
            log.stopped = budget.spent
            return
        if "quoted-printable" in log.transport:
            if held is not None:
                line = (held + line)[:MAX_LINE_CHARS]
                held = None
            if line.endswith("=") and not line.endswith("=="):
                held = line[:-1]
                continue
            line = _qp(line)
        pieces = _html(line) if "html" in log.transport else (line,)
        for x in pieces:
            if x.lstrip(" \t>").startswith(_FENCE):
                continue
            cut = bool(width and len(x) == width and x.endswith(_CUT_MARKS)) or x.endswith("\u2026")
            if cut:
                x = x[:-1]
                log.cut_lines += 1
            yield x, cut
    if held is not None:
        yield _qp(held), True


MAX_LINE_CHARS = 64 << 10


def _pager_width(lines):
    """The terminal width a pager cut lines at (less -S's ">" in the last
    column): the length at which the most lines end so, when at least 2
    do and fewer lines are longer than that; else None."""
    ends = collections.Counter(len(x) for x in lines if len(x) >= 40 and x.endswith(">"))
    if not ends:
        return None
    w, c = max(ends.items(), key=lambda kv: (kv[1], kv[0]))
    longer = sum(1 for x in lines if len(x) > w)
    return w if c >= 2 and longer < c else None


# Formats whose lines any local user can write: the kernel's name in
# them is a tag a program chooses (logger -t kernel).
FORGEABLE = _SYSLOG
FORGE_NOTE = ("read from syslog or journal text lines (%s): any local user can write such a 'kernel:' line "
              "(logger -t kernel); only /dev/kmsg, dmesg or the journal's entries of _TRANSPORT=kernel "
              "(journalctl -o json) are the kernel's own")


class Log:
    """What was read of one recorded log, for its format's name: the
    formats of its lines counted (a bounded table), the quoting seen, the
    lines rejoined, continuations, a journal export's entries, the
    transport encodings undone, the order of its stamps and whether
    reading stopped at the budget."""

    def __init__(self):
        self.counts = {}
        self.depth = 0
        self.indented = False
        self.bare = 0
        self.rejoined = 0
        self.consoles = 0
        self.continuations = 0
        self.locales = None
        self.export = None  # the current export entry's fields, while in one
        self.transport = set()
        self.marks = set()
        self.cut_lines = 0
        self.stopped = None
        self.commands = []
        self.order = [0, 0]  # consecutive stamps: rising, falling
        self._last = None

    def saw(self, h, line):
        """Counts one line's Head."""
        self.depth = max(self.depth, h.depth)
        if h.framed:
            self.marks.update(h.marks)
        key = h.stamp if h.stamp is not None else h.wall
        if key is not None:
            if self._last is not None and key != self._last:
                self.order[key < self._last] += 1
            self._last = key
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

    def reversed(self):
        """Whether the paste runs newest first (journalctl -r): its stamps
        fall more often than they rise, or the command that printed it said -r."""
        c = self.commands[0].split() if self.commands else []
        said = c[:1] == ["journalctl"] and any(t == "--reverse" or (t[:1] == "-" and t[1:2] != "-" and "r" in t)
                                                for t in c[1:])
        return said or self.order[1] > self.order[0]

    def forgeable(self):
        """The formats read whose 'kernel:' any user can write (FORGEABLE)."""
        return sorted(f for f in self.counts if f in FORGEABLE or f.startswith(("syslog", "journalctl -o short")))

    def warnings(self):
        """What the reader says of this paste's trust and completeness."""
        out = []
        f = self.forgeable()
        if f:
            out.append(FORGE_NOTE % ", ".join(f[:3]))
        if self.continuations:
            out.append("%d line%s indented more than the record before, or after a console's login prompt, read as "
                       "that record's continuation, never as records" % (
                           self.continuations, "s" if self.continuations > 1 else ""))
        if self.cut_lines:
            out.append("%d line%s cut by a pager (a '>' or '\u2026' at the end): only their beginning was read; "
                       "paste the raw log (dmesg > file, or journalctl -k -o short-monotonic --no-pager)" % (
                           self.cut_lines, "s" if self.cut_lines > 1 else ""))
        if self.stopped:
            out.append(self.stopped)
        return out

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
        notes = ["%s decoded" % t for t in sorted(self.transport - {"pager"})]
        if self.depth:
            notes.append("quoted (%d level%s of '>' stripped)" % (self.depth, "s" if self.depth > 1 else ""))
        if self.indented:
            notes.append("indented")
        for mk, what in (("table", "a Markdown table's cells"), ("comment", "comment markers stripped"),
                         ("agent", "an agent's level prefix stripped"), ("code", "inline code")):
            if mk in self.marks:
                notes.append(what)
        if self.reversed():
            notes.append("newest first (read from its end)")
        if self.consoles:
            notes.append("a console's login prompt before %d line%s (read as continuations)" % (
                self.consoles, "s" if self.consoles > 1 else ""))
        if self.rejoined:
            notes.append("%d wrapped line%s rejoined" % (self.rejoined, "s" if self.rejoined > 1 else ""))
        if self.cut_lines:
            notes.append("%d line%s cut by a pager" % (self.cut_lines, "s" if self.cut_lines > 1 else ""))
        if self.commands:
            notes.append("printed by: %s" % self.commands[0][:80])
        return base + ("; " + ", ".join(notes) if notes else "")

    def export_line(self, line):
        """Reads one line of journalctl -o export: returns a finished
        kernel entry's Head at its blank line, else None; False when the
        line is not in an export entry.  An entry with a binary field (a
        value holding control bytes, printed with its length) is not read
        further: its payload may hold a newline, which a line reader
        cannot frame.  _TRANSPORT=kernel must be present."""
        if self.export is None:
            if not line.startswith("__CURSOR="):
                return False
            self.export = {}
        if not line.strip():
            e, self.export = self.export, None
            if e.get("binary") or "MESSAGE" not in e or e.get("_TRANSPORT") != "kernel" \
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
    _, rest, _, _, _ = unquote(line)
    end = rest.find("]")
    return rest[1:end].split()[:2] if rest.startswith("[") and end > 0 else []
