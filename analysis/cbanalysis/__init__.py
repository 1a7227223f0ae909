"""cbanalysis: the analysis of clockbench results (reads only results/)."""
VERSION = "0.1.0"
