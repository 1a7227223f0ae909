# make-settings.awk: what make takes, checked while make reads its files,
# before anything runs (the Makefile's one call of it):
#   awk -f make-settings.awk -v given="NAME ..." -v goals="TARGET ..." \
#       -v own="..." -v renamed="OLD=NEW ..." packaging/settings -
# with make's own environment on stdin, one variable a line.  It prints the
# table's rows as the Makefile reads them, NAME:TARGETS:HOW:--option:DEFAULT
# a word;
# or, for the first kind of refusal found, one line "!clockbench: ..." that
# make prints and stops on:
#   - a setting, --eval (-E) or -e in the environment's MAKEFLAGS or
#     GNUMAKEFLAGS, or a MAKEFILES there: settings come from make's command
#     line only (make has read MAKEFILES and run --eval before this file,
#     so those are refused after the fact, never taken in silence);
#   - a name the table does not have (nor make's own): an old name gets its
#     new one; another the setting nearest to it (case aside, at most a
#     third of its letters changed, added, dropped or swapped), if one is;
#   - a setting none of whose targets is among the goals (all when none).

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

# envflags(NAME, V): why the environment's NAME=V is refused, or "".
function envflags(name, v,    n, w, i, j, c, defs) {
	n = split(v, w, /[ \t]+/)
	for (i = 1; i <= n; i++) {
		if (w[i] == "--") { dashes = 1; continue }
		if (w[i] ~ /^--(eval|environment-overrides)/) return name " in the environment has " w[i] ": refused"
		if (w[i] ~ /=/ && (dashes || w[i] !~ /^-/)) { defs = defs (defs == "" ? "" : ", ") substr(w[i], 1, index(w[i], "=") - 1); continue }
		if (w[i] ~ /^--/ || !(w[i] ~ /^-/ || i == 1)) continue
		for (j = (w[i] ~ /^-/) ? 2 : 1; j <= length(w[i]); j++) {
			c = substr(w[i], j, 1)
			if (c == "E" || c == "e") return name " in the environment has -" c " (" (c == "E" ? "--eval" : "--environment-overrides") "): refused"
			if (index("CfIjlOoW", c)) break
		}
	}
	return defs == "" ? "" : name " in the environment sets " defs ": refused"
}

# The table: its rows, and what each setting's targets are.
NR == FNR && !/^#/ && NF >= 5 {
	known = known " " $1
	targets[$1] = $2
	opt = tolower($1); gsub(/_/, "-", opt)
	d = $5; sub(/;.*/, "", d)
	rows = rows " " $1 ":" $2 ":" $3 ":--" opt ":" d
	next
}
NR != FNR && /^(MAKEFLAGS|GNUMAKEFLAGS)=/ && env == "" { dashes = 0; env = envflags(substr($0, 1, index($0, "=") - 1), substr($0, index($0, "=") + 1)) }
NR != FNR && /^MAKEFILES=./ && env == "" { env = "MAKEFILES in the environment: refused (make read its files before the Makefile)" }

END {
	if (env != "") { print "!clockbench: " env "; settings come from make's command line only (make bench DURATION=2s), unset it"; exit }
	nr = split(renamed, r, " ")
	for (i = 1; i <= nr; i++) { split(r[i], p, "="); newname[p[1]] = p[2] }
	no = split(own, o, " ")
	for (i = 1; i <= no; i++) isown[o[i]] = 1
	ng = split(goals, g, " ")
	if (ng == 0) g[ng = 1] = "all"
	n = split(given, u, " ")
	out = ""
	for (i = 1; i <= n; i++) {
		if (u[i] in isown || u[i] in targets) continue
		m = u[i] in newname ? "now " newname[u[i]] : (m = meant(u[i])) != "" ? "did you mean " m "?" : "no target of this Makefile reads it"
		out = out (out == "" ? "" : "; ") "unknown setting " u[i] " (" m ")"
	}
	for (i = 1; i <= n && out == ""; i++) {
		if (!(u[i] in targets) || targets[u[i]] == "*") continue
		for (j = 1; j <= ng; j++)
			if (index("," targets[u[i]] ",", "," g[j] ",") == 0) {
				t = targets[u[i]]; gsub(/,/, ", ", t)
				out = u[i] " is not a setting of make " g[j] " (make " t " take it)"
				break
			}
	}
	print out == "" ? rows : "!clockbench: " out
}
