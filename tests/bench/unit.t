#!/usr/bin/env bash
# tier: fast
# unit.t: histogram and JSON writer unit tests (their exit status and plan
# enforced), and the JSON writer's escaping checked by a real parser
# (Python's json module).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
unit=build/test-unit
[ -x "$unit" ] || skip_all "$unit not built (make check builds it)"

tap_pass "$unit"

"$unit" json | python3 -c '
import json, sys
doc = json.load(sys.stdin)
keys = [next(iter(d)) for d in doc]
want = ["plain", "quote \" backslash \\ slash /", "tab\tnewline\ncr\rbell\a", "\x01\x1f\x7f",
        "utf-8 \u00e9\u20ac\U0001f550", "bad utf-8 \ufffd\ufffd \ufffd end", "truncated \ufffd\ufffd", ""]
assert keys == want, (keys, want)
assert all(d[k] == k for d, k in zip(doc, keys))
'
ok $? "hostile strings (quotes, control bytes, UTF-8, invalid UTF-8) survive a real JSON parser"
done_testing
