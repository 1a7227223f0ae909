#!/usr/bin/env bash
# bench-self.sh: the engine's own accuracy, as figures (not a pass/fail test):
# loop overhead per call, run-to-run spread over 5 runs of the figures make
# bench turns into ratios (the vDSO median, the kernel's own read, each
# workload's rate and latency: the noise any one ratio carries here), the
# static musl build against the host build, clockbench's vdso and syscall
# figures against plain loops of the C library's clock_gettime() and
# syscall(SYS_clock_gettime, ...), and the gap between the syscall inlined
# and behind a call (what this kernel's mitigations add to a fallback).
# Runs are interleaved so that drift hits all alike.
# Usage: bench-self.sh [RESULTS_DIR RUN_ID]: also keeps the figures in
# RESULTS_DIR/RUN_ID/bench-self.txt (a new folder, never reused).
set -eu -o pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-5}
keep=/dev/null
if [ "$#" -eq 2 ]; then
	mkdir -p "$1"
	mkdir "$1/$2" || { echo "clockbench: $1/$2 exists: choose another RUN_ID" >&2; exit 1; }
	keep=$1/$2/bench-self.txt
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/plainloop" tests/bench/plainloop.c
# The plain loops run on the CPU clockbench pins its one thread to.
cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')

for i in $(seq 1 "$runs"); do
	echo "clockbench: bench-self run $i of $runs" >&2
	for b in bench/clockbench build/clockbench-static; do
		"$b" --clocks monotonic --methods vdso,syscall,syscall-inline,null,rdtsc --threads 1 --duration "${DURATION:-1}" \
			--quiet --format json --output "$tmp/$(basename "$b")-$i.json"
	done
	# The workloads as make bench runs them (0.5 s each).
	bench/clockbench --no-cost --workloads all --duration 500ms --quiet --format json --output "$tmp/workloads-$i.json"
	taskset -c "$cpu" "$tmp/plainloop" vdso 20000000 >"$tmp/plain-vdso-$i.txt"
	taskset -c "$cpu" "$tmp/plainloop" syscall 2000000 >"$tmp/plain-syscall-$i.txt"
done

python3 - "$tmp" "$runs" <<'PY' | tee "$keep"
import json, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
METHODS = ("vdso", "syscall", "syscall-inline", "rdtsc")
def load(b, i):
    return json.load(open("%s/%s-%d.json" % (tmp, b, i)))
def plain(kind, col):
    """Column 0: ns per call over the whole loop; 1: median over 1000-call chunks."""
    return [float(open("%s/plain-%s-%d.txt" % (tmp, kind, i)).read().split()[col]) for i in range(1, runs + 1)]
def row(d, m):
    return next(r for r in d["results"] if r["method"] == m)
def fig(d, m, q):
    """A figure less the overhead, or the raw one where the overhead exceeds it."""
    r = row(d, m)
    return r["ns_per_call"][q] if r["ns_per_call"][q] is not None else r["ns_per_call_raw"][q]
docs = {b: [load(b, i) for i in range(1, runs + 1)] for b in ("clockbench", "clockbench-static")}
ctx = docs["clockbench"][0]["context"]
print("bench-self on %s (%s, %s), clocksource %s, %s" % (ctx["hostname"], ctx["cpu_model"], ctx["kernel"],
      ctx["clocksource"], ctx["start"]))
mit = ctx.get("mitigations", {})
print("mitigations: %s" % ("; ".join("%s: %s" % kv for kv in sorted(mit.items()) if kv[1] != "Not affected")
                           or "none reported"))
print("%d interleaved runs of 1 thread, CLOCK_MONOTONIC, %s s per cell\n" % (runs, ctx["duration_s"]))
print("%-18s %-15s %12s %10s %10s   %s" % ("build", "method", "median ns", "spread %", "overhead", "per run"))
med, mean = {}, {}
for b, ds in docs.items():
    for m in METHODS:
        meds = [fig(d, m, "median") for d in ds]
        ovh = max(row(d, m)["overhead_ns_per_call"] for d in ds)
        mm = statistics.median(meds)
        med[(b, m)] = mm
        mean[(b, m)] = statistics.median(fig(d, m, "mean") for d in ds)
        print("%-18s %-15s %12.2f %10.2f %8.2fns   %s" % (b, m, mm, 100 * (max(meds) - min(meds)) / mm, ovh,
              " ".join("%.2f" % x for x in meds)))
# The run-to-run spread of what make bench divides: a ratio of two runs on
# this machine moves by as much as max/min here with no change at all.
print("\nrun-to-run spread of the figures make bench turns into ratios (host build, %d runs):" % runs)
print("%-34s %10s %10s %10s %9s   %s" % ("figure", "min", "median", "max", "max/min", "per run"))
def spread(name, xs, unit):
    xs = [x for x in xs if x is not None]
    if not xs:
        print("%-34s %10s" % (name, "n/a"))
        return
    mm = statistics.median(xs)
    print("%-34s %10.4g %10.4g %10.4g %9.3f   %s %s" % (name, min(xs), mm, max(xs), max(xs) / min(xs),
          " ".join("%.4g" % x for x in xs), unit))
ds = docs["clockbench"]
spread("vdso read, median", [fig(d, "vdso", "median") for d in ds], "ns")
spread("kernel read (kernel_read_ns)", [row(d, "syscall").get("kernel_read_ns") for d in ds], "ns")
wl = [json.load(open("%s/workloads-%d.json" % (tmp, i)))["workloads"] for i in range(1, runs + 1)]
for name in ("tcp-stream", "tcp-rr", "timer"):
    rows = [next((w for w in ws if w["workload"] == name), {}) for ws in wl]
    spread("%s rate" % name, [r.get("rate") for r in rows], rows[0].get("rate_unit", ""))
    if any((r.get("latency_us") or {}).get("median") is not None for r in rows):
        spread("%s latency median" % name, [(r.get("latency_us") or {}).get("median") for r in rows], "us")
print("(max/min: how far one run's figure over another's moves with nothing changed; make bench's rounds"
      " and intervals exist for this)")
print("\nstatic musl / host glibc, median of medians:")
for m in METHODS:
    print("  %-15s %.3f (%+.1f %%)" % (m, med[("clockbench-static", m)] / med[("clockbench", m)],
          100 * (med[("clockbench-static", m)] / med[("clockbench", m)] - 1)))
pv, ps, pvc, psc = plain("vdso", 0), plain("syscall", 0), plain("vdso", 1), plain("syscall", 1)
pvm, psm, pvcm, pscm = (statistics.median(x) for x in (pv, ps, pvc, psc))
print("\nplain loops on the same CPU (median of %d runs): whole loop; median of 1000-call chunks" % runs)
print("  clock_gettime() x 20M:                 %8.2f ns (%s); %8.2f ns (%s)" % (pvm, " ".join("%.2f" % p for p in pv),
      pvcm, " ".join("%.2f" % p for p in pvc)))
print("  syscall(SYS_clock_gettime, ...) x 2M:  %8.2f ns (%s); %8.2f ns (%s)" % (psm, " ".join("%.2f" % p for p in ps),
      pscm, " ".join("%.2f" % p for p in psc)))
print("clockbench vdso median / plain median chunk: %.3f; mean (outliers in, overhead out) / plain whole loop: %.3f"
      % (med[("clockbench", "vdso")] / pvcm, mean[("clockbench", "vdso")] / pvm))
for b in docs:
    for what, cb, pl in (("median", med[(b, "syscall")], pscm), ("mean", mean[(b, "syscall")], psm)):
        r = cb / pl
        print("cross-check %-17s syscall %-6s %8.2f ns / the C library's syscall() %8.2f ns: %.3f (%+.1f %%): %s"
              % (b, what, cb, pl, r, 100 * (r - 1), "within 5 %" if abs(r - 1) <= 0.05 else "OUTSIDE 5 %"))
print("(median: against the plain loop's median chunk; mean: against its whole loop, preemption included)")
print("\nsyscall inlined vs behind a call (median of medians): what one call and ret after the kernel cost here")
for b in docs:
    i, c = med[(b, "syscall-inline")], med[(b, "syscall")]
    print("  %-18s syscall-inline %.2f ns, syscall %.2f ns: gap %+.2f ns (%+.1f %%)" % (b, i, c, c - i, 100 * (c / i - 1)))
print("\ntargets: overhead <= 1 ns a call; spread <= 3 % on a quiet machine; musl within 3 % of glibc;"
      " syscall within 5 % of the C library's syscall()")
PY
[ "$keep" = /dev/null ] || echo "kept in $keep"
