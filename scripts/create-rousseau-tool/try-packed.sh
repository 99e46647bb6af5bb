#!/usr/bin/env bash
# The scaffolder as someone outside this repo gets it before anything is published: pack the host
# and create-rousseau-tool, scaffold from the tarball with npx in a fresh project, install, run the
# new plugin's tests, add it to a config and call its tool. Prints how long it took from the
# scaffold to a passing `npm test` (the number docs/plugins.md reports).
#
#   bash scripts/create-rousseau-tool/try-packed.sh          # KEEP=1 keeps the work directory
#
# Installs use the npm cache first (--prefer-offline); only packages missing from it are fetched.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/rousseau-packed.XXXXXX")"
[[ "${KEEP:-}" == 1 ]] || trap 'rm -rf "$work"' EXIT
step() { printf '\n== %s\n' "$*" >&2; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

step "pack rousseau-host and create-rousseau-tool into $work"
host_tgz="$work/$(cd "$repo" && npm pack --silent --pack-destination "$work" | tail -n 1)"
create_tgz="$work/$(cd "$repo/scripts/create-rousseau-tool" && npm pack --silent --pack-destination "$work" | tail -n 1)"

mkdir "$work/project" && cd "$work/project"
printf '{ "name": "my-agent", "private": true, "type": "module" }\n' > package.json
printf "export default { builtins: false, plugins: [] };\n" > rousseau.config.ts

t0=$(now)
step "npx --package=$(basename "$create_tgz") create-rousseau-tool my-tool --yes"
npx --yes --package="$create_tgz" create-rousseau-tool my-tool --yes
t1=$(now)
cd my-tool
# rousseau-host is not on the registry yet: install it from its tarball (this also installs the rest).
step "npm install --save-dev $(basename "$host_tgz")"
npm install --prefer-offline --no-audit --no-fund --save-dev "$host_tgz"
t2=$(now)
step "npm test"
npm test
t3=$(now)

cd "$work/project"
step "add ./my-tool to rousseau.config.ts and call its tool"
sed -i "s|plugins: \[\]|plugins: ['./my-tool']|" rousseau.config.ts
./my-tool/node_modules/.bin/rousseau-host call count_words '{"text":"to be or not to be"}' --yes

printf '\ncreate-rousseau-tool → passing npm test: %s s (scaffold %s s, install %s s, test %s s; load average %s)\n' \
  "$(secs "$t0" "$t3")" "$(secs "$t0" "$t1")" "$(secs "$t1" "$t2")" "$(secs "$t2" "$t3")" "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
