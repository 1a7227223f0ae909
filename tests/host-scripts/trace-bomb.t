#!/usr/bin/python3
# tier: slow
"""trace-bomb.t: a KVM trace of over 1 GiB of text (a gzip bomb: 17 gzip members of 64 MiB of zeros, 1.1 MB) is
refused by kvm-trace summarize in one line, no MemoryError, under a 1 GiB address-space limit (the code before read it
whole).  Slow: the reader decompresses its 1 GiB cap before it refuses (some 15 s)."""
import gzip
import os
import resource
import subprocess
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from taplib import Tap  # noqa: E402

t = Tap()
KT = os.path.join(ROOT, "host-scripts", "kvm-trace")
bomb = os.path.join(t.tmp, "bomb.txt.gz")
member = gzip.compress(b"\0" * (64 << 20), 9)
with open(bomb, "wb") as fh:
    fh.write(member * 17)


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


p = subprocess.run([sys.executable, KT, "summarize", bomb], capture_output=True, text=True, preexec_fn=limit_memory)
t.ok(p.returncode == 1 and len(p.stderr.splitlines()) == 1 and "1024 MiB" in p.stderr and "Traceback" not in p.stderr,
     "a %d KB gzip bomb (1.1 GiB of zeros): exit 1, one line naming the cap" % (os.path.getsize(bomb) >> 10),
     p.stderr[-400:])
t.done()
