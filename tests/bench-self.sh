#!/usr/bin/env bash
# bench-self.sh: the engine's own accuracy, as figures (not a pass/fail test):
# loop overhead per call, run-to-run spread of the median over 5 runs, the
# static musl build against the host build, and clockbench's vDSO figure
# against a plain loop.  Runs are interleaved so that drift hits all alike.
# Usage: bench-self.sh [RESULTS_DIR RUN_ID]: also keeps the figures in
# RESULTS_DIR/RUN_ID/bench-self.txt (a new folder, never reused).
set -eu -o pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
keep=/dev/null
if [ "$#" -eq 2 ]; then
	mkdir -p "$1"
	mkdir "$1/$2" || { echo "clockbench: $1/$2 exists: choose another RUN_ID" >&2; exit 1; }
	keep=$1/$2/bench-self.txt
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/plainloop" tests/plainloop.c

for i in $(seq 1 "$runs"); do
	echo "clockbench: bench-self run $i of $runs" >&2
	for b in bench/clockbench build/clockbench-static; do
		"$b" --clock monotonic --method vdso,syscall,rdtsc --threads 1 --duration "${DURATION:-1}" \
			--quiet --format json --output "$tmp/$(basename "$b")-$i.json"
	done
	"$tmp/plainloop" 20000000 >"$tmp/plain-$i.txt"
done

python3 - "$tmp" "$runs" <<'PY' | tee "$keep"
import json, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
def load(b, i):
    return json.load(open("%s/%s-%d.json" % (tmp, b, i)))
docs = {b: [load(b, i) for i in range(1, runs + 1)] for b in ("clockbench", "clockbench-static")}
ctx = docs["clockbench"][0]["context"]
print("bench-self on %s (%s, %s), clocksource %s, %s" % (ctx["hostname"], ctx["cpu_model"], ctx["kernel"],
      ctx["clocksource"], ctx["start"]))
print("%d interleaved runs of 1 thread, CLOCK_MONOTONIC, %s s per cell\n" % (runs, ctx["duration_s"]))
print("%-18s %-8s %12s %12s %10s %12s" % ("build", "method", "median ns", "spread %", "overhead", "of 5 runs"))
med = {}
for b, ds in docs.items():
    for m in ("vdso", "syscall", "rdtsc"):
        rows = [next(r for r in d["results"] if r["method"] == m) for d in ds]
        meds = [r["ns_per_call"]["median"] for r in rows]
        ovh = max(r["overhead_ns_per_call"] for r in rows)
        mm = statistics.median(meds)
        med[(b, m)] = mm
        print("%-18s %-8s %12.2f %12.2f %9.2fns   %s" % (b, m, mm, 100 * (max(meds) - min(meds)) / mm, ovh,
              " ".join("%.2f" % x for x in meds)))
print("\nstatic musl / host glibc, median of medians:")
for m in ("vdso", "syscall", "rdtsc"):
    print("  %-8s %.3f (%+.1f %%)" % (m, med[("clockbench-static", m)] / med[("clockbench", m)],
          100 * (med[("clockbench-static", m)] / med[("clockbench", m)] - 1)))
plain = [float(open("%s/plain-%d.txt" % (tmp, i)).read()) for i in range(1, runs + 1)]
pm = statistics.median(plain)
print("\nplain loop (20M calls timed as a whole): median %.2f ns (%s)" % (pm, " ".join("%.2f" % p for p in plain)))
means = [next(r for r in d["results"] if r["method"] == "vdso")["ns_per_call"]["mean"] for d in docs["clockbench"]]
print("clockbench vdso median / plain loop: %.3f; mean (outliers in, overhead out, as a plain loop but for the overhead) / plain loop: %.3f"
      % (med[("clockbench", "vdso")] / pm, statistics.median(means) / pm))
print("\ntargets: overhead <= 1 ns a call; spread <= 3 % on a quiet machine; musl within 3 % of glibc")
PY
[ "$keep" = /dev/null ] || echo "kept in $keep"
