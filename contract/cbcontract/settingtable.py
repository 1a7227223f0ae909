"""settingtable.py: packaging/settings, the one table of the settings of make and the verbs, read here.

A command's parser takes its options' names, documentation and defaults
from it (cbhost.settings: clockbench bench-guest); docs/settings.md is its
markdown(); tests/settings.t holds every command's --help to it.
`python3 -m cbcontract.settingtable` prints the docs' table.
"""
import os
import sys
import textwrap
from collections import namedtuple

from .names import TOP

PATH = os.path.join(TOP, "packaging", "settings")


class Setting(namedtuple("Setting", "name targets how types defaults doc")):
    """One row: targets a tuple; types and defaults {TARGET or "": value}
    ("" the one; a target's own where a step needs another, its doc saying why)."""

    @property
    def option(self):
        """--name: the command's option, as make passes NAME=V (--name=V)."""
        return "--" + self.name.lower().replace("_", "-")

    def type(self, target=""):
        """TYPE for target's command: kind:LO-HI, kind:A|B or kind."""
        return self.types.get(target, self.types[""])

    def kind(self, target=""):
        """TYPE in words, as --help and the docs say it."""
        kind, _, span = self.type(target).partition(":")
        lo, _, hi = span.partition("-")
        words = {"duration": "seconds, or with a unit: us, ms, s, m, h", "seconds": "whole seconds, or with a unit: s, "
                 "m, h", "int": "an integer", "bool": "0 or 1", "list": "a comma list", "path": "a path",
                 "word": "one word", "words": "words", "one": "one of: " + span.replace("|", ", ")}[kind]
        return words + ("" if kind == "one" or not span else ", %s to %s" % (lo, hi) if hi else ", at least " + lo)

    def help(self, target):
        """The option's --help text for target's command: doc, kind, [default]."""
        shown = self.default(target)
        return "%s (%s)%s" % (self.doc, self.kind(target), "" if shown == "-" else " [%s]" % shown)

    def default(self, target):
        """The default for target's command ("-": none, the doc says what it does without)."""
        return self.defaults.get(target, self.defaults[""])


def load(path=PATH):
    """The table's rows, in its order; ValueError naming a malformed line."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            w = line.split(None, 5)
            if len(w) != 6:
                raise ValueError("%s:%d: expected NAME TARGETS HOW TYPE DEFAULT DOC" % (path, i))
            per = [dict([("", first)] + [o.split("=", 1) for o in others]) for first, *others in
                   (w[3].split(";"), w[4].split(";"))]
            rows.append(Setting(w[0], tuple(w[1].split(",")), w[2], per[0], per[1], w[5].strip()))
    return rows


def of(target, how="option", rows=None):
    """The settings target's command takes as how ("option", "flag", ...)."""
    return [r for r in (rows or load()) if target in r.targets and r.how == how]


def markdown(rows=None):
    """docs/settings.md's table: a row a setting."""
    out = ["| setting | targets | how | value | default | what it sets |", "|---|---|---|---|---|---|"]
    for r in rows or load():
        k, d = ("; ".join(("%s: %s" % (t, f(t)) if t else f(t)) for t in m) for f, m in
                ((r.kind, r.types), (r.default, r.defaults)))
        out.append("| `%s` | %s | %s | %s | %s | %s |" % (r.name, ", ".join(r.targets), r.how, k.replace("|", "\\|"),
                                                        d.replace("|", "\\|"), r.doc.replace("|", "\\|")))
    return "\n".join(out) + "\n"


def help_text(target, rows=None, skip=(), lead=6, col=24):
    """target's settings (but those named in skip) as --help lists them:
    each option lead columns in, its text from column col, 80 columns wide."""
    out = []
    for r in of(target, rows=rows):
        if r.name in skip:
            continue
        head, body = "%s%s %s" % (" " * lead, r.option, r.name), textwrap.wrap(r.help(target), 80 - col, break_on_hyphens=False)
        if len(head) > col - 2:
            out.append(head)
            head = ""
        out += [(head if i == 0 else "").ljust(col) + x for i, x in enumerate(body)]
    return "\n".join(out)


if __name__ == "__main__":
    # No argument: docs/settings.md's table; --help-of TARGET: its settings as --help lists them.
    print(help_text(sys.argv[2]) if sys.argv[1:2] == ["--help-of"] else markdown(), end="\n" if sys.argv[1:] else "")
