#!/usr/bin/env bash
# tier: slow
# serial: host
# libvirt.t: bench-guest's --backend=libvirt boots the same guest as a transient domain
# (virsh create, TCG, 2 vCPUs) with the same result; a guest error is
# reported the same way.  Starts virtlogd and libvirtd when none runs, and
# stops exactly those (by pid) at the end.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/guest-init/guest-lib.sh
tmp=$(mktemp -d)
chmod 755 "$tmp" # libvirt's QEMU user reads the run's work folder below it
export TMPDIR=$tmp
uri=${LIBVIRT_DEFAULT_URI:-qemu:///system}
cleanup() {
	local pid
	for pid in "${libvirt_started[@]+"${libvirt_started[@]}"}"; do
		kill "$pid" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

kernel=$(guest_kernel)
if ! command -v virsh >/dev/null || ! command -v libvirtd >/dev/null; then
	skip_all "libvirt not installed (apt-get install libvirt-daemon-system libvirt-clients)"
fi
if [ -z "$kernel" ] || ! command -v qemu-system-x86_64 >/dev/null; then
	skip_all "needs qemu-system-x86_64 and a kernel image (CB_TEST_KERNEL=)"
fi
if ! virsh -c "$uri" uri >/dev/null 2>&1; then
	if ! destructive; then
		skip_all "no libvirt daemon at $uri, and starting one changes this host: root and DESTRUCTIVE=1 only"
	fi
	libvirt_up "$uri"
	diag "started: virtlogd and/or libvirtd, pids ${libvirt_started[*]:-none}"
fi
ok "$(virsh -c "$uri" uri >/dev/null 2>&1; echo $?)" "libvirt answers at $uri"
initrd=$(guest_initramfs)
ok "$([ -n "$initrd" ]; echo $?)" "make guest-initramfs"
[ -n "$initrd" ] || { done_testing; exit; }

cs=$(host_cs)
res=$tmp/results/run/guest-$cs-2vcpu-libvirt.json
start=$SECONDS
host-scripts/bench-guest --backend=libvirt --kernel="$kernel" --initramfs="$initrd" --accel=tcg --vcpus=2 --timeout=120 \
	--duration=0.2 --clocks=monotonic --methods=vdso --check=none --results "$tmp/results" --run-id run \
	>"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ -s "$res" ] && [ -s "${res%.json}.console.log" ] && [ "$(tail -1 "$tmp/stdout")" = "$res" ]; echo $?)" \
	"virsh create boot, TCG, 2 vCPUs: exit $rc in $((SECONDS - start)) s, result and console log, its path last on stdout"
[ "$rc" -eq 0 ] || diag_lines <"$tmp/stderr"
if [ -s "$res" ]; then
	jcheck "$res" 'sorted(r["threads"] for r in d["bench"]["results"]) == [1, 2]' "rows for 1 and 2 threads"
	jcheck "$res" 'd["launcher"]["backend"] == "libvirt" and d["launcher"]["accel"] == "tcg" and d["launcher"]["emulated"] is True and "<domain type=\"qemu\"" in d["launcher"]["libvirt_domain_xml"]' \
		"labelled libvirt, tcg, emulated; domain type qemu recorded"
	jcheck "$res" 'd["bench"]["context"]["cpus_online"] == 2 and d["bench"]["context"]["clocksource"] and "sched_clock_marked_stable" in d["guest"]["log"]' "guest facts present"
	jcheck "$res" 'd["launcher"]["pinning"]["mode"] == "pinned" and all(v["thread_id"] and v["host_cpu"] is not None for v in d["launcher"]["pinning"]["vcpus"])' \
		"vCPUs pinned with <vcpupin>, thread ids recorded"
	jcheck "$res" '0 < d["launcher"]["boot_ms"] < d["launcher"]["result_ms"]' "boot_ms recorded"
else
	for _ in 1 2 3 4 5; do skip "no result to check"; done
fi
ok "$(! virsh -c "$uri" list --all --name 2>/dev/null | grep -q '^clockbench-'; echo $?)" "no clockbench domain left behind"

host-scripts/bench-guest --backend=libvirt --kernel="$kernel" --initramfs="$initrd" --accel=tcg --vcpus=1 --timeout=60 \
	--append=clockbench.bogus=1 --results "$tmp/results" --run-id run2 >/dev/null 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q 'stage params: clockbench.bogus: unknown parameter (console log: ' "$tmp/stderr" &&
	[ ! -e "$tmp/results/run2" ]; echo $?)" "bad guest parameter under libvirt: exit $rc, the guest's error, nothing in results/"
diag_lines <"$tmp/stderr"
done_testing
