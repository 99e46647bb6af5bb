// `npm test`: every test file, in parallel, the longest first. Mocha hands the files to its workers
// in the order given, and a run lasts at least as long as its longest file: a one-minute file
// started last would end a minute after the rest. The list below is every file of 2 s or more, by
// its wall in two whole parallel runs (Dec 6, `scripts/test-cpu.sh`, which logs each file's wall and
// CPU); a file not in it runs after them, in path order (a stale name here only changes the order).
// The stripped-cache file, left out of the older list, started last and ended 14 s after the rest.
// The walks that pack the packages and install them with npm are not here: they are
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

// The suite reaches nothing beyond loopback, yet every Node process started with NODE_EXTRA_CA_CERTS
// reads and parses the certificates it names before it runs a line: where that names the system
// bundle (this machine's CI does), `node -e 0` takes 0.14 s of CPU instead of 0.07, a CLI `call`
// 0.29 s instead of 0.26, and a run starts a few hundred of them. Set aside here, before mocha
// starts its workers: they and everything they start go without, but for the one step that may
// reach a registry, installing node@22 (scripts/node22.ts).
if (process.env.NODE_EXTRA_CA_CERTS) {
  process.env.RH_EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
  delete process.env.NODE_EXTRA_CA_CERTS;
}

const LONGEST_FIRST = [
  'test/runners/isolated-worker-in-flight-2.test.ts',
  'test/runners/isolated-process-in-flight-2.test.ts',
  'test/runners/isolated-cancel.test.ts',
  'test/runners/isolated-worker-in-flight.test.ts',
  'test/runners/isolated-process-in-flight.test.ts',
  'test/runners/watchdog.test.ts',
  'test/cli/repl.test.ts',
  'test/cli/serve.test.ts',
  'test/runners/stripped-cache.test.ts',
  'test/mcp/serve.test.ts',
  'test/plugins/shell/sandbox.test.ts',
  'test/runners/mcp-client.test.ts',
  'test/runners/isolated-process-faults.test.ts',
  'test/plugins/fs/search.test.ts',
  'test/package.test.ts',
  'test/runners/isolated-worker-faults.test.ts',
  'test/plugins/shell/bash.test.ts',
  'test/cli/repl-commands.test.ts',
  'test/dispatch.test.ts',
  'test/cli/start.test.ts',
  'test/mcp/stdio-start.test.ts',
  'test/reload.test.ts',
  'test/plugins/http/http-get.test.ts',
  'test/runners/isolated.test.ts',
  'test/schema-validator.test.ts',
  'test/runners/import-plugin.test.ts',
  'test/scaffold/create.test.ts',
  'test/mcp/startup.test.ts',
  'test/cli/signals.test.ts',
  'test/cli/watch.test.ts',
  'test/runners/questions.test.ts',
  'test/agent/providers/responses.test.ts',
  'test/cli/add.test.ts',
  'test/schema-patterns.test.ts',
  'test/mcp/rich.test.ts',
  'test/mcp/sessions.test.ts',
  'test/agent/providers/openai.test.ts',
  'test/agent/embed-example.test.ts',
  'test/mcp/shapes.test.ts',
  'test/cli/cli.test.ts',
  'test/cli/call.test.ts',
  'test/property/policy.test.ts',
  'test/cli/check.test.ts',
  'test/config.test.ts',
  'test/check.test.ts',
  'test/property/check.test.ts',
  'test/mcp/handshake.test.ts',
  'test/plugins/fs/read.test.ts',
  'test/dispatch-authorize.test.ts',
  'test/agent/providers/anthropic.test.ts',
  'test/cli/otel.test.ts',
  'test/deadlines.test.ts',
  'test/runners/isolated-messages.test.ts',
  'test/cli/tools.test.ts',
  'test/cli/repl-elicit.test.ts',
  'test/dispatch-data.test.ts',
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
