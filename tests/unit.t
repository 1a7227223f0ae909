#!/usr/bin/env bash
# unit.t: histogram and JSON writer unit tests, and the JSON writer's
# escaping checked by a real parser (Python's json module).
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
unit=build/test-unit
[ -x "$unit" ] || { echo "1..0 # SKIP $unit not built (make check builds it)"; exit 0; }

# The C tests print their own plan; renumber them into this file's stream.
n=0 failed=0
while IFS= read -r line; do
	case "$line" in
	"ok "*) n=$((n + 1)); echo "ok $n ${line#ok [0-9]* }" ;;
	"not ok "*) n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n ${line#not ok [0-9]* }" ;;
	esac
done < <("$unit")

n=$((n + 1))
if "$unit" json | python3 -c '
import json, sys
doc = json.load(sys.stdin)
keys = [next(iter(d)) for d in doc]
want = ["plain", "quote \" backslash \\ slash /", "tab\tnewline\ncr\rbell\a", "\x01\x1f\x7f",
        "utf-8 \u00e9\u20ac\U0001f550", "bad utf-8 \ufffd\ufffd \ufffd end", "truncated \ufffd\ufffd", ""]
assert keys == want, (keys, want)
assert all(d[k] == k for d, k in zip(doc, keys))
'; then
	echo "ok $n - hostile strings (quotes, control bytes, UTF-8, invalid UTF-8) survive a real JSON parser"
else
	failed=$((failed + 1))
	echo "not ok $n - hostile strings survive a real JSON parser"
fi
echo "1..$n"
[ "$failed" -eq 0 ]
