// Schemas from plugins and MCP servers: every regex in them runs in the linear engine or the plugin
// is refused at load, naming the pattern. Real hosts, a real worker plugin, a real MCP server.
import { expect } from 'chai';
import { join } from 'node:path';
import { createHost, type Host } from '../core/host.ts';
import type { HostConfig } from '../core/config-schema.ts';
import { compileLinear, linearSchema } from '../core/schema-patterns.ts';
import { FIXTURES, tempDir, timerLateness } from './helpers.ts';

const SCHEMA_SERVER = join(FIXTURES, 'mcp', 'schema-server.mjs');
const BOMB = '^(a+)+$';

function hostWith(plugins: unknown[]): Promise<Host> {
  return createHost({
    cwd: FIXTURES,
    audit: false,
    logLevel: 'error',
    config: { builtins: false, policy: { default: 'allow' }, plugins: plugins as HostConfig['plugins'] },
  });
}

const problemsOf = (schema: unknown) => {
  const found: string[] = [];
  linearSchema(schema, '/inputSchema', (pointer) => found.push(pointer));
  return found;
};

describe('core/schema-patterns', function () {
  this.timeout(20_000);

  it('validates pattern, including counted repeats past the engine limit, as the u flag would', () => {
    const v = compileLinear({
      type: 'object',
      properties: { id: { type: 'string', pattern: '^[a-z]{2,20}$' }, bomb: { type: 'string', pattern: BOMB } },
    });
    expect(
      [{ id: 'ab' }, { id: 'a'.repeat(20) }, { id: 'a' }, { id: 'a'.repeat(21) }, { bomb: 'aaa' }, { bomb: 'aab' }].map(
        (i) => v.Check(i),
      ),
    ).to.deep.equal([true, true, false, false, true, false]);
    // The error names the pattern the schema wrote, not the one written out for the engine.
    expect(v.errors({ id: 'A' })?.map((e) => e.message)).to.deep.equal(['must match pattern "^[a-z]{2,20}$"']);
  });

  it('keeps patternProperties and additionalProperties beside them, with $ref into $defs', () => {
    const v = compileLinear({
      type: 'object',
      properties: { name: { type: 'string' } },
      patternProperties: { '^n_(a+)+$': { $ref: '#/$defs/N' } },
      additionalProperties: false,
      $defs: { N: { type: 'number' } },
    });
    expect(v.Check({ name: 'x', n_aa: 1 })).to.equal(true);
    expect(v.Check({ n_aa: 'one' })).to.equal(false);
    expect(v.Check({ other: 1 })).to.equal(false);
    expect(v.Check({ [`n_${'a'.repeat(40)}!`]: 1 })).to.equal(false);
    expect(v.errors({ n_a: 'one' })?.map((e) => e.message)).to.deep.equal([
      '"n_a" (a key matching "^n_(a+)+$"): must be number',
    ]);
    expect(v.errors({ other: 1 })?.map((e) => e.message)).to.deep.equal(['unknown key "other"']);
  });

  it('reports each regex that cannot run linear at its pointer, wherever it sits in the schema', () => {
    expect(
      problemsOf({
        type: 'object',
        properties: { a: { type: 'string', pattern: '(a)\\1' }, b: { type: 'string', pattern: '^(a+)+$' } },
        $defs: { d: { not: { pattern: '(?=x)' } } },
        anyOf: [{ propertyNames: { pattern: '\\p{L}' } }],
        patternProperties: { '\\k<x>(?<x>a)': {} },
        items: { pattern: 7 },
      }),
    ).to.deep.equal([
      '/inputSchema/properties/a/pattern',
      '/inputSchema/$defs/d/not/pattern',
      '/inputSchema/anyOf/0/propertyNames/pattern',
      '/inputSchema/items/pattern',
      '/inputSchema/patternProperties/\\k<x>(?<x>a)',
    ]);
    // Data is not a schema: a `pattern` key inside const, default or enum is left alone.
    expect(problemsOf({ type: 'object', const: { pattern: '(a)\\1' }, default: { pattern: 1 } })).to.deep.equal([]);
  });

  it('a pattern that is linear but large cannot hold the host thread either: a text past its budget is refused unmatched, saying why', async () => {
    const tmp = tempDir();
    const wide = '(?:a{1,16}){1,40}b'; // 4,160 characters once written out: 100 KB took 16 s in the linear engine
    const file = tmp.write(
      'wide.mjs',
      `export default { name: 'wide', version: '1.0.0', tools: [
        { name: 'wide', description: 'Takes a string.', inputSchema: { type: 'object', properties: { s: { type: 'string', description: 'S.', pattern: '${wide}' } }, required: ['s'] }, execute: ({ s }) => String(s.length) },
      ] };`,
    );
    const host = await hostWith([{ module: file, isolation: 'worker' }]);
    try {
      expect(host.plugins()[0]!.status, host.plugins()[0]!.error?.message).to.equal('loaded');
      let result: Awaited<ReturnType<Host['call']>> | undefined;
      const late = await timerLateness(async () => (result = await host.call('wide', { s: 'a'.repeat(100_000) })));
      expect(result).to.include({ isError: true, code: 'invalid_input' });
      expect(result!.content).to.match(
        /\/s: is 100000 characters long: too long to be matched against the pattern \(\?:a\{1,16\}\)\{1,40\}b in bounded time \(at most \d+\)/,
      );
      expect(late).to.be.below(1000);
      expect((await host.call('wide', { s: 'aab' })).content).to.equal('3');
    } finally {
      await host.close();
      tmp.cleanup();
    }
  });

  it(`a worker plugin's pattern ${BOMB} does not hold the host thread: a timer fires on time, another call completes`, async () => {
    const tmp = tempDir();
    const file = tmp.write(
      'bomb.mjs',
      `export default { name: 'bomb', version: '1.0.0', tools: [
        { name: 'match', description: 'Takes a string.', inputSchema: { type: 'object', properties: { s: { type: 'string', description: 'S.', pattern: '${BOMB}' } }, required: ['s'] }, execute: ({ s }) => s },
        { name: 'ping', description: 'Answers pong.', inputSchema: { type: 'object', properties: {} }, execute: () => 'pong' },
      ] };`,
    );
    const host = await hostWith([{ module: file, isolation: 'worker' }]);
    try {
      expect(host.plugins()[0]!.status, host.plugins()[0]!.error?.message).to.equal('loaded');
      // With the u flag, 26 characters backtracked for seconds on the host thread (twice: check, then errors); 40, for days.
      for (const length of [26, 40]) {
        let result: Awaited<ReturnType<Host['call']>> | undefined;
        const late = await timerLateness(
          async () => (result = await host.call('match', { s: `${'a'.repeat(length)}!` })),
        );
        expect(result!.isError).to.equal(true);
        expect(result!.content).to.include(`must match pattern "${BOMB}"`);
        expect(late, `${length} characters`).to.be.below(1000);
      }
      const [bombed, ping] = await Promise.all([
        host.call('match', { s: `${'a'.repeat(40)}!` }),
        host.call('ping', {}),
      ]);
      expect(bombed.isError).to.equal(true);
      expect(ping.content).to.equal('pong');
      expect((await host.call('match', { s: 'aaa' })).content).to.equal('aaa');
    } finally {
      await host.close();
      tmp.cleanup();
    }
  });

  describe('MCP tool schemas', () => {
    const server = (name: string, inputSchema: unknown, outputSchema?: unknown) => ({
      name,
      mcp: {
        command: process.execPath,
        args: [SCHEMA_SERVER, ...[inputSchema, ...(outputSchema ? [outputSchema] : [])].map((s) => JSON.stringify(s))],
      },
    });
    const stringWith = (pattern: string) => ({
      type: 'object',
      properties: { s: { type: 'string', description: 'S.', pattern } },
    });

    it('refuses a server whose schema has a backreference, naming the pointer', async () => {
      const host = await hostWith([server('backref', stringWith('^(a)\\1$'))]);
      try {
        const [status] = host.plugins();
        expect(status!.status).to.equal('failed');
        expect(status!.error!.code).to.equal('RH_ERR_PLUGIN_CONTRACT');
        expect(status!.error!.message).to.include(
          'at /tools/0/inputSchema/properties/s/pattern: pattern /^(a)\\1$/ uses a backreference',
        );
      } finally {
        await host.close();
      }
    });

    it('refuses a server whose schemas fan out through $refs or loop on one value, naming the pointer', async () => {
      const $defs: Record<string, unknown> = { d30: { type: 'string' } };
      for (let i = 0; i < 30; i++)
        $defs[`d${i}`] = { oneOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
      const fan = { type: 'object', properties: { s: { $ref: '#/$defs/d0' } }, $defs };
      const loop = {
        type: 'object',
        properties: { s: { $ref: '#/$defs/x' } },
        $defs: { x: { allOf: [{ $ref: '#/$defs/x' }] } },
      };
      // Over the wire, as input and as output schema: the output one reaches the SDK's validator first.
      const host = await hostWith([server('fan', fan), server('loop', stringWith('^a$'), loop)]);
      try {
        const [fanned, looped] = host.plugins();
        expect(fanned!.error?.code).to.equal('RH_ERR_PLUGIN_CONTRACT');
        expect(fanned!.error!.message).to.include('at /tools/0/inputSchema/$defs/d16: the schema applies one schema');
        expect(looped!.error?.code).to.equal('RH_ERR_PLUGIN_CONTRACT');
        expect(looped!.error!.message).to.include(
          'at /tools/0/outputSchema/$defs/x/allOf/0: the schema refers back to itself',
        );
      } finally {
        await host.close();
      }
    });

    it(`validates a server's ${BOMB} in bounded time`, async () => {
      const host = await hostWith([server('bomb', stringWith(BOMB))]);
      try {
        let result: Awaited<ReturnType<Host['call']>> | undefined;
        const late = await timerLateness(
          async () => (result = await host.call('bomb_echo', { s: `${'a'.repeat(26)}!` })),
        );
        expect(result!.isError).to.equal(true);
        expect(late).to.be.below(1000);
        expect((await host.call('bomb_echo', { s: 'aa' })).content).to.equal('{"s":"aa"}');
      } finally {
        await host.close();
      }
    });

    it("checks a tool's structured output against the server's outputSchema in bounded time, and refuses one with a backreference", async () => {
      const host = await hostWith([
        server('out', { type: 'object' }, stringWith(BOMB)),
        server('outref', { type: 'object' }, stringWith('(a)\\1')),
      ]);
      try {
        const [out, outref] = host.plugins();
        expect(outref!.status).to.equal('failed');
        expect(outref!.error!.message).to.include(
          'outputSchema at /properties/s/pattern: pattern /(a)\\1/ uses a backreference',
        );
        expect(out!.status).to.equal('loaded');
        let result: Awaited<ReturnType<Host['call']>> | undefined;
        const late = await timerLateness(
          async () => (result = await host.call('out_echo', { s: `${'a'.repeat(26)}!` })),
        );
        expect(result!.isError).to.equal(true);
        expect(result!.content).to.include(`must match pattern "${BOMB}"`);
        expect(late).to.be.below(1000);
        expect((await host.call('out_echo', { s: 'aa' })).isError).to.equal(false);
      } finally {
        await host.close();
      }
    });
  });
});
