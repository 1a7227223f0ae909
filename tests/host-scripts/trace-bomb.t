#!/usr/bin/python3
# tier: fast
"""trace-bomb.t: a KVM trace of over 1 GiB of text (a gzip bomb: 140 gzip members of 8 MiB of zeros, 1.1 MB) is
refused by kvm-trace summarize in one line, no MemoryError, under a 1 GiB address-space limit (the code before read it
whole).  Its cap lowered to 64 MiB in the child, as tests/props/kvmtrace.t lowers it (the reader decompresses its cap
before it refuses: some 10 s at 1 GiB here, zlib's own time); a reader that held the whole text would still pass the
address-space limit, one with no cap would read the 1.1 GiB to the end."""
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
member = gzip.compress(b"\0" * (8 << 20), 9)
with open(bomb, "wb") as fh:
    fh.write(member * 140)
CAP = 64  # MiB, in the child: kvm-trace run as its own file, its module's cap set first
RUN = ("import runpy, sys; sys.path[:0] = [%r, %r]; from cbhost import kvmtrace; kvmtrace.MAX_TRACE = %d << 20; "
       "sys.argv = [%r] + sys.argv[1:]; runpy.run_path(%r, run_name='__main__')"
       % (os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts"), CAP, KT, KT))


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


p = subprocess.run([sys.executable, "-c", RUN, "summarize", bomb], capture_output=True, text=True, preexec_fn=limit_memory)
t.ok(p.returncode == 1 and len(p.stderr.splitlines()) == 1 and "over %d MiB" % CAP in p.stderr and "Traceback" not in p.stderr,
     "a %d KB gzip bomb (1.1 GiB of zeros): exit 1, one line naming the cap (%d MiB here)" % (os.path.getsize(bomb) >> 10, CAP),
     p.stderr[-400:])
t.done()
