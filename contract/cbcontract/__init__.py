"""cbcontract: what every layer of clockbench shares, and nothing of theirs.

The run folder (runfolder, and its rounds), the one reader of result files
(load: today's shape of each schema), the shared names (names: clocks,
methods, exit statuses, the one version), the kernel log's phrases (kmsg)
and the watchdog's rules per kernel (kernels), the Prometheus textfile
writer (textfile), and the errors and atomic writes (util).  It imports
only the standard library and itself; the harness (host-scripts/cbhost),
the reports (analysis/cbanalysis) and the lab import it, never the other
way round (tests/layers.t).  A command's entry point puts contract/ on
sys.path once; no module edits sys.path.
"""
