"""cbanalysis: the modules that make reports from clockbench results (reads only results/, through cbcontract)."""
