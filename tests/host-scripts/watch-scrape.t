#!/usr/bin/python3
# tier: slow
# test-timeout: 300
"""watch-scrape.t: clockbench watch --once writes a folder that Debian's prometheus-node-exporter reads: node_exporter
started on a loopback port of its choosing with --collector.textfile.directory at that folder, /metrics scraped over
HTTP; clockbench's clocksource metric and node_exporter's own node_time_clocksource_current_info agree, the textfile
collector took the file without error (TAP)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from taplib import Tap  # noqa: E402

NE = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
if not NE:
    print("1..0 # SKIP prometheus-node-exporter not installed (Debian: prometheus-node-exporter)")
    sys.exit(0)
t = Tap()
WATCH = os.path.join(ROOT, "host-scripts", "watch")
CAP = 60.0
d = tempfile.mkdtemp(prefix="clockbench-scrape.", dir=t.tmp)
os.chmod(d, 0o755)
env = dict(os.environ, CB_WATCH_RUN_DIR=os.path.join(t.tmp, "watch-run"))
if not os.access("/dev/kmsg", os.R_OK):
    env["CB_KMSG"] = "/dev/null"  # a user where dmesg_restrict hides the log: the clocksource alone
p = subprocess.run([WATCH, "--once", "--textfile-dir", d], capture_output=True, text=True, env=env, timeout=60)
t.ok(p.returncode == 0 and os.path.isfile(os.path.join(d, "clockbench-watch.prom")),
     "clockbench watch --once writes its textfile (real clocksource, real kernel log)", p.stderr)

log = open(os.path.join(t.tmp, "ne.log"), "w+")
ne = subprocess.Popen([NE, "--web.listen-address=127.0.0.1:0", "--collector.disable-defaults", "--collector.textfile",
                       "--collector.time", "--collector.textfile.directory=" + d], stdout=log, stderr=subprocess.STDOUT)
try:
    port, t0 = None, time.monotonic()
    while port is None and time.monotonic() - t0 < CAP and ne.poll() is None:
        log.seek(0)
        m = re.search(r"address=127\.0\.0\.1:([0-9]+)", log.read())
        port = m and m.group(1)
        time.sleep(0.1)
    text = None
    while port and text is None and time.monotonic() - t0 < CAP:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=10) as r:
                text = r.read().decode()
        except OSError:
            time.sleep(0.2)
    log.seek(0)
    t.ok(text is not None, "node_exporter (%s) on 127.0.0.1:%s serves /metrics over HTTP" % (NE, port), log.read()[-500:])
    text = text or ""
    ours = re.findall(r'^node_clockbench_clocksource_info\{clocksource="([^"]*)"\} 1$', text, re.M)
    theirs = re.findall(r'^node_time_clocksource_current_info\{clocksource="([^"]*)",device="0"\} 1$', text, re.M)
    with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
        real = f.read().strip()
    t.ok(ours == theirs == [real], "clockbench and node_exporter agree on the clocksource: %s / %s (sysfs: %s)"
         % (ours, theirs, real))
    err = re.findall(r"^node_textfile_scrape_error (\S+)$", text, re.M)
    mtime = re.findall(r'^node_textfile_mtime_seconds\{file="([^"]*clockbench-watch\.prom)"\} ', text, re.M)
    t.ok(err == ["0"] and len(mtime) == 1, "the textfile collector read clockbench-watch.prom without error "
         "(node_textfile_scrape_error %s, its mtime as node_textfile_mtime_seconds)" % err,
         [ln for ln in text.splitlines() if "textfile" in ln][:5])
finally:
    ne.terminate()
    try:
        ne.wait(timeout=20)
    except subprocess.TimeoutExpired:
        ne.kill()
        ne.wait()
t.done()
