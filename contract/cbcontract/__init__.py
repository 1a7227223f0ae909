"""cbcontract: what every layer of clockbench shares, and nothing of theirs.

The run folder (runfolder), the one reader of result files (load), and the
errors and atomic writes (util).  It imports only the standard library and
itself; the harness (host-scripts/cbhost), the reports (analysis/cbanalysis)
and the lab import it, never the other way round.  A command's entry point
puts contract/ on sys.path once; no module edits sys.path.
"""
