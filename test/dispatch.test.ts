import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AuditEntry, type AuditRecord, lineHead } from '../core/audit-lines.ts';
import { NO_AUDIT } from '../core/audit.ts';
import { checkPlugin } from '../core/check.ts';
import { type DispatchEnv, decide, dispatch } from '../core/dispatch.ts';
import { RESULT_CODES } from '../core/errors.ts';
import { createHost, type Host } from '../core/index.ts';
import { Limiter } from '../core/limiter.ts';
import { List } from '../core/list.ts';
import { createLogger } from '../core/log.ts';
import { describePlugin, describeTool } from '../core/plugin-report.ts';
import { compilePolicy } from '../core/policy.ts';
import { Registry } from '../core/registry.ts';
import type { PluginRunner } from '../core/runners/runner.ts';
import { FIXTURES, quietHost, tempDir } from './helpers.ts';

const plugin = (name: string) => join(FIXTURES, 'plugins', name);

describe('call pipeline (inline)', () => {
  let host: Host;
  before(async () => {
    host = await createHost({
      cwd: FIXTURES,
      audit: false,
      logLevel: 'error',
      config: {
        builtins: false,
        plugins: [
          {
            module: plugin('kit.ts'),
            isolation: 'inline',
            loadTimeoutMs: 60_000, // a load slowed by a busy machine is not what this file tests
            options: { greeting: 'hi' },
            maxOutputBytes: 4096,
            maxConcurrency: 1,
            maxQueue: 1,
          },
          { module: plugin('echo.ts'), isolation: 'inline' },
        ],
        policy: { default: 'allow', deny: [{ tool: 'echo', match: '"text":"forbidden"', reason: 'not that word' }] },
      },
    });
  });
  after(() => host.close());

  it('runs a call and returns its text', async () => {
    const r = await host.call('greet', '{"who":"Ada","times":2}');
    expect(r).to.include({ isError: false, content: 'hi Ada\nhi Ada' });
    expect(r.code).to.equal(undefined);
    expect(r.durationMs).to.be.a('number');
  });

  it('applies schema defaults and validated plugin options', async () => {
    expect((await host.call('greet', '{"who":"Bo"}')).content).to.equal('hi Bo');
  });

  it('accepts an already-parsed object input', async () => {
    expect((await host.call('greet', { who: 'Cy' })).content).to.equal('hi Cy');
  });

  it('a generated callId is one prefix per process and a 12-hex-digit count, carried past every 65536 calls', async () => {
    const ids: string[] = [];
    const stop = host.onCallEnd((end) => ids.push(end.callId));
    try {
      // Calls until the last 4 digits wrap (at most 65536 + 1): the carry into the digits above them.
      do await host.call('echo', '{"text":"x"}');
      while (ids.length < 2 || !ids.at(-1)!.endsWith('0000'));
    } finally {
      stop();
    }
    expect(ids.length).to.be.at.most(65_537);
    const count = (id: string) => Number.parseInt(id.slice(24), 16);
    // Checked plainly, then asserted once: three chai assertions for each of up to 65,537 ids cost ~1.4 s of CPU.
    const misfits = ids.filter(
      (id, i) =>
        !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id) ||
        id.slice(0, 24) !== ids[0]!.slice(0, 24) ||
        (i > 0 && count(id) !== count(ids[i - 1]!) + 1),
    );
    expect(misfits, 'ids not of the form, of another prefix, or not one more than the one before').to.deep.equal([]);
  });

  it('unknown_tool names the tools that exist', async () => {
    const r = await host.call('gret', '{}');
    expect(r).to.include({ isError: true, code: 'unknown_tool' });
    expect(r.content).to.contain('"gret"').and.contain('greet');
  });

  it('invalid_json: malformed, duplicate keys, __proto__ and constructor keys', async () => {
    for (const [input, pattern] of [
      ['{"who":', /unexpected end/],
      ['{"who":"a","who":"b"}', /duplicate key "who"/],
      ['{"who":"a","__proto__":{"x":1}}', /"__proto__" is not allowed/],
      ['{"who":{"constructor":{}}}', /"constructor" is not allowed/],
      ['[1] 2', /unexpected text/],
    ] as const) {
      const r = await host.call('greet', input);
      expect(r.code, input).to.equal('invalid_json');
      expect(r.content).to.match(pattern);
    }
    const proto = JSON.parse('{"who":"a","__proto__":{"polluted":true}}');
    expect((await host.call('greet', proto)).code).to.equal('invalid_json');
  });

  it('invalid_input names each failing path so the model can retry', async () => {
    const r = await host.call('greet', '{"who":5,"times":0,"extra":true}');
    expect(r.code).to.equal('invalid_input');
    expect(r.content).to.contain('/who').and.contain('/times').and.contain('extra');
    expect(r.content).to.match(/call again/);
  });

  it('invalid_input names the declared key a misspelt one meant, in closed and open objects alike', async () => {
    const closed = await host.call('greet', '{"woh":"Ada"}');
    expect(closed.content).to.contain('- /woh: unknown key (did you mean "who"?)');
    // An open object takes any key: the misspelling is named beside the required key it left missing.
    const open = await host.call('ignore_signal', '{"mss":1}');
    expect(open.code).to.equal('invalid_input');
    expect(open.content).to.contain('- /: must have required properties ms');
    expect(open.content).to.contain('- /mss: `mss` is not a known key; did you mean `ms`?');
  });

  it("denied by a policy rule, with the rule's reason", async () => {
    const r = await host.call('echo', '{"text":"forbidden"}');
    expect(r).to.include({ isError: true, code: 'denied' });
    expect(r.content).to.contain('not that word');
    expect((await host.call('echo', '{"text":"fine"}')).content).to.equal('fine');
  });

  it('timeout: a tool that ignores its signal still yields timeout on time, and keeps its slot until it ends', async () => {
    const started = performance.now();
    const settled: string[] = [];
    const timedOut = host.call('ignore_signal', '{"ms":350}').finally(() => settled.push('ignore_signal'));
    // kit allows one call at a time: this one waits in the queue until the ignoring tool really ends.
    const next = host.call('greet', '{"who":"after"}').finally(() => settled.push('greet'));
    const r = await timedOut;
    expect(r).to.include({ isError: true, code: 'timeout' });
    expect(r.content).to.contain('200 ms');
    expect((await next).content).to.equal('hi after');
    // Answered at the timeout, before the tool ended and gave its slot to the call behind it.
    expect(settled).to.deep.equal(['ignore_signal', 'greet']);
    expect(performance.now() - started).to.be.at.least(340);
  });

  it('a tool that never settles gives its slot back one timeout after it was stopped', async () => {
    const started = performance.now();
    expect((await host.call('hang', '{}')).code).to.equal('timeout'); // 100 ms
    const next = await host.call('greet', '{"who":"later"}'); // waits for the slot: released at ~200 ms
    expect(next.content).to.equal('hi later');
    expect(performance.now() - started).to.be.at.least(190);
  });

  it('timeout: a tool that honours its signal sees a TimeoutError, and its late answer is dropped', async () => {
    const seen: string[] = [];
    const r = await host.call('honour_signal', '{}', { onProgress: (p) => seen.push(p.message ?? '') });
    expect(r.code).to.equal('timeout');
    expect(seen).to.deep.equal(['aborted: TimeoutError']);
    expect(r.content).to.not.contain('aborted'); // the rejection that followed the abort did not replace the result
  });

  it("cancelled: the caller's signal ends the call at once", async () => {
    const controller = new AbortController();
    const pending = host.call('slow', '{"ms":5000,"tag":"x"}', { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const r = await pending;
    expect(r).to.include({ isError: true, code: 'cancelled' });
  });

  it('cancelled: a signal aborted in the tick the call started ends a tool still running; one that answered at once never had a listener on the signal', async () => {
    const controller = new AbortController();
    const pending = host.call('slow', '{"ms":5000,"tag":"y"}', { signal: controller.signal });
    controller.abort();
    expect(await pending).to.include({ isError: true, code: 'cancelled' });

    const quick = new AbortController();
    const added: string[] = [];
    const addEventListener = quick.signal.addEventListener.bind(quick.signal);
    quick.signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
      added.push(args[0]);
      addEventListener(...args);
    };
    expect(await host.call('echo', '{"text":"now"}', { signal: quick.signal })).to.include({ content: 'now' });
    expect(added).to.deep.equal([]);
    const slow = host.call('slow', '{"ms":5000,"tag":"z"}', { signal: quick.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(added).to.deep.equal(['abort']);
    quick.abort();
    expect(await slow).to.include({ isError: true, code: 'cancelled' });
  });

  it('tool_error: a throw becomes an error result with the message', async () => {
    const r = await host.call('fail', '{"message":"disk on fire"}');
    expect(r).to.include({ isError: true, code: 'tool_error' });
    expect(r.content).to.contain('disk on fire');
  });

  it("caps a failure's text at the plugin's output cap, as it caps output: a thrown message is the tool's text too", async () => {
    const r = await host.call('fail', { message: `BEGIN${'m'.repeat(100_000)}END` });
    expect(r).to.include({ isError: true, code: 'tool_error', truncated: true });
    expect(r.content).to.match(/^Tool "fail" failed: BEGIN/);
    expect(r.content).to.match(/END$/);
    // The kit plugin's cap is 4096 bytes; the marker that says what was cut comes on top.
    expect(Buffer.byteLength(r.content.replace(/\n\n\[… .* …\]\n\n/, ''))).to.be.at.most(4096);
  });

  it('normalises outputs: { content, isError, data }, and rejects other shapes', async () => {
    expect(await host.call('returns', '{"kind":"error-object"}')).to.include({
      isError: true,
      code: 'tool_error',
      content: 'it went wrong',
    });
    expect(await host.call('returns', '{"kind":"data"}')).to.deep.include({
      isError: false,
      content: 'with data',
      data: { n: 1 },
    });
    for (const kind of ['number', 'null', 'object']) {
      const r = await host.call('returns', JSON.stringify({ kind }));
      expect(r.code, kind).to.equal('tool_error');
      expect(r.content).to.match(/must return a string/);
    }
  });

  it('structured data over the cap does not fail the call: its long string is cut to fit, head and tail kept', async () => {
    const r = await host.call('returns', '{"kind":"big-data"}');
    expect(r.isError, r.content).to.equal(false);
    expect(r.dataTruncated).to.equal(true);
    const { blob } = r.data as { blob: string };
    expect(Buffer.byteLength(JSON.stringify(r.data))).to.be.at.most(4096);
    expect(blob).to.match(
      /^y+\n\n\[… \d+ bytes omitted of 300000: output capped at \d+ bytes, head and tail kept …\]\n\ny+$/,
    );
  });

  it('caps text output: head and tail kept, a marker between, truncated flag set', async () => {
    const r = await host.call('big', '{"bytes":100000}');
    expect(r.isError).to.equal(false);
    expect(r.truncated).to.equal(true);
    expect(Buffer.byteLength(r.content)).to.be.below(4096 + 200);
    expect(r.content.startsWith('HEAD\n')).to.equal(true);
    expect(r.content.endsWith('\nTAIL')).to.equal(true);
    expect(r.content).to.match(/bytes omitted of 100000/);
    expect((await host.call('big', '{"bytes":100}')).truncated).to.equal(undefined);
  });

  it('reports progress to the caller', async () => {
    const seen: unknown[] = [];
    await host.call('progress', '{}', { onProgress: (p) => seen.push(p) });
    expect(seen).to.deep.equal([
      { done: 1, total: 3, message: 'step 1' },
      { done: 2, total: 3, message: 'step 2' },
      { done: 3, total: 3, message: 'step 3' },
    ]);
  });

  it('bounds concurrency: calls beyond maxConcurrency wait, beyond maxQueue are refused', async () => {
    const first = host.call('slow', '{"ms":150,"tag":"first"}');
    const second = host.call('slow', '{"ms":10,"tag":"second"}');
    const third = await host.call('slow', '{"ms":10,"tag":"third"}');
    expect(third.code).to.equal('tool_error');
    expect(third.content).to.match(/busy/);
    expect((await first).content).to.equal('first');
    expect((await second).content).to.equal('second');
  });

  it('a waiting call honours its own timeout', async () => {
    const blocker = host.call('slow', '{"ms":400,"tag":"blocker"}');
    const waiting = await host.call('ignore_signal', '{"ms":10}'); // 200 ms timeout, spent waiting for the slot
    expect(waiting.code).to.equal('timeout');
    expect((await blocker).content).to.equal('blocker');
  });

  it('never throws, and each code it can return is a documented code', async () => {
    const inputs: [string, unknown][] = [
      ['greet', undefined],
      ['greet', 12],
      ['greet', 'null'],
      ['nope', '{'],
      ['greet', { who: 1n }],
    ];
    for (const [tool, input] of inputs) {
      const r = await host.call(tool, input);
      expect(r.isError).to.equal(true);
      expect(RESULT_CODES).to.include(r.code);
    }
  });

  it('a call waiting for approval ends when the caller cancels or the host closes', async () => {
    let asked = 0;
    const h = await createHost({
      cwd: FIXTURES,
      audit: false,
      logLevel: 'error',
      approve: () => {
        asked++;
        return new Promise<boolean>(() => {}); // a person who never answers
      },
      config: {
        builtins: false,
        plugins: [{ module: plugin('echo.ts'), isolation: 'inline' }],
        policy: { default: 'ask', readOnlyDefault: 'ask' },
      },
    });
    const controller = new AbortController();
    const cancelled = h.call('echo', '{"text":"a"}', { signal: controller.signal });
    expect((await h.call('echo', '{"text":"z"}', { signal: AbortSignal.abort() })).code).to.equal('cancelled');
    setTimeout(() => controller.abort(), 20);
    expect(await cancelled).to.include({ isError: true, code: 'cancelled' });
    const closing = h.call('echo', '{"text":"b"}');
    setTimeout(() => void h.close(), 20);
    expect(await closing).to.include({ isError: true, code: 'cancelled' });
    expect(asked).to.equal(2); // the call cancelled before it began was never shown to the person
  });

  it('after close(), calls are refused without throwing', async () => {
    const h = await createHost({
      cwd: FIXTURES,
      audit: false,
      logLevel: 'error',
      config: { builtins: false, plugins: [{ module: plugin('echo.ts'), isolation: 'inline' }] },
    });
    const pending = h.call('echo', '{"text":"a"}');
    await h.close();
    await pending;
    const r = await h.call('echo', '{"text":"b"}');
    expect(r).to.include({ isError: true, code: 'cancelled' });
  });
});

describe("a plugin cannot change the host's objects", () => {
  const proto = Object.prototype as Record<string, unknown>;
  const ISOLATIONS = ['inline', 'worker', 'process'] as const;

  for (const isolation of ISOLATIONS) {
    it(`${isolation}: a schema property "__proto__" with a default is refused at load, and a deny rule on bash holds`, async () => {
      const host = await createHost({
        cwd: FIXTURES,
        audit: false,
        logLevel: 'error',
        config: {
          builtins: ['shell'],
          plugins: [{ module: plugin('hostile-proto.ts'), isolation }],
          policy: { default: 'allow', deny: [{ tool: 'bash', where: { command: '.*pwned.*' }, reason: 'no' }] },
        },
      });
      try {
        const hostile = host.plugins().find((p) => p.name === 'hostile-proto')!;
        expect(hostile.status).to.equal('failed');
        expect(hostile.error?.code).to.equal('RH_ERR_PLUGIN_CONTRACT');
        expect(hostile.error?.violations?.map((v) => v.pointer)).to.deep.equal([
          '/tools/0/inputSchema/properties/__proto__',
        ]);
        expect((await host.call('trap', '{}')).code).to.equal('unknown_tool');
        expect(Object.hasOwn(proto, 'command'), 'Object.prototype.command').to.equal(false);
        const bare = await host.call('bash', '{}');
        expect(bare.code, bare.content).to.equal('invalid_input');
        expect(bare.content).to.not.contain('pwned');
        expect((await host.call('bash', '{"command":"echo pwned"}')).code).to.equal('denied');
      } finally {
        delete proto.command;
        await host.close();
      }
    });
  }

  it('an MCP server\'s tool schema with "constructor" / "prototype" properties fails the server at load, as an error', async () => {
    const host = await createHost({
      cwd: FIXTURES,
      audit: false,
      logLevel: 'error',
      config: {
        builtins: false,
        plugins: [
          { name: 'srv', mcp: { command: process.execPath, args: [join(FIXTURES, 'mcp', 'hostile-proto.mjs')] } },
        ],
      },
    });
    try {
      const [srv] = host.plugins();
      expect(srv!.status).to.equal('failed');
      expect(srv!.error?.violations?.filter((v) => v.severity === 'error').map((v) => v.pointer)).to.deep.equal([
        '/tools/0/inputSchema/properties/constructor',
      ]);
      expect(host.tools()).to.deep.equal([]);
    } finally {
      await host.close();
    }
  });

  it('Object.prototype polluted by anyone changes no policy decision and no input a tool receives (inline, worker, process)', async () => {
    // Each field the policy, the dispatcher or a tool could read when an object lacks it. A string
    // `match`, `where` or `signal` would also make a rule or a call built without one throw.
    const pollution: Record<string, unknown> = {
      command: 'echo pwned',
      nested: { flag: true },
      flag: true,
      annotations: { readOnly: true },
      readOnly: true,
      match: 'x',
      where: { command: '.*' },
      reason: 'polluted',
      rule: { id: 'polluted' },
      sessionId: 'polluted',
      signal: 'polluted',
    };
    const calls: [string, unknown][] = [
      ['inspect', '{}'],
      ['inspect', '{"nested":{}}'],
      ['inspect', { nested: {} }],
      ['inspect', '{"command":"ls"}'],
      ['inspect', '{"command":"echo pwned"}'],
      ['inspect', '{"nested":{"flag":true}}'],
      ['plain', '{}'],
    ];
    for (const isolation of ISOLATIONS) {
      const host = await createHost({
        cwd: FIXTURES,
        audit: false,
        logLevel: 'error',
        config: {
          builtins: false,
          plugins: [{ module: plugin('inspect.ts'), isolation }],
          policy: {
            default: 'deny',
            readOnlyDefault: 'allow',
            deny: [
              { tool: 'inspect', where: { command: '.*pwned.*' } },
              { tool: 'inspect', where: { '/nested/flag': 'true' } },
            ],
            allow: [{ tool: 'inspect' }],
          },
        },
      });
      try {
        const run = async () => {
          const out: string[] = [];
          for (const [tool, input] of calls) {
            const r = await host.call(tool, input);
            out.push(`${tool} ${JSON.stringify(input)} → ${r.code ?? 'ok'} ${r.content}`);
          }
          return out;
        };
        const clean = await run();
        expect(clean[0]).to.contain('"command":null');
        let polluted: string[];
        try {
          Object.assign(proto, pollution);
          polluted = await run();
        } finally {
          for (const key of Object.keys(pollution)) delete proto[key];
        }
        expect(polluted, isolation).to.deep.equal(clean);
      } finally {
        await host.close();
      }
    }
  });
});

describe('inline: odd values a tool returns or throws', () => {
  it('each ends as tool_error with an audit line; host.call never rejects', async () => {
    const dir = tempDir();
    try {
      const audit = join(dir.dir, 'audit.jsonl');
      const host = await createHost({
        cwd: dir.dir,
        audit,
        logLevel: 'error',
        config: {
          builtins: false,
          plugins: [{ module: plugin('odd-values.ts'), isolation: 'inline' }],
          policy: { default: 'allow' },
        },
      });
      const names = host.tools().map((t) => t.name);
      try {
        expect(names).to.have.length(11);
        for (const name of names) {
          const r = await host.call(name, '{}', { callId: `odd-${name}` });
          // Whatever the tool's text, the result's is well-formed: a strict JSON reader (an MCP
          // client in Rust) refuses a message holding a lone surrogate, a model's API may too.
          expect(JSON.stringify(r).isWellFormed() && !/\\ud[89a-f]/i.test(JSON.stringify(r)), name).to.equal(true);
          if (name === 'link_cut_emoji') {
            expect(r.isError, r.content).to.equal(false);
            expect(r.blocks?.[0]).to.deep.equal({
              type: 'resource_link',
              uri: 'file:///a\ufffd',
              name: 'a\ufffd',
              description: '\ufffd',
            });
          } else if (name === 'data_getter_changes') {
            // Read once, kept as a copy: a second read (by --json, by MCP) would have thrown.
            expect(r.data, name).to.deep.equal({ n: 1 });
            expect(JSON.stringify(r.data)).to.equal('{"n":1}');
          } else {
            expect(r.code, `${name}: ${r.content}`).to.equal('tool_error');
          }
        }
      } finally {
        await host.close();
      }
      const lines = readFileSync(audit, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      for (const name of names) {
        const call = lines.find((l) => l.event === 'call' && l.callId === `odd-${name}`);
        const ok = name === 'data_getter_changes' || name === 'link_cut_emoji';
        expect(call, name).to.include({ tool: name, outcome: ok ? 'ok' : 'error' });
      }
    } finally {
      dir.cleanup();
    }
  });
});

describe('call pipeline: a schema that throws on the input it checks', () => {
  // A loop through a nested resource's `$id`: checking any input overflows the stack. The load-time
  // check now refuses it (core/schema-recursion.ts follows references as typebox resolves them), so
  // no plugin loads with it; the pipeline's own guard stays for what that check could miss, and is
  // tested here with the tool registered directly, past the check.
  const selfRef = {
    $id: 'http://schemas.test/root',
    type: 'object',
    properties: {},
    allOf: [{ $ref: 'sub' }],
    $defs: { sub: { $id: 'http://schemas.test/sub', allOf: [{ $ref: 'root' }] } },
  };

  it('is refused at load, at the reference that loops', () => {
    const tool = { name: 'loop', description: 'Never reached.', inputSchema: selfRef, execute: () => 'ran' };
    const errors = checkPlugin('/p.ts', describePlugin({ name: 'p', version: '1.0.0', tools: [tool] }), [
      describeTool(tool),
    ]).filter((v) => v.severity === 'error');
    expect(errors.map((v) => v.pointer)).to.deep.equal(['/tools/0/inputSchema/allOf/0']);
    expect(errors[0]!.message).to.match(/refers back to itself for the same value/);
  });

  it("answers with the plugin's error, audited, and the tool never runs; the next call is served", async () => {
    const registry = new Registry();
    const ran: string[] = [];
    const runner: PluginRunner = {
      isolation: 'inline',
      load: () => Promise.reject(new Error('not loaded here')),
      run: async ({ tool }) => {
        ran.push(tool);
        return { ok: true, output: 'ran' };
      },
      close: async () => {},
    };
    const handle = {
      name: 'self-ref',
      source: './self-ref.ts',
      isolation: 'inline' as const,
      runner,
      limiter: new Limiter(4, 4),
      timeoutMs: 5_000,
      maxOutputBytes: 4096,
      warnings: [],
    };
    registry.add(handle, [
      { name: 'loop', description: 'Never reached.', inputSchema: selfRef },
      { name: 'fine', description: 'Answers.', inputSchema: { type: 'object', properties: {} } },
    ]);
    const written: Record<string, unknown>[] = [];
    const audit = {
      ...NO_AUDIT,
      enabled: true,
      write: (entry: AuditRecord | AuditEntry) =>
        written.push(JSON.parse(typeof entry === 'function' ? `${entry(lineHead(''))}` : JSON.stringify(entry))),
    };
    const ended: string[] = [];
    const env: DispatchEnv = {
      registry,
      policy: compilePolicy({ default: 'allow' }),
      audit,
      auditInputCap: 1024,
      maxInputChars: 1024 * 1024,
      log: createLogger({ level: 'error' }),
      closing: new AbortController().signal,
      inflight: new List(),
      callEnd: [(end) => ended.push(end.result.code ?? 'ok')],
    };
    const r = await dispatch(env, 'loop', '{}', { callId: 'self-ref-1' });
    expect(r.isError).to.equal(true);
    expect(r.code).to.equal('tool_error');
    expect(r.content).to.match(/^Tool "loop" cannot check its input: its input schema failed \(/);
    expect(ended).to.deep.equal(['tool_error']);
    expect(decide(env, 'loop', {}, {}).ok).to.equal(false); // host.decide() answers too, it does not throw
    expect(written.filter((l) => l.callId === 'self-ref-1').map((l) => `${l.event}:${l.code}`)).to.deep.equal([
      'call:tool_error',
    ]);
    expect(ran).to.deep.equal([]);
    expect((await dispatch(env, 'fine', '{}')).content).to.equal('ran');
    expect(ran).to.deep.equal(['fine']);
  });
});

describe('call pipeline: an input too large to check in bounded time', () => {
  // The check cannot be stopped once it runs: 1,000,000 distinct numbers under `uniqueItems` held
  // the host's thread 4.3 s, and each value against a schema that fans out to thousands of schemas
  // costs that many. Values times schemas met per value is bounded (MAX_CHECK_STEPS).
  let host: Host;
  let temp: ReturnType<typeof tempDir>;
  before(async () => {
    temp = tempDir('rh-check-steps-');
    const $defs: Record<string, unknown> = { d12: { type: 'string' } };
    for (let i = 0; i < 12; i++)
      $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    const list = (items: unknown) => ({
      type: 'object',
      properties: { list: { type: 'array', description: 'Items.', ...(items as object) } },
    });
    const file = temp.write(
      'big.mjs',
      `export default { name: 'big', version: '1.0.0', tools: [
        { name: 'unique', description: 'Unique.', inputSchema: ${JSON.stringify(list({ uniqueItems: true }))}, execute: (i) => String(i.list.length) },
        { name: 'fan', description: 'Fan.', inputSchema: ${JSON.stringify({ ...list({ items: { $ref: '#/$defs/d0' } }), $defs })}, execute: (i) => String(i.list.length) },
        { name: 'plain', description: 'Plain.', inputSchema: ${JSON.stringify(list({ items: { type: 'number' } }))}, execute: (i) => String(i.list.length) },
      ] };`,
    );
    host = await quietHost(temp.dir, { plugins: [{ module: file, isolation: 'inline' }] });
    expect(host.plugins()[0]!.status, JSON.stringify(host.plugins()[0]!.error)).to.equal('loaded');
  });
  after(async () => {
    await host.close();
    temp.cleanup();
  });
  const numbers = (n: number) => ({ list: Array.from({ length: n }, (_, i) => i) });

  it('refuses it as invalid_input, naming the count, the schemas per value and the bound; the tool never runs', async () => {
    const unique = await host.call('unique', numbers(60_000));
    expect(unique.code).to.equal('invalid_input');
    expect(unique.content).to.match(
      /^Input for tool "unique" is too large to check: it holds over [\d,]+ values .*each may meet up to [\d,]+ schemas .*at most 50,000,000 \(values times schemas\) per call/,
    );
    const fan = await host.call('fan', { list: Array.from({ length: 10_000 }, () => 's') });
    expect(fan.code).to.equal('invalid_input');
    expect(fan.content).to.match(/too large to check/);
  });

  it('checks what is within the bound as before, a large input to a plain schema included', async () => {
    expect((await host.call('unique', numbers(20_000))).content).to.equal('20000');
    expect((await host.call('fan', { list: Array.from({ length: 1_000 }, () => 's') })).content).to.equal('1000');
    expect((await host.call('plain', numbers(500_000))).content).to.equal('500000');
  });
});

describe('call pipeline: strings read past the bound by format, pattern and length checks', () => {
  // A string counts as one value in the count before the check, yet each `format` or `pattern` it
  // meets reads it to its end: 1,000 `format: "email"` schemas against one 1 MB string held the
  // host's thread 9 s. Their reading is charged as the check runs (check-budget.ts); the length
  // checks typebox runs inside its compiled code are counted before it.
  let host: Host;
  let temp: ReturnType<typeof tempDir>;
  const ran = () => (globalThis as { scanRan?: number }).scanRan ?? 0;
  before(async () => {
    temp = tempDir('rh-scan-steps-');
    const times = (n: number, schema: unknown) => Array.from({ length: n }, () => schema);
    const tools = {
      emails: { allOf: times(1_000, { type: 'string', format: 'email' }) },
      patterns: { allOf: times(1_000, { type: 'string', pattern: '^[a-z@.]+$' }) },
      lengths: { anyOf: times(1_000, { type: 'string', maxLength: 600_000 }) },
      regexes: { allOf: times(1_000, { type: 'string', format: 'regex' }) },
      keys: {
        type: 'object',
        patternProperties: Object.fromEntries(times(64, 0).map((_, i) => [`^k${i}|[a-z]+$`, {}])),
      },
      unique: { type: 'array', uniqueItems: true, items: { type: 'string' } },
      plain: { type: 'string' },
      few: { allOf: [{ format: 'email' }, { format: 'idn-email' }, { maxLength: 2_000_000 }, { pattern: '@' }] },
      // A form: many short fields, each with its maxLength, and one long text.
      form: {
        type: 'object',
        properties: {
          ...Object.fromEntries(
            times(40, 0).map((_, i) => [`f${i}`, { type: 'string', maxLength: 100, description: 'F.' }]),
          ),
          text: { type: 'string', maxLength: 2_000_000, description: 'T.' },
        },
      },
    };
    const defs = Object.entries(tools).map(
      ([name, s]) =>
        `{ name: '${name}', description: 'D.', inputSchema: ${JSON.stringify({ type: 'object', properties: { s: { description: 'S.', ...s } } })}, execute: (i) => { globalThis.scanRan = (globalThis.scanRan ?? 0) + 1; return String(JSON.stringify(i.s).length) } }`,
    );
    const file = temp.write(
      'scan.mjs',
      `export default { name: 'scan', version: '1.0.0', tools: [${defs.join(',\n')}] };`,
    );
    host = await quietHost(temp.dir, { plugins: [{ module: file, isolation: 'inline' }] });
    expect(host.plugins()[0]!.status, JSON.stringify(host.plugins()[0]!.error)).to.equal('loaded');
  });
  after(async () => {
    await host.close();
    temp.cleanup();
  });
  const mail = (n: number) => `${'a'.repeat(n - 6)}@b.com`;

  it('refuses a string that 1,000 formats, patterns or format-regex checks would read, naming the bound; the tool never runs', async () => {
    for (const [tool, s] of [
      ['emails', mail(1_000_000)],
      ['patterns', mail(200_000)],
      // Within format-regex's own budget (4,000 units, ~20 ms a check) and 1,000 times over.
      ['regexes', '\\p{L}'.repeat(130)],
    ] as const) {
      const r = await host.call(tool, { s });
      expect(r.code, tool).to.equal('invalid_input');
      expect(r.content).to.match(
        new RegExp(
          `^Input for tool "${tool}" is too large to check: its strings would be read past 50,000,000 steps by the schema's format, pattern and length checks`,
        ),
      );
    }
    expect(ran()).to.equal(0);
  });

  it('refuses keys that many patternProperties would read, and long strings hashed for uniqueItems', async () => {
    const keys = await host.call('keys', {
      s: Object.fromEntries(times(30, 0).map((_, i) => [`${'k'.repeat(60_000)}${i}`, 1])),
    });
    expect(keys.code).to.equal('invalid_input');
    expect(keys.content).to.match(/its strings would be read past 50,000,000 steps/);
    const unique = await host.call('unique', { s: times(200, 0).map((_, i) => `${i}${'x'.repeat(100_000)}`) });
    expect(unique.code).to.equal('invalid_input');
    expect(unique.content).to.match(/each 100 characters of a string or key counting as one more/);
    expect(ran()).to.equal(0);
  });

  it('counts the length checks a string may meet before the check: typebox counts code points inside its compiled code', async () => {
    const r = await host.call('lengths', { s: 'a'.repeat(1_000_000) });
    expect(r.code).to.equal('invalid_input');
    expect(r.content).to.match(
      /its strings and keys would be read over 25,000,000 times by the minLength and maxLength checks they may meet .*up to 1,000 such checks here/,
    );
    // The same string as JSON text: counted by the text's length, at most three characters each after NFC.
    const text = await host.call('lengths', JSON.stringify({ s: 'a'.repeat(1_000_000) }));
    expect(text.code).to.equal('invalid_input');
  });

  it('checks large strings within the bound as before: a plain string, a few formats, a pattern and a length', async () => {
    expect((await host.call('plain', { s: 'x'.repeat(5_000_000) })).content).to.equal(String(5_000_002));
    expect((await host.call('few', { s: mail(1_000_000) })).content).to.equal(String(1_000_002));
    expect((await host.call('emails', { s: mail(1_000) })).content).to.equal('1002');
    expect((await host.call('patterns', { s: mail(100) })).content).to.equal('102');
    expect((await host.call('unique', { s: ['a'.repeat(100_000), 'b'.repeat(100_000)] })).isError).to.equal(false);
    // A long string meets only the length checks whose limit is half its length or more.
    const form: Record<string, string> = {
      ...Object.fromEntries(times(40, 0).map((_, i) => [`f${i}`, 'x'.repeat(150)])),
      text: 'a'.repeat(1_500_000),
    };
    const invalid = await host.call('form', { s: form });
    expect(invalid.code).to.equal('invalid_input');
    expect(invalid.content).to.match(/^Invalid input for tool "form"/);
    for (let i = 0; i < 40; i++) form[`f${i}`] = 'x';
    expect((await host.call('form', { s: form })).isError).to.equal(false);
    expect(ran()).to.equal(6);
  });
});

function times<T>(n: number, item: T): T[] {
  return Array.from({ length: n }, () => item);
}
