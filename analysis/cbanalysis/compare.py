"""compare.py: the old name of diff.py (the two-run delta), kept for one release; import cbanalysis.diff."""
from .diff import MIN_BAND, band, cell_key, context_changes, diff_cells, index, render, siblings, where  # noqa: F401

compare_cells = diff_cells
