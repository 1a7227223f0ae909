#!/usr/bin/env bash
# deps.sh: install the Debian packages clockbench needs, once; idempotent.
# As root it runs apt-get; otherwise it prints the exact command and fails.
# Usage: deps.sh [PACKAGE...]   (default: the project's lists below)
set -eu -o pipefail

# Needed: gcc, make; musl-tools (the static guest build); python3 (tests,
# launcher, analysis); qemu-system-x86, linux-image-amd64 (a kernel and its
# modules for guests and the lab), busybox-static (the lab's L1), cpio;
# gnuplot-nox (the report's plots); kmod (modinfo).
# Optional: what some tests use where present, and skip without:
# prometheus (promtool), ansible-core (the fleet playbook), libvirt for
# BACKEND=libvirt.
need=(gcc make musl-tools python3 qemu-system-x86 linux-image-amd64 busybox-static cpio gnuplot-nox kmod)
optional=(prometheus ansible-core libvirt-daemon-system libvirt-clients)
if [ "$#" -gt 0 ]; then
	need=("$@")
	optional=()
fi

missing_of() {
	local p status
	for p in "$@"; do
		status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		case "$status" in
		*"install ok installed"*) ;;
		*) echo "$p" ;;
		esac
	done
}
mapfile -t miss_need < <(missing_of "${need[@]}")
mapfile -t miss_opt < <(missing_of "${optional[@]+"${optional[@]}"}")
missing=("${miss_need[@]+"${miss_need[@]}"}" "${miss_opt[@]+"${miss_opt[@]}"}")
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	if [ "${#miss_need[@]}" -eq 0 ]; then
		echo "clockbench: note: optional packages missing (some tests skip): sudo apt-get install -y ${miss_opt[*]}" >&2
		exit 0
	fi
	echo "clockbench: missing Debian packages: ${miss_need[*]}" >&2
	echo "clockbench: run: sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "clockbench: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
