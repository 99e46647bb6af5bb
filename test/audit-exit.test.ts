import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, nodeWithSource, ROOT, tempDir } from './helpers.ts';

describe('audit trail at exit', () => {
  it('keeps the records of a batch not yet written when the process exits without close()', () => {
    const t = tempDir();
    try {
      const audit = join(t.dir, 'audit.jsonl');
      // The built package (test/setup.ts builds it from the current source), run by plain node: through
      // tsx the child would compile the whole core from source first, about 2 s of CPU.
      const script = t.write(
        'exit-early.mjs',
        `import { createHost } from ${JSON.stringify(join(ROOT, 'dist', 'index.js'))};
         const host = await createHost({ cwd: ${JSON.stringify(t.dir)}, audit: ${JSON.stringify(audit)}, logLevel: 'error',
           config: { builtins: false, plugins: [{ module: ${JSON.stringify(join(FIXTURES, 'plugins', 'echo.ts'))}, isolation: 'inline' }] } });
         await host.call('echo', '{"text":"last words"}');
         process.exit(3); // inside the batch window, no close()`,
      );
      let code = 0;
      try {
        execFileSync(process.execPath, [script], { cwd: ROOT, stdio: 'pipe' });
      } catch (error) {
        code = (error as { status: number }).status;
      }
      expect(code).to.equal(3);
      const records = readFileSync(audit, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(records.map((r) => r.event)).to.deep.equal(['decision', 'call']);
      expect(records[1]).to.include({ tool: 'echo', outcome: 'ok' });
    } finally {
      t.cleanup();
    }
  });

  it('at exit, writes every pending record once and in order, and no empty line when none could be written', () => {
    const t = tempDir();
    try {
      const audit = join(t.dir, 'audit.jsonl');
      const run = (body: string) => {
        const script = nodeWithSource(
          'core/audit.ts',
          `const sink = $.createAuditSink(${JSON.stringify(audit)});
           ${body}
           process.exit(0);`,
        );
        execFileSync(process.execPath, script, { cwd: ROOT, stdio: 'pipe' });
      };
      run(`for (let i = 0; i < 600; i++) sink.write({ event: 'call', n: i });`); // two full blocks, then the rest at exit
      run(`sink.write({ event: 'call', n: 1n });`); // cannot be serialised: nothing to write
      const text = readFileSync(audit, 'utf8');
      expect(text.endsWith('\n')).to.equal(true);
      const lines = text.slice(0, -1).split('\n');
      expect(lines.map((line) => (JSON.parse(line) as { n: number }).n)).to.deep.equal(
        Array.from({ length: 600 }, (_, i) => i),
      );
    } finally {
      t.cleanup();
    }
  });
});
