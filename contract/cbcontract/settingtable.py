"""settingtable.py: packaging/settings, the one table of the settings of make and the verbs, read here.

A command's parser takes its options' names, documentation and defaults
from it (cbhost.settings: clockbench guest); docs/settings.md is its
markdown(); tests/settings.t holds every command's --help to it.
`python3 -m cbcontract.settingtable` prints the docs' table.
"""
import os
import sys
import textwrap
from collections import namedtuple

from .names import TOP

PATH = os.path.join(TOP, "packaging", "settings")


class Setting(namedtuple("Setting", "name targets how type defaults doc")):
    """One row: targets a tuple, defaults {TARGET or "": value} ("" the one
    default; a target's own where a step needs another, its doc saying why)."""

    @property
    def option(self):
        """--name: the command's option, as make passes NAME=V (--name=V)."""
        return "--" + self.name.lower().replace("_", "-")

    def kind(self):
        """TYPE in words, as --help and the docs say it."""
        kind, _, span = self.type.partition(":")
        lo, _, hi = span.partition("-")
        words = {"duration": "seconds, or with a unit: us, ms, s, m, h", "seconds": "whole seconds, or with a unit: s, "
                 "m, h", "int": "an integer", "bool": "0 or 1", "list": "a comma list", "path": "a path",
                 "word": "one word", "words": "words", "one": "one of: " + span.replace("|", ", ")}[kind]
        return words + ("" if kind == "one" or not span else ", %s to %s" % (lo, hi) if hi else ", at least " + lo)

    def help(self, target):
        """The option's --help text for target's command: doc, kind, [default]."""
        shown = self.default(target)
        return "%s (%s)%s" % (self.doc, self.kind(), "" if shown == "-" else " [%s]" % shown)

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
            first, *others = w[4].split(";")
            rows.append(Setting(w[0], tuple(w[1].split(",")), w[2], w[3],
                                dict([("", first)] + [o.split("=", 1) for o in others]), w[5].strip()))
    return rows


def of(target, how="option", rows=None):
    """The settings target's command takes as how ("option", "flag", ...)."""
    return [r for r in (rows or load()) if target in r.targets and r.how == how]


def markdown(rows=None):
    """docs/settings.md's table: a row a setting."""
    out = ["| setting | targets | how | value | default | what it sets |", "|---|---|---|---|---|---|"]
    for r in rows or load():
        d = "; ".join(("%s %s" % (t, v) if t else v) for t, v in r.defaults.items())
        out.append("| `%s` | %s | %s | %s | %s | %s |" % (r.name, ", ".join(r.targets), r.how, r.kind().replace("|", "\\|"),
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
