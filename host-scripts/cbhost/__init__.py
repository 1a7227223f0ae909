"""cbhost: the host side's Python: QEMU command lines, the guest launcher, KVM tracing.

Importing it puts analysis/ on the path: the run-folder contract
(cbanalysis.runfolder) and the one reader of result files (cbanalysis.load)
live there, and host-scripts uses them, never the other way round.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.path.join(TOP, "analysis") not in sys.path:
    sys.path.insert(0, os.path.join(TOP, "analysis"))
