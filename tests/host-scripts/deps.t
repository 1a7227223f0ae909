#!/usr/bin/env bash
# tier: fast
# deps.t: host-scripts/deps installs what the job asked for and no more:
# never a monitoring server or a virtualization daemon for a benchmark,
# options parsed (never passed to apt-get), and the Makefile's targets each
# ask for their own group.  apt-get, dpkg-query and id are fakes here: the
# test installs nothing and behaves alike as root or as a user.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
# Every package missing; apt-get records its arguments; id says root.
cat >"$tmp/bin/dpkg-query" <<'FAKE'
#!/bin/sh
exit 1
FAKE
cat >"$tmp/bin/apt-get" <<FAKE
#!/bin/sh
echo "\$*" >>"$tmp/apt.log"
FAKE
cat >"$tmp/bin/id" <<'FAKE'
#!/bin/sh
echo 0
FAKE
chmod +x "$tmp/bin/"*
deps() { : >"$tmp/apt.log"; PATH="$tmp/bin:$PATH" host-scripts/deps "$@" >"$tmp/out" 2>"$tmp/err"; }
installed() { grep '^install' "$tmp/apt.log" | tr ' ' '\n' | grep -v '^-'; }

deps --help
rc=$?
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/apt.log" ] && grep -q '^usage: deps' "$tmp/out"; echo $?)" \
	"--help prints the usage and calls no apt-get (exit $rc; apt-get: $(paste -sd';' "$tmp/apt.log"))"
for bad in --bogus --install prometheus; do
	deps "$bad"
	rc=$?
	ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -s "$tmp/apt.log" ]; echo $?)" \
		"'$bad': usage, exit 2, one line, no apt-get (exit $rc: $(head -c 200 "$tmp/err"))"
done

deps
got=$(installed | paste -sd' ')
ok "$(installed | grep -qx gcc && installed | grep -qx qemu-system-x86 &&
	! installed | grep -Eqx 'prometheus|ansible-core|libvirt-daemon-system|libvirt-clients|clang|lintian'; echo $?)" \
	"make bench's deps (as root): the measurement's packages only: $got"
deps dev
got=$(installed | paste -sd' ')
ok "$(installed | grep -qx clang && installed | grep -qx help2man && ! installed | grep -Eqx 'prometheus|libvirt-daemon-system' &&
	grep -q 'note: not installed, the tests that use them skip: prometheus' "$tmp/err"; echo $?)" \
	"make check's deps: the test tools; the integrations named in one line, not installed: $got"
deps integrations
ok "$(installed | grep -qx prometheus && installed | grep -qx libvirt-daemon-system; echo $?)" \
	"the integrations install when named"

# As a user (id says 1000): the exact command, exit 1, no apt-get.
printf '#!/bin/sh\necho 1000\n' >"$tmp/bin/id"
deps
rc=$?
ok "$([ "$rc" -eq 1 ] && [ ! -s "$tmp/apt.log" ] && grep -q 'run: sudo apt-get install -y gcc ' "$tmp/err"; echo $?)" \
	"as a user: the exact command and exit 1 (exit $rc: $(head -c 200 "$tmp/err"))"

# No group but the lab's names a kernel package: one changes a hypervisor's
# default boot kernel (the guest's is unpacked into build/ where /boot has none).
for g in bench dev crosscheck integrations; do
	ok "$(! host-scripts/deps --list "$g" | grep -q '^linux-image'; echo $?)" "deps $g installs no kernel package"
done
line=$(make -n --no-print-directory deps INSTALL_DEPS=0 2>/dev/null | grep -m1 'host-scripts/deps')
ok "$([ "$line" = "./host-scripts/deps --no-install bench" ]; echo $?)" "make deps INSTALL_DEPS=0 installs nothing: $line"
ok "$(grep -q 'unpacking Debian' host-scripts/deps && grep -q 'dpkg-deb --fsys-tarfile' host-scripts/deps; echo $?)" \
	"where /boot has no kernel image, deps unpacks one into the checkout (dpkg-deb), announced"
# Each target asks for its own group (make -n runs nothing).
for t in bench:bench bench-host:bench check:dev lab:lab crosscheck:crosscheck; do
	run_id=(RUN_ID=r)
	[ "${t%%:*}" != check ] || run_id=()
	line=$(make -n --no-print-directory "${t%%:*}" "${run_id[@]+"${run_id[@]}"}" 2>/dev/null | grep -m1 'host-scripts/deps')
	ok "$([ "$line" = "./host-scripts/deps ${t#*:}" ]; echo $?)" "make ${t%%:*} asks for deps ${t#*:}: $line"
done
done_testing
