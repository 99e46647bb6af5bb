#!/usr/bin/env bash
# `npm test` with every process's CPU logged (scripts/test-cpu/): the run's wall and CPU, then its
# CPU by test file (the file's own, in its mocha worker, and its child processes'), by kind of
# child process (the CLI's commands, process-isolated plugins, MCP fixture servers…), and the
# plugin worker threads each file started. One parallel run, where test-times.sh runs each file
# alone: a few minutes of the whole machine. `scripts/test-cpu.sh [MOCHA OPTION…]` (e.g. `--jobs 3`;
# a file named here runs besides the suite, not alone); TEST_CPU_LOG=FILE keeps the log.
set -euo pipefail
cd "$(dirname "$0")/.."
log=${TEST_CPU_LOG:-$(mktemp)}
[ -z "${TEST_CPU_LOG:-}" ] && trap 'rm -f "$log"' EXIT
: >"$log"
TEST_CPU_LOG=$log NODE_OPTIONS="--import $PWD/scripts/test-cpu/preload.mjs ${NODE_OPTIONS:-}" \
  /usr/bin/time -f '%e s wall, %U s user + %S s sys' \
  ./node_modules/.bin/mocha --config scripts/test-cpu/config.cjs --reporter dot "$@"
node scripts/test-cpu/report.mjs "$log"
