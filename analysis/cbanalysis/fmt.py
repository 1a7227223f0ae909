"""fmt.py: numbers and Markdown tables for the reports."""
from cbcontract.util import printable


def fnum(v, nd=2):
    """A number for a table: fixed decimals, 'n/a' for None."""
    if v is None:
        return "n/a"
    return "%.*f" % (nd, v)


def fquant(r, q="median", nd=2):
    """A row's quantile for a table: 'n/a' without a row; a quantile the
    engine left null because its overhead subtraction went negative says so,
    with the raw figure (before the subtraction) beside it, never a 0."""
    if r is None:
        return "n/a"
    v = r.ns.get(q)
    if v is None and q in r.below:
        raw = (r.raw or {}).get(q)
        return "n/a (below loop overhead%s)" % ("" if raw is None else "; raw %.*f" % (nd, raw))
    return fnum(v, nd)


def frate(r):
    """Reads per second as 1e6, 2.5e5, 1000."""
    if r >= 1000 and float(r).is_integer():
        m, e = ("%e" % r).split("e")
        m = m.rstrip("0").rstrip(".")
        return "%se%d" % (m, int(e))
    return "%g" % r


def md_escape(s):
    """A value for a Markdown table cell: one line, no control character
    (util.printable: a result's escape sequence never reaches a terminal
    showing the report), no cell separator."""
    return printable(s).replace("|", "\\|")


def md_table(header, rows, align=None):
    """A Markdown table; align is a string of 'l'/'r' per column."""
    align = align or "l" * len(header)
    out = ["| " + " | ".join(md_escape(h) for h in header) + " |",
           "| " + " | ".join("---:" if a == "r" else "---" for a in align) + " |"]
    for r in rows:
        out.append("| " + " | ".join(md_escape(c) for c in r) + " |")
    return "\n".join(out)
