"""cbhost: the host side's Python: QEMU command lines, the guest launcher, KVM tracing.

It uses the contract (contract/cbcontract: the run folder and the one reader
of result files), never the modules that make reports; a command's entry
point puts contract/ and host-scripts/ on sys.path.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout, or the installed copy
