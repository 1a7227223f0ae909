"""watchbench.py: what clockbench watch costs, a benchmark (figures printed, nothing asserted).

  PYTHONPATH=contract:host-scripts python3 -m cbhost.watchbench [IDLE_SECONDS]

1. Idle: the watch as its unit runs it (the real kernel log, its tracefs
   instance where this host allows it, --interval 60s) for IDLE_SECONDS
   (default 300) after its first write; its CPU time (utime + stime of
   /proc/PID/stat) scaled to an hour, and its resident memory (VmRSS,
   VmHWM).
2. Delay: 10 clocksource-switch lines through a FIFO standing in for
   /dev/kmsg; the time from each write to the textfile holding it, polled
   every millisecond; median and max.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
# Run by Debian's python3, as the package's commands are (debian/rules).
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
WATCH = os.path.join(TOP, "host-scripts", "watch")
FILE = "clockbench-watch.prom"


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith(key + ":"):
                return int(ln.split()[1])
    return None


def wait_file(path, cap=60.0):
    t0 = time.monotonic()
    while not os.path.exists(path):
        if time.monotonic() - t0 > cap:
            raise SystemExit("watchbench: %s never appeared" % path)
        time.sleep(0.01)


def idle(seconds, tmp):
    d = os.path.join(tmp, "idle")
    os.mkdir(d, 0o755)
    p = subprocess.Popen([PYTHON, WATCH, "--textfile-dir", d], stderr=subprocess.PIPE, text=True)
    try:
        wait_file(os.path.join(d, FILE))
        time.sleep(2)
        c0, t0 = cpu_seconds(p.pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = cpu_seconds(p.pid), time.monotonic()
        rss, hwm = status(p.pid, "VmRSS"), status(p.pid, "VmHWM")
        with open(os.path.join(d, FILE)) as f:
            traced = "node_clockbench_watch_trace_available 1" in f.read()
    finally:
        p.terminate()
        p.wait(timeout=30)
    per_hour = (c1 - c0) * 3600 / (t1 - t0)
    print("idle: %.0f s watched (KVM events %s): CPU %.2f s per hour (%.4f %% of one CPU), RSS %.1f MiB (peak %.1f MiB)"
          % (t1 - t0, "followed" if traced else "not followed: " + p.stderr.read().strip()[:80], per_hour,
             per_hour / 36, rss / 1024, hwm / 1024))


def delay(tmp, n=10):
    d = os.path.join(tmp, "delay")
    os.mkdir(d, 0o755)
    fifo = os.path.join(tmp, "kmsg")
    os.mkfifo(fifo)
    env = dict(os.environ, CB_KMSG=fifo)
    p = subprocess.Popen([PYTHON, WATCH, "--textfile-dir", d, "--no-trace"], env=env)
    fw = os.open(fifo, os.O_WRONLY)
    path = os.path.join(d, FILE)
    took = []
    try:
        wait_file(path)
        for i in range(1, n + 1):
            want = 'node_clockbench_kernel_log_events_total{kind="switched"} %d\n' % i
            t0 = time.monotonic()
            os.write(fw, b"6,%d,%d,-;clocksource: Switched to clocksource %s\n"
                     % (i, i * 1000000, b"hpet" if i % 2 else b"tsc"))
            while True:
                try:
                    with open(path) as f:
                        if want in f.read():
                            break
                except FileNotFoundError:
                    pass
                if time.monotonic() - t0 > 60:
                    raise SystemExit("watchbench: switch line %d never reached the textfile" % i)
                time.sleep(0.001)
            took.append(time.monotonic() - t0)
            time.sleep(0.5)
    finally:
        os.close(fw)
        p.terminate()
        p.wait(timeout=30)
    print("delay: switch line to textfile, %d lines: median %.1f ms, max %.1f ms"
          % (n, statistics.median(took) * 1000, max(took) * 1000))


def main(argv):
    seconds = float(argv[1]) if len(argv) > 1 else 300.0
    tmp = tempfile.mkdtemp(prefix="clockbench-watchbench.")
    os.chmod(tmp, 0o755)
    try:
        print("watchbench: %s, %s, %d CPUs, %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                                 os.uname().release, os.cpu_count(), PYTHON))
        delay(tmp)
        idle(seconds, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
