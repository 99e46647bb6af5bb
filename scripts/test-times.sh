#!/usr/bin/env bash
# Each test file run alone, the slowest first: wall and CPU seconds (user + sys, child processes
# included), for the order in .mocharc.suite.cjs and for finding what a file costs. One file at a
# time: minutes. `scripts/test-times.sh [FILE…]` (default: every test file).
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/build.js --if-stale >/dev/null
times=$(mktemp)
trap 'rm -f "$times"' EXIT
files=("$@")
[ ${#files[@]} -eq 0 ] && mapfile -t files < <(find test -name '*.test.ts' | sort)
for file in "${files[@]}"; do
  /usr/bin/time -f '%e %U %S' -o "$times" ./node_modules/.bin/mocha --reporter dot "$file" >/dev/null 2>&1 ||
    echo "failed: $file" >&2
  read -r wall user sys <"$times"
  echo "$file $wall $(echo "$user + $sys" | bc)"
done | sort -k2 -nr | awk 'BEGIN { print "file wall_s cpu_s" } { print }'
