#!/usr/bin/env bash
# compare.sh: `make compare`: for each host clocksource, flip, bench the
# host, bench a guest with KVM's clock events traced; restore after each.
# Usage: compare.sh RESULTS_DIR RUN_ID
# Env: CLOCKSOURCES (default: every available one, tsc first), GUEST=0 (host
# only), FORCE=1 (flip even under foreign VMs), DURATION, THREADS, and the
# guest launcher's settings (KERNEL, ACCEL, VCPUS, ...).
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=host-scripts/cs-lib.sh
. "$here/cs-lib.sh"

[ "$#" -eq 2 ] || { echo "usage: $0 RESULTS_DIR RUN_ID" >&2; exit 2; }
results=$1
run_id=$2
case "$run_id" in '' | */* | .*) cs_say "bad run id '$run_id'"; exit 2 ;; esac

if [ -n "${CLOCKSOURCES:-}" ]; then
	read -r -a list <<<"${CLOCKSOURCES//,/ }"
else
	mapfile -t list < <(cs_available | grep -x tsc; cs_available | grep -vx tsc)
fi
[ "${#list[@]}" -gt 0 ] || { cs_say "no clocksource to compare"; exit 2; }
for c in "${list[@]}"; do
	cs_is_available "$c" || { cs_say "unknown clocksource '$c': this kernel offers: $(cs_available | paste -sd' ' -)"; exit 2; }
done
cs_need_write || exit 1
cs_recover || exit 1
cs_guard "${FORCE:-0}" || exit 1
"$here/kvmtrace" clean || true

# The guest boots the host's own kernel; where /boot has no image of it
# (a custom or cloud kernel), the newest Debian kernel stands in, and the
# result records which one ran.
if [ "${GUEST:-1}" = 1 ] && [ -z "${KERNEL:-}" ] && [ ! -r "/boot/vmlinuz-$(uname -r)" ]; then
	k=$(find /boot -maxdepth 1 -name 'vmlinuz-*' -readable 2>/dev/null | sort -V | tail -n1)
	if [ -n "$k" ]; then
		export KERNEL=$k
		cs_say "note: no /boot/vmlinuz-$(uname -r) for the running kernel: the guest boots $k"
	fi
fi

dir=$results/$run_id
mkdir -p "$results"
mkdir "$dir" || { cs_say "$dir exists: choose another RUN_ID"; exit 1; }
cs_say "compare: ${list[*]} (original: $(cs_current)); results in $dir"
force=()
[ "${FORCE:-0}" = 1 ] && force=(--force)
failed=()
i=0
for c in "${list[@]}"; do
	i=$((i + 1))
	cs_say "compare [$i/${#list[@]}] host clocksource $c"
	"$here/clocksource" set "$c" "${force[@]+"${force[@]}"}" -- "$here/compare-step.sh" "$c" "$dir" || failed+=("$c")
done
cs_say "clocksource back to '$(cs_current)'"
python3 "$here/compare-summary.py" "$dir"
if [ "${#failed[@]}" -gt 0 ]; then
	cs_say "failed for: ${failed[*]} (see above); the table has what was measured"
	exit 1
fi
