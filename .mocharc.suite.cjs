// `npm test`: every test file, in parallel, the longest first. Mocha hands the files to its workers
// in the order given, and a run lasts at least as long as its longest file: a one-minute file
// started last would end a minute after the rest. The list below comes from per-file timings (each
// file alone, and the sum of its tests' times in a whole run, halved: that run's machine was twice
// as loaded), every file of 4 s or more; a file not in it runs after them, in path order (a stale
// name here only changes the order). `scripts/test-times.sh` measures them again. Every file that
// takes more than a few seconds belongs here: the files left out of an older list (the MCP stdio
// handshake, the CLI's call, start and signals, the scaffolder, the schema files) were the last to
// end. The walks that pack the packages and install them with npm are not here: they are
// `*.e2e.ts`, run by `npm run test:e2e` (.mocharc.e2e.cjs).
// Four workers on two cores: the long files mostly wait (on child processes, sleeps and timeouts
// that must fire). With three, a run used 62% of the two cores (243 s of CPU in 196 s): a run that
// logged each file's CPU (its own and its children's) had its files' walls sum to 603 s against
// 222 s of CPU, and three workers share that out at ~200 s whatever the order. On Dec 3 a fourth
// pushed tests with a time budget of their own (a load timeout, a regex budget) past it on a busy
// machine; on Dec 6, at 216 s of CPU, four passed all 1,227 tests in 144 s at load 1.3-5.5 (three:
// 196-210 s, load up to 5.4). `npm test -- --jobs N` overrides.
// `npx mocha FILE` still reads .mocharc.json alone: one file, serial.
const { readdirSync } = require('node:fs');
const { join, relative } = require('node:path');

const LONGEST_FIRST = [
  'test/runners/isolated-process-in-flight-2.test.ts',
  'test/runners/isolated-process-in-flight.test.ts',
  'test/mcp/stdio-start.test.ts',
  'test/runners/isolated-worker-in-flight-2.test.ts',
  'test/cli/call.test.ts',
  'test/plugins/shell/bash.test.ts',
  'test/reload.test.ts',
  'test/runners/isolated-cancel.test.ts',
  'test/plugins/http/http-get.test.ts',
  'test/plugins/shell/sandbox.test.ts',
  'test/mcp/serve.test.ts',
  'test/runners/isolated-worker-faults.test.ts',
  'test/runners/isolated-worker-in-flight.test.ts',
  'test/runners/mcp-client.test.ts',
  'test/runners/isolated-process-faults.test.ts',
  'test/runners/watchdog.test.ts',
  'test/cli/watch.test.ts',
  'test/cli/start.test.ts',
  'test/cli/signals.test.ts',
  'test/runners/isolated.test.ts',
  'test/plugins/fs/search.test.ts',
  'test/cli/serve.test.ts',
  'test/scaffold/create.test.ts',
  'test/cli/repl-commands.test.ts',
  'test/cli/repl.test.ts',
  'test/dispatch.test.ts',
  'test/runners/import-plugin.test.ts',
  'test/schema-validator.test.ts',
  'test/schema-patterns.test.ts',
  'test/runners/questions.test.ts',
  'test/agent/agent.test.ts',
  'test/mcp/sessions.test.ts',
  'test/mcp/shutdown.test.ts',
  'test/watch.test.ts',
  'test/mcp/elicitation.test.ts',
  'test/mcp/startup.test.ts',
  'test/cli/add.test.ts',
  'test/tracing.test.ts',
  'test/mcp/handshake.test.ts',
  'test/mcp/in-flight.test.ts',
  'test/mcp/probes.test.ts',
  'test/agent/providers/anthropic.test.ts',
  'test/runners/isolated-messages.test.ts',
  'test/config.test.ts',
  'test/plugins/fs/confine.test.ts',
  'test/package.test.ts',
  'test/host-background.test.ts',
  'test/runners/call-log.test.ts',
  'test/policy-approval.test.ts',
  'test/policy-cases.test.ts',
  'test/dispatch-data.test.ts',
  'test/property/check.test.ts',
  'test/plugins/fs/host.test.ts',
  'test/agent/providers/responses.test.ts',
  'test/policy-callers.test.ts',
  'test/schema-recursion.test.ts',
  'test/plugins/fs/read.test.ts',
  'test/policy.test.ts',
  'test/runners/rich-results.test.ts',
  'test/mcp/shapes.test.ts',
  'test/dispatch-authorize.test.ts',
  'test/cli/tools.test.ts',
  'test/mcp/rich.test.ts',
  'test/agent/providers/openai.test.ts',
  'test/agent/embed-example.test.ts',
  'test/shared-validators.test.ts',
  'test/property/policy.test.ts',
  'test/loader.test.ts',
  'test/plugins/fs/write-edit.test.ts',
  'test/registry.test.ts',
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
  jobs: 4,
  spec: testFiles(join(__dirname, 'test')).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)),
};
