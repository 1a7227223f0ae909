# unknown-setting.awk: the Makefile's one line for variables on make's
# command line that no target reads (awk -f, with -v unknown="A B",
# -v known="ROUNDS ...", -v renamed="OLD=NEW ..."); make prints it and stops.
#
# An old name gets its new one; another name the known setting nearest to it
# (case aside, at most a third of its letters changed, added, dropped or
# swapped), if one is.

function dist(a, b,    i, j, la, lb, d, c, x) {
	la = length(a); lb = length(b)
	for (i = 0; i <= la; i++) d[i, 0] = i
	for (j = 0; j <= lb; j++) d[0, j] = j
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			c = substr(a, i, 1) != substr(b, j, 1)
			x = d[i - 1, j - 1] + c
			if (d[i - 1, j] + 1 < x) x = d[i - 1, j] + 1
			if (d[i, j - 1] + 1 < x) x = d[i, j - 1] + 1
			if (i > 1 && j > 1 && substr(a, i, 1) == substr(b, j - 1, 1) && substr(a, i - 1, 1) == substr(b, j, 1) &&
			    d[i - 2, j - 2] + 1 < x) x = d[i - 2, j - 2] + 1
			d[i, j] = x
		}
	return d[la, lb]
}

function meant(name,    n, k, i, best, bestd, dd, u) {
	u = toupper(name)
	n = split(known, k, " ")
	bestd = int(length(u) / 3) + 1
	if (bestd > 3) bestd = 3
	best = ""
	for (i = 1; i <= n; i++) {
		dd = dist(u, k[i])
		if (dd < bestd) { best = k[i]; bestd = dd }
	}
	return best
}

BEGIN {
	nr = split(renamed, r, " ")
	for (i = 1; i <= nr; i++) { split(r[i], p, "="); newname[p[1]] = p[2] }
	n = split(unknown, u, " ")
	out = ""
	for (i = 1; i <= n; i++) {
		if (u[i] in newname)
			s = "unknown setting " u[i] " (now " newname[u[i]] ")"
		else if ((m = meant(u[i])) != "")
			s = "unknown setting " u[i] " (did you mean " m "?)"
		else
			s = "unknown setting " u[i] " (no target of this Makefile reads it)"
		out = out (out == "" ? "" : "; ") s
	}
	print "clockbench: " out
}
