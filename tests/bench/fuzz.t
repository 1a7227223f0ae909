#!/usr/bin/env bash
# tier: slow
# test-timeout: 240
# fuzz.t: the libFuzzer targets (fuzz/, built by `make fuzz-build` with
# ASan and UBSan) briefly: each replays its regression inputs and seed
# corpus one by one, then runs 3000 inputs from a fixed seed, from a
# scratch copy of its corpus.  A crash, a sanitizer report or a broken
# property fails.  `make fuzz-c` runs them for longer.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
targets=(opts params json hist)
n=$((1 + 2 * ${#targets[@]}))
cc=${FUZZ_CC:-clang}
command -v "$cc" >/dev/null || skip_all "$cc not found (Debian: apt-get install clang)" "$n"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$tmp/probe.c"
"$cc" -fsanitize=fuzzer -o "$tmp/probe" "$tmp/probe.c" 2>/dev/null ||
	skip_all "$cc cannot link libFuzzer (Debian: apt-get install libclang-rt-14-dev)" "$n"
[ -f /usr/include/jansson.h ] || skip_all "jansson.h not found (Debian: apt-get install libjansson-dev)" "$n"

make -s --no-print-directory fuzz-build >"$tmp/build" 2>&1
ok $? "make fuzz-build"
[ -s "$tmp/build" ] && diag "$(grep -v '^  ' "$tmp/build" | head -5)"

# clean LABEL CMD...: CMD exits 0 and reports nothing; diag of what it did.
clean() {
	local label=$1
	shift
	"$@" >"$tmp/log" 2>&1
	local rc=$? reports
	reports=$(grep -cE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error:|property broken' "$tmp/log")
	ok "$([ "$rc" -eq 0 ] && [ "$reports" -eq 0 ]; echo $?)" "$label (exit $rc, $reports reports)"
	grep -E 'property broken|SUMMARY|runtime error|stat::number_of_executed_units' "$tmp/log" | head -3 |
		while IFS= read -r l; do diag "$l"; done
}

for t in "${targets[@]}"; do
	bin=build/fuzz/$t
	inputs=(fuzz/corpus/"$t"/*)
	[ -d "fuzz/regressions/$t" ] && inputs+=(fuzz/regressions/"$t"/*)
	clean "$t: ${#inputs[@]} seed and regression inputs" "$bin" "${inputs[@]}"
	rm -rf "$tmp/work"
	mkdir "$tmp/work"
	cp fuzz/corpus/"$t"/* "$tmp/work"/
	clean "$t: 3000 inputs from seed 1" "$bin" -runs=3000 -seed=1 -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$tmp/" "$tmp/work"
done
done_testing
