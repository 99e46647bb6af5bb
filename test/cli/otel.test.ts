// The CLI's OpenTelemetry start-up from OTEL_*: when it applies, the SDK found in the project, and
// the warning when there is none; and the spans of an SDK registered with --import, flushed at exit.
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OTEL_SDK_PACKAGE, startTracingFromEnv, tracesWanted } from '../../core/cli/otel.ts';
import { FIXTURES, runCliProcess, tempDir } from '../helpers.ts';

describe('CLI tracing from OTEL_*', () => {
  it('wants traces when an exporter or an OTLP endpoint is named, unless the SDK is disabled or the exporter is none', () => {
    expect(tracesWanted({})).to.equal(false);
    expect(tracesWanted({ OTEL_TRACES_EXPORTER: 'otlp' })).to.equal(true);
    expect(
      tracesWanted({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }),
    ).to.equal(false);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).to.equal(true);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).to.equal(true);
    expect(tracesWanted({ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp' })).to.equal(false);
  });

  it('starts nothing and says nothing when OTEL_* does not ask for traces', async () => {
    const warnings: string[] = [];
    expect(await startTracingFromEnv(process.cwd(), (m) => warnings.push(m), {})).to.equal(undefined);
    expect(warnings).to.deep.equal([]);
  });

  it('warns, naming the package and the --import way, when the SDK is installed neither in the project nor beside the host', async () => {
    const tmp = tempDir('rh-otel-none-');
    try {
      const warnings: string[] = [];
      const end = await startTracingFromEnv(tmp.dir, (m) => warnings.push(m), { OTEL_TRACES_EXPORTER: 'otlp' });
      expect(end).to.equal(undefined);
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.include(`npm install ${OTEL_SDK_PACKAGE}`).and.include('--import');
    } finally {
      tmp.cleanup();
    }
  });

  it("starts the project's SDK with the host's service name, and the returned function shuts it down", async () => {
    const tmp = tempDir('rh-otel-sdk-');
    const record = '__rousseauOtelTest';
    tmp.write('package.json', '{"name":"project","private":true}');
    tmp.write(
      `node_modules/${OTEL_SDK_PACKAGE}/package.json`,
      JSON.stringify({ name: OTEL_SDK_PACKAGE, version: '0.0.0', main: 'index.cjs' }),
    );
    // A stand-in with the SDK's shape: it records what the host does with it.
    tmp.write(
      `node_modules/${OTEL_SDK_PACKAGE}/index.cjs`,
      `const seen = (globalThis.${record} = []);
exports.NodeSDK = class { constructor(config) { seen.push(['new', config]); } start() { seen.push(['start']); } async shutdown() { seen.push(['shutdown']); } };`,
    );
    const g = globalThis as Record<string, unknown>;
    try {
      const warnings: string[] = [];
      const end = await startTracingFromEnv(tmp.dir, (m) => warnings.push(m), { OTEL_TRACES_EXPORTER: 'console' });
      expect(warnings).to.deep.equal([]);
      expect(end).to.be.a('function');
      expect(g[record]).to.deep.equal([['new', { serviceName: 'rousseau-host' }], ['start']]);
      await end!();
      expect(g[record]).to.deep.equal([['new', { serviceName: 'rousseau-host' }], ['start'], ['shutdown']]);
    } finally {
      delete g[record];
      tmp.cleanup();
    }
  });

  it('exports the spans an SDK registered with --import still holds before the command exits', async function () {
    this.timeout(30_000);
    const tmp = tempDir('rh-otel-import-');
    try {
      tmp.write('package.json', '{"name":"project","private":true}');
      tmp.write(
        'rousseau.config.json',
        JSON.stringify({ builtins: false, plugins: [join(FIXTURES, 'plugins', 'echo.ts')], log: { audit: false } }),
      );
      const spans = join(tmp.dir, 'spans.jsonl');
      const r = await runCliProcess(['call', 'echo', '{"text":"traced"}'], {
        cwd: tmp.dir,
        // The SDK batches for a minute: only a flush at the end of the command gets the span out.
        env: { NODE_OPTIONS: `--import ${join(FIXTURES, 'otel', 'batching-sdk.mjs')}`, RH_TEST_SPANS: spans },
      });
      expect(r.code, r.stderr).to.equal(0);
      expect(existsSync(spans) ? readFileSync(spans, 'utf8') : '').to.equal('"execute_tool echo"\n');
    } finally {
      tmp.cleanup();
    }
  });

  it('loads no @opentelemetry/api for a command run without an SDK (it costs every start)', async function () {
    this.timeout(30_000);
    const tmp = tempDir('rh-otel-unused-');
    try {
      tmp.write('package.json', '{"name":"project","private":true}');
      tmp.write(
        'rousseau.config.json',
        JSON.stringify({ builtins: false, plugins: [join(FIXTURES, 'plugins', 'echo.ts')], log: { audit: false } }),
      );
      // NODE_DEBUG=module: Node names every CommonJS module it loads on stderr (the API is CommonJS).
      const r = await runCliProcess(['call', 'echo', '{"text":"untraced"}'], {
        cwd: tmp.dir,
        env: { NODE_DEBUG: 'module' },
      });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.include('cosmiconfig'); // the trace names the CommonJS modules loaded
      expect(r.stderr).not.to.include('@opentelemetry');
    } finally {
      tmp.cleanup();
    }
  });
});
