// `npm test`: every test file, in parallel, the longest first. Mocha hands the files to its workers
// in the order given, and a run lasts at least as long as its longest file: a one-minute file
// started last would end a minute after the rest. The list below comes from per-file timings (each
// file alone, and each file's share of a whole run, wall time); a file not in it runs after them, in
// path order (a stale name here only changes the order). Every file that takes more than a few
// seconds belongs here: the files left out of an older list (the CLI's call, start and signals, the
// scaffolder, the schema files) were the last to end. The walks that pack the packages and install them with npm are not here: they
// are `*.e2e.ts`, run by `npm run test:e2e` (.mocharc.e2e.cjs).
// Three workers on two cores: the long files mostly wait (on child processes, sleeps and timeouts
// that must fire), and a third worker fills that time; a fourth, on a busy machine, pushed tests with a
// time budget of their own (a load timeout, a regex budget) past it. `npm test -- --jobs N` overrides.
// `npx mocha FILE` still reads .mocharc.json alone: one file, serial.
const { readdirSync } = require('node:fs');
const { join, relative } = require('node:path');

const LONGEST_FIRST = [
  'test/runners/isolated-process-in-flight-2.test.ts',
  'test/runners/isolated-worker-in-flight-2.test.ts',
  'test/mcp/serve.test.ts',
  'test/runners/watchdog.test.ts',
  'test/reload.test.ts',
  'test/runners/mcp-client.test.ts',
  'test/cli/watch.test.ts',
  'test/cli/call.test.ts',
  'test/cli/serve.test.ts',
  'test/plugins/http/http-get.test.ts',
  'test/runners/isolated-process-faults.test.ts',
  'test/plugins/shell/bash.test.ts',
  'test/runners/isolated-cancel.test.ts',
  'test/plugins/shell/sandbox.test.ts',
  'test/runners/isolated-process-in-flight.test.ts',
  'test/runners/isolated-worker-in-flight.test.ts',
  'test/cli/repl.test.ts',
  'test/cli/repl-commands.test.ts',
  'test/runners/isolated-worker-faults.test.ts',
  'test/cli/start.test.ts',
  'test/scaffold/create.test.ts',
  'test/plugins/fs/search.test.ts',
  'test/dispatch.test.ts',
  'test/schema-patterns.test.ts',
  'test/package.test.ts',
  'test/cli/signals.test.ts',
  'test/runners/import-plugin.test.ts',
  'test/schema-validator.test.ts',
  'test/mcp/startup.test.ts',
  'test/plugins/fs/read.test.ts',
  'test/plugins/fs/host.test.ts',
  'test/runners/isolated.test.ts',
  'test/check.test.ts',
  'test/config.test.ts',
  'test/agent/embed-example.test.ts',
  'test/audit-exit.test.ts',
  'test/cli/cli.test.ts',
  'test/mcp/shutdown.test.ts',
  'test/mcp/annotations.test.ts',
  'test/runners/questions.test.ts',
  'test/mcp/tools-call-params.test.ts',
  'test/mcp/sessions.test.ts',
  'test/cli/check.test.ts',
  'test/agent/providers/responses.test.ts',
  'test/cli/otel.test.ts',
  'test/output.test.ts',
  'test/plugins/http/address-policy.test.ts',
  'test/plugins/fs/write-edit.test.ts',
  'test/dispatch-data.test.ts',
  'test/cli/repl-elicit.test.ts',
  'test/property/check.test.ts',
  'test/cli/tools.test.ts',
  'test/property/policy.test.ts',
  'test/deadlines.test.ts',
];

/** Every `*.test.ts` under `dir` (fixtures hold none), as paths relative to the repo. */
function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(__dirname, path)] : [];
  });
}

const rank = (file) => {
  const at = LONGEST_FIRST.indexOf(file);
  return at === -1 ? LONGEST_FIRST.length : at;
};

module.exports = {
  ...require('./.mocharc.json'),
  parallel: true,
  jobs: 3,
  spec: testFiles(join(__dirname, 'test')).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)),
};
