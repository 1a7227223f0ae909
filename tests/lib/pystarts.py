#!/usr/bin/python3
"""pystarts.py: the Python interpreters a traced command started, read from `strace -f -e trace=execve -o FILE`.

A start is a successful execve of a Python binary (python3, python3.11...)
or of a script whose #! line names one directly; a script run through
`#!/usr/bin/env python3` is counted once, at env's execve of the binary.
Each is named by its program and, for the commands that take one, its
subcommand (runfolder plan, clockbench-report summary...).  Imported by
the benchmark tests/host-scripts/bench-processes; as a command:
pystarts.py TRACE [CWD] prints the total, then a count per name.
"""
import collections
import os
import re
import sys

EXECVE = re.compile(r'^(\d+)\s+execve\("((?:[^"\\]|\\.)*)", \[(.*)')
RESUMED = re.compile(r"^(\d+)\s+<\.\.\. execve resumed>.*\)\s+=\s+(-?\d+)")
DONE = re.compile(r"\)\s+=\s+(-?\d+)(?: [A-Z]+ \(.*\))?$")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
PYTHON = re.compile(r"python3(\.[0-9]+)?")
SUBCOMMANDS = ("runfolder", "clockbench-report", "kvm-trace")


def _kind(path, cwd, seen):
    """'binary', 'script' (a #! line naming Python itself) or None."""
    p = path if os.path.isabs(path) else os.path.join(cwd, path)
    if p not in seen:
        real = os.path.realpath(p)
        kind = None
        if PYTHON.fullmatch(os.path.basename(real)):
            kind = "binary"
        else:
            try:
                with open(real, "rb") as f:
                    first = f.readline(200)
            except OSError:
                first = b""
            words = first[2:].split()
            interpreter = os.path.basename(words[0]).decode("ascii", "replace") if words else ""
            if first.startswith(b"#!") and PYTHON.fullmatch(interpreter):
                kind = "script"
        seen[p] = kind
    return seen[p]


def _name(kind, argv):
    """A start's name: its script and subcommand (or --check-only)."""
    if kind == "binary":
        if len(argv) < 2:
            return "python3"
        if argv[1].startswith("-"):
            return "python3 %s" % " ".join(argv[1:3])
        argv = argv[1:]
    name = os.path.basename(argv[0]) if argv else "?"
    rest = argv[1:]
    if name in SUBCOMMANDS and rest:
        name += " " + rest[0]
    elif "--check-only" in rest:
        name += " --check-only"
    return name


def starts(trace, cwd="."):
    """The names of the Python starts in a strace -f -e trace=execve file, in order."""
    pending, out, seen = {}, [], {}
    with open(trace, errors="replace") as f:
        for line in f:
            m = EXECVE.match(line)
            if m:
                pid, path, rest = m.groups()
                argv = [s.encode().decode("unicode_escape", "replace") for s in STRING.findall(rest.split("]", 1)[0])]
                pending[pid] = (path, argv)
                d = DONE.search(line)
                if d is None:
                    continue  # <unfinished ...>: its result comes on a "resumed" line
                rc = d.group(1)
            else:
                m = RESUMED.match(line)
                if not m or m.group(1) not in pending:
                    continue
                pid, rc = m.groups()
            path, argv = pending.pop(pid)
            kind = _kind(path, cwd, seen) if rc == "0" else None
            if kind:
                out.append(_name(kind, argv))
    return out


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: pystarts.py TRACE [CWD]", file=sys.stderr)
        return 2
    names = starts(argv[1], argv[2] if len(argv) == 3 else ".")
    print(len(names))
    for name, n in sorted(collections.Counter(names).items(), key=lambda x: (-x[1], x[0])):
        print("%4d  %s" % (n, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
