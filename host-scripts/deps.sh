#!/usr/bin/env bash
# deps.sh: install the Debian packages clockbench needs, once; idempotent.
# As root it runs apt-get; otherwise it prints the exact command and fails.
# Usage: deps.sh [PACKAGE...]   (default: the project's whole list)
set -eu -o pipefail

# musl-tools: the static guest build.  python3: tests and result tools.
# qemu-system-x86, linux-image-amd64, cpio, busybox-static: the guest path.
pkgs=("$@")
if [ "${#pkgs[@]}" -eq 0 ]; then
	pkgs=(gcc make musl-tools python3 qemu-system-x86 linux-image-amd64 busybox-static cpio)
fi

missing=()
for p in "${pkgs[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing+=("$p") ;;
	esac
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "clockbench: missing Debian packages: ${missing[*]}" >&2
	echo "clockbench: run: sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "clockbench: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
