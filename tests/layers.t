#!/usr/bin/python3
# tier: fast
"""layers.t: the Python floors of the layout, drawn from the code's own imports (ast, never run).

Bottom to top: contract/ (cbcontract), host-scripts/ (cbhost and the harness's
commands), analysis/ (cbanalysis and clockbench-report), lab/.  A file imports
nothing of the project from a floor above its own, and no module of a package
(contract/cbcontract, host-scripts/cbhost, analysis/cbanalysis) assigns to or
inserts into sys.path: only a command's entry point sets it.  The checker is
first run on a small tree with one of each fault, so that it is seen to find
them.
"""
import ast
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from taplib import ROOT, Tap  # noqa: E402

FLOORS = (("contract", 1), ("host-scripts", 2), ("analysis", 3), ("lab", 4))
PACKAGES = {"cbcontract": 1, "cbhost": 2, "cbanalysis": 3}
PACKAGE_DIRS = (os.path.join("contract", "cbcontract"), os.path.join("host-scripts", "cbhost"),
                os.path.join("analysis", "cbanalysis"))


def python_files(top):
    """(relative path, floor) of every .py file and Python entry script (#! ... python) under the floors' folders."""
    out = []
    for folder, floor in FLOORS:
        for d, dirs, files in os.walk(os.path.join(top, folder)):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            for f in sorted(files):
                p = os.path.join(d, f)
                if not f.endswith(".py"):
                    try:
                        with open(p, "rb") as fh:
                            first = fh.readline(200)
                    except OSError:
                        continue
                    if not (first.startswith(b"#!") and b"python" in first):
                        continue
                out.append((os.path.relpath(p, top), floor))
    return out


def lab_modules(top):
    return {f[:-3] for f in os.listdir(os.path.join(top, "lab")) if f.endswith(".py")} \
        if os.path.isdir(os.path.join(top, "lab")) else set()


def package_of(rel):
    for d in PACKAGE_DIRS:
        if os.path.dirname(rel) == d:
            return os.path.basename(d)
    return None


def imported(tree, rel):
    """(line, top-level project name) of each import in tree; a relative import is of its own package."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name.split(".")[0], a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                pkg = package_of(rel)
                yield node.lineno, pkg or "(relative)", "." * node.level + (node.module or "")
            else:
                yield node.lineno, node.module.split(".")[0], "%s (%s)" % (node.module, ", ".join(a.name for a in node.names))


def _is_sys_path(n):
    return (isinstance(n, ast.Attribute) and n.attr == "path" and isinstance(n.value, ast.Name)
            and n.value.id == "sys")


def path_edits(tree):
    """Lines where sys.path is assigned (sys.path = / sys.path[...] = / +=) or changed by a method call,
    or where `path` is imported from sys (an edit under another name)."""
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for tg in targets:
            if _is_sys_path(tg) or (isinstance(tg, ast.Subscript) and _is_sys_path(tg.value)):
                yield node.lineno
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_sys_path(node.func.value)
                and node.func.attr in ("insert", "append", "extend", "remove", "pop", "clear")):
            yield node.lineno
        if isinstance(node, ast.ImportFrom) and node.module == "sys" and any(a.name == "path" for a in node.names):
            yield node.lineno


def check(top):
    """{rule: [violation, ...]} for the tree at top."""
    labs = lab_modules(top)
    out = {"up": {}, "syspath": [], "unparsed": []}
    for rel, floor in python_files(top):
        try:
            with open(os.path.join(top, rel), "rb") as f:
                tree = ast.parse(f.read(), rel)
        except (SyntaxError, ValueError) as e:
            out["unparsed"].append("%s: %s" % (rel, e))
            continue
        for line, name, full in imported(tree, rel):
            target = PACKAGES.get(name, 4 if name in labs and not rel.startswith("lab" + os.sep) else None)
            if target is not None and target > floor:
                out["up"].setdefault(rel.split(os.sep)[0], []).append("%s:%d imports %s" % (rel, line, full))
        if package_of(rel):
            out["syspath"].extend("%s:%d edits sys.path" % (rel, n) for n in path_edits(tree))
    return out


t = Tap()

# The checker on a tree with one fault of each kind, and a clean entry point.
fake = os.path.join(t.tmp, "tree")
files = {
    "contract/cbcontract/__init__.py": "",
    "contract/cbcontract/a.py": "from cbhost import qemu\nimport cbanalysis.fmt\n",
    "contract/cbcontract/b.py": "import sys\nsys.path.insert(0, 'x')\n",
    "contract/cbcontract/c.py": "import sys\nsys.path[:0] = ['x']\nfrom . import a\n",
    "host-scripts/cbhost/d.py": "def f():\n    from cbanalysis import guesttable\n",
    "host-scripts/cbhost/e.py": "from sys import path\npath.append('x')\n",
    "host-scripts/tool": "#!/usr/bin/env python3\nimport sys\nsys.path[:0] = ['x']\nimport cbcontract, cbhost\n",
    "analysis/cbanalysis/f.py": "import labtable\nfrom cbcontract import load\n",
    "lab/labtable.py": "import cbanalysis, cbhost\n",
}
for rel, body in files.items():
    os.makedirs(os.path.dirname(os.path.join(fake, rel)), exist_ok=True)
    with open(os.path.join(fake, rel), "w") as f:
        f.write(body)
got = check(fake)
t.ok(sorted(got["up"]) == ["analysis", "contract", "host-scripts"] and len(got["up"]["contract"]) == 2
     and got["up"]["host-scripts"] == ["host-scripts/cbhost/d.py:2 imports cbanalysis (guesttable)"]
     and got["up"]["analysis"] == ["analysis/cbanalysis/f.py:1 imports labtable"],
     "the checker finds each import up a floor (also one inside a function), and none down", got["up"])
t.ok(sorted(got["syspath"]) == ["contract/cbcontract/b.py:2 edits sys.path", "contract/cbcontract/c.py:2 edits sys.path",
                                "host-scripts/cbhost/e.py:1 edits sys.path"],
     "the checker finds sys.path edited by insert, by slice assignment and imported from sys; "
     "an entry point's own edit is not counted", got["syspath"])

# The tree itself.
got = check(ROOT)
n = len(python_files(ROOT))
t.ok(n > 20 and not got["unparsed"], "%d Python files parsed under contract/, host-scripts/, analysis/, lab/" % n,
     got["unparsed"])
t.ok(not got["up"].get("contract"), "contract/ (cbcontract) imports nothing of cbhost, cbanalysis or the lab",
     "\n".join(got["up"].get("contract", [])))
t.ok(not got["up"].get("host-scripts"), "host-scripts/ (the harness) imports no cbanalysis and nothing of the lab",
     "\n".join(got["up"].get("host-scripts", [])))
t.ok(not got["up"].get("analysis"), "analysis/ imports nothing of the lab", "\n".join(got["up"].get("analysis", [])))
t.ok(not got["syspath"], "no module of cbcontract, cbhost or cbanalysis edits sys.path (only entry points do)",
     "\n".join(got["syspath"]))
t.done()
