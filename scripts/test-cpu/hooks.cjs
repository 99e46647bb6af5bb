// Root hooks of a `scripts/test-cpu.sh` run: each test file's own CPU in its mocha worker (its
// worker threads included: they share the process), and its name for what preload.mjs logs.
const { appendFileSync } = require('node:fs');

let file;
let start;
let began;
exports.mochaHooks = {
  beforeAll() {
    // In parallel mode each file is a root suite of its own, run by one worker at a time.
    file = (this.test?.parent?.suites?.[0]?.file ?? '?').replace(/.*?\/test\//, 'test/');
    globalThis.__testCpuFile = file;
    start = process.cpuUsage();
    began = performance.now();
  },
  afterAll() {
    const { user, system } = process.cpuUsage(start);
    appendFileSync(
      process.env.TEST_CPU_LOG,
      `${JSON.stringify({ rec: 'file', file, cpu: (user + system) / 1e6, wall: (performance.now() - began) / 1e3, pid: process.pid, at: Date.now() / 1e3 })}\n`,
    );
  },
};
