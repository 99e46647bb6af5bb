// The audit trail: one JSON line per decision and one per call outcome, in a real file, written
// in batches, flushed by host.close() whatever happened to the call.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import winston from 'winston';
import type { HostConfig } from '../core/config-schema.ts';
import { createHost, type Host, type HostOptions } from '../core/host.ts';
import { auditLine } from '../core/audit-lines.ts';
import { createAuditSink } from '../core/audit.ts';
import { FIXTURES, tempDir } from './helpers.ts';

const KIT = join(FIXTURES, 'policy', 'tools.ts');
const CRASH = join(FIXTURES, 'policy', 'crash.ts');
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

type Line = Record<string, unknown>;

function readLines(file: string): Line[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}

describe('audit trail', () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    dir = tempDir();
    file = join(dir.dir, 'audit', 'trail.jsonl');
  });
  afterEach(() => dir.cleanup());

  function host(config: Partial<HostConfig> = {}, options: Partial<HostOptions> = {}): Promise<Host> {
    return createHost({
      cwd: dir.dir,
      audit: file,
      logLevel: 'error',
      config: {
        builtins: false,
        plugins: [{ module: KIT, isolation: 'inline' }],
        policy: { default: 'allow', deny: [{ tool: 'shell_run', match: 'rm ', reason: 'no deletes' }] },
        ...config,
      },
      ...options,
    });
  }

  /** The lines of one call, by its id. */
  const linesOf = (lines: Line[], callId: string) => lines.filter((l) => l.callId === callId);

  it('an allowed call: a decision line with the input and its hash, then a call line with the outcome', async () => {
    const h = await host();
    const r = await h.call('shell_run', '{ "command" : "\\u006cs" }', { callId: 'c-allow', sessionId: 's1' });
    await h.close();
    const [decision, call, ...rest] = linesOf(readLines(file), 'c-allow');
    expect(rest).to.deep.equal([]);
    const canonical = '{"command":"ls"}';
    expect(decision).to.deep.equal({
      time: decision!.time,
      host: h.hostId,
      event: 'decision',
      callId: 'c-allow',
      sessionId: 's1',
      plugin: 'policy-kit',
      tool: 'shell_run',
      inputSha256: sha256(canonical),
      inputBytes: canonical.length,
      input: canonical,
      decision: 'allow',
    });
    expect(new Date(decision!.time as string).toISOString()).to.equal(decision!.time);
    expect(call).to.deep.equal({
      time: call!.time,
      host: h.hostId,
      event: 'call',
      callId: 'c-allow',
      sessionId: 's1',
      plugin: 'policy-kit',
      tool: 'shell_run',
      inputSha256: sha256(canonical),
      decision: 'allow',
      outcome: 'ok',
      durationMs: r.durationMs,
      bytes: Buffer.byteLength('ran: ls'),
    });
  });

  it("an authenticated caller's name is on both lines of its call; a caller set on the prototype is not", async () => {
    const h = await host();
    await h.call('shell_run', '{"command":"ls"}', {
      callId: 'c-caller',
      caller: { name: 'ci-bot', scopes: ['tools:read'], via: 'token' },
    });
    const inherited = Object.create({ caller: { name: 'forged', scopes: [], via: 'token' } });
    await h.call('shell_run', '{"command":"ls"}', Object.assign(inherited, { callId: 'c-forged' }));
    await h.close();
    const lines = readLines(file);
    expect(linesOf(lines, 'c-caller').map((l) => [l.event, l.caller])).to.deep.equal([
      ['decision', 'ci-bot'],
      ['call', 'ci-bot'],
    ]);
    expect(linesOf(lines, 'c-forged').map((l) => l.caller)).to.deep.equal([undefined, undefined]);
  });

  it('denied and headless-ask calls: the rule, the reason and the answer are on the decision line', async () => {
    const h = await host({
      policy: {
        default: 'allow',
        deny: [{ tool: 'shell_run', match: 'rm ', reason: 'no deletes' }],
        ask: [{ tool: 'shell_runner' }],
      },
    });
    await h.call('shell_run', '{"command":"rm -rf x"}', { callId: 'c-deny' });
    await h.call('shell_runner', '{"command":"ls"}', { callId: 'c-ask' });
    await h.close();
    const lines = readLines(file);
    const [deny, denyCall] = linesOf(lines, 'c-deny');
    expect(deny).to.include({ event: 'decision', decision: 'deny', rule: 'policy.deny[0]', reason: 'no deletes' });
    expect(denyCall).to.include({
      event: 'call',
      decision: 'deny',
      rule: 'policy.deny[0]',
      outcome: 'error',
      code: 'denied',
    });
    const [ask, askCall] = linesOf(lines, 'c-ask');
    expect(ask).to.include({ event: 'decision', decision: 'ask', rule: 'policy.ask[0]', answer: 'no_approver' });
    expect(askCall).to.include({ event: 'call', outcome: 'error', code: 'denied' });
  });

  it('an "always" answer is on the decision line, and the next same call names the session rule', async () => {
    const h = await host({ policy: { ask: [{ tool: 'shell_run' }] } }, { approve: () => 'always' });
    await h.call('shell_run', '{"command":"ls"}', { callId: 'first', sessionId: 's' });
    await h.call('shell_run', '{"command":"ls"}', { callId: 'second', sessionId: 's' });
    await h.close();
    const lines = readLines(file);
    expect(linesOf(lines, 'first')[0]).to.include({
      decision: 'ask',
      rule: 'policy.ask[0]',
      answer: 'approved_always',
    });
    expect(linesOf(lines, 'second')[0]).to.include({ decision: 'allow', rule: 'session.allow[0]' });
    expect(linesOf(lines, 'second')[1]).to.include({ outcome: 'ok' });
  });

  it('input that never reaches the policy leaves one call line and no decision', async () => {
    const h = await host();
    await h.call('shell_run', '{"command":"ls","command":"rm"}', { callId: 'c-dup' });
    await h.call('nope', '{}', { callId: 'c-unknown' });
    await h.call('shell_run', '{"command":1}', { callId: 'c-invalid' });
    await h.close();
    const lines = readLines(file);
    for (const [id, code] of [
      ['c-dup', 'invalid_json'],
      ['c-unknown', 'unknown_tool'],
      ['c-invalid', 'invalid_input'],
    ] as const) {
      const mine = linesOf(lines, id);
      expect(mine, id).to.have.length(1);
      expect(mine[0]).to.include({ event: 'call', outcome: 'error', code });
      expect(mine[0]).to.not.have.property('decision');
    }
  });

  it('a timeout, a throw and a crash each leave exactly their decision and call lines', async () => {
    const h = await host({
      plugins: [
        { module: KIT, isolation: 'inline' },
        { module: CRASH, isolation: 'worker' },
      ],
    });
    const timedOut = await h.call('hang', '{"tag":"t"}', { callId: 'c-timeout' });
    const failed = await h.call('fail', '{}', { callId: 'c-fail' });
    const crashed = await h.call('crash', '{"code":3}', { callId: 'c-crash' });
    expect([timedOut.code, failed.code, crashed.code]).to.deep.equal(['timeout', 'tool_error', 'crashed']);
    await h.close();
    const lines = readLines(file);
    for (const [id, code, result] of [
      ['c-timeout', 'timeout', timedOut],
      ['c-fail', 'tool_error', failed],
      ['c-crash', 'crashed', crashed],
    ] as const) {
      const mine = linesOf(lines, id);
      expect(
        mine.map((l) => l.event),
        id,
      ).to.deep.equal(['decision', 'call']);
      expect(mine[1]).to.include({
        outcome: 'error',
        code,
        durationMs: result.durationMs,
        bytes: Buffer.byteLength(result.content),
      });
      expect(mine[1]!.inputSha256).to.equal(mine[0]!.inputSha256);
    }
  });

  it('input over log.auditInputCap is cut (never inside a character) and flagged; hash and size cover all of it', async () => {
    const h = await host({ log: { auditInputCap: 24 } });
    const text = `${'a'.repeat(10)}${'é'.repeat(20)}`;
    await h.call('open_echo', JSON.stringify({ text }), { callId: 'c-big' });
    await h.close();
    const [decision] = linesOf(readLines(file), 'c-big');
    const canonical = JSON.stringify({ text });
    expect(decision).to.include({
      inputTruncated: true,
      inputBytes: Buffer.byteLength(canonical),
      inputSha256: sha256(canonical),
    });
    const kept = decision!.input as string;
    expect(canonical.startsWith(kept)).to.equal(true);
    expect(Buffer.byteLength(kept)).to.be.at.most(24).and.at.least(23);
    expect(kept).to.not.include('\uFFFD');
  });

  it('defaults to .rousseau/audit.jsonl in the workspace, owner-only; log.audit: false writes nothing', async () => {
    const plugins = [{ module: KIT, isolation: 'inline' as const }];
    const a = await createHost({
      cwd: dir.dir,
      logLevel: 'error',
      config: { builtins: false, plugins, policy: { default: 'allow' } },
    });
    await a.call('shell_run', '{"command":"ls"}');
    await a.close();
    expect(readLines(join(dir.dir, '.rousseau', 'audit.jsonl')).map((l) => l.event)).to.deep.equal([
      'decision',
      'call',
    ]);
    // Another user of the machine reads neither the inputs nor the session tags in it.
    expect(statSync(join(dir.dir, '.rousseau', 'audit.jsonl')).mode & 0o777).to.equal(0o600);

    const off = tempDir();
    try {
      const b = await createHost({
        cwd: off.dir,
        logLevel: 'error',
        config: { builtins: false, plugins, policy: { default: 'allow' }, log: { audit: false } },
      });
      await b.call('shell_run', '{"command":"ls"}');
      await b.close();
      expect(existsSync(join(off.dir, '.rousseau'))).to.equal(false);
    } finally {
      off.cleanup();
    }
  });

  it('close() flushes every line at once, even right after a burst of calls', async () => {
    const h = await host();
    await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        h.call('shell_run', JSON.stringify({ command: `echo ${i}` }), { callId: `burst-${i}` }),
      ),
    );
    await h.close();
    const lines = readLines(file);
    expect(lines.filter((l) => String(l.callId).startsWith('burst-'))).to.have.length(600);
  });

  it('an audit file that cannot be opened stops the host from starting, with a config error naming it', async () => {
    mkdirSync(file, { recursive: true }); // a directory where the file should be
    const error = await host().then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    expect(error?.code).to.equal('RH_ERR_CONFIG_INVALID');
    expect(error?.message).to.include(file).and.include('EISDIR');
  });

  it('a write that fails later (a full disk: /dev/full) is reported, and neither calls nor close() throw', async () => {
    const seen = new PassThrough();
    let logged = '';
    seen.on('data', (d: Buffer) => (logged += d.toString()));
    const logger = winston.createLogger({
      level: 'error',
      transports: [new winston.transports.Stream({ stream: seen })],
    });
    const h = await host({}, { logger, audit: '/dev/full' });
    const r = await h.call('shell_run', '{"command":"ls"}');
    expect(r).to.include({ isError: false });
    await h.close();
    expect(logged).to.include('audit trail').and.include('ENOSPC');
  });

  it('a burst that never yields to the timers is written in blocks as it comes, not held until the batch timer', async () => {
    const sink = createAuditSink(file);
    for (let i = 0; i < 600; i++) sink.write({ event: 'call', callId: `tight-${i}` });
    await new Promise((resolve) => setImmediate(resolve)); // winston's stream hops, well inside the 5 ms batch window
    const written = readLines(file).length;
    await sink.close();
    expect(written).to.be.at.least(512);
    expect(readLines(file)).to.have.length(600);
  });

  it('a batch of long multi-byte lines, joined and encoded run by run into a buffer that grows, reads back line for line', async () => {
    const sink = createAuditSink(file);
    // 3-byte and 4-byte characters across run boundaries; 200 lines of ~6 KB outgrow the 64 KiB block.
    const texts = Array.from({ length: 200 }, (_, i) => `${'é€'.repeat(i * 7)}😀${'x'.repeat(i)}`);
    for (const [i, text] of texts.entries()) sink.write({ event: 'call', callId: `long-${i}`, text });
    sink.flush();
    const lines = readLines(file);
    expect(lines.map((l) => l.text)).to.deep.equal(texts);
    expect(lines.map((l) => l.callId)).to.deep.equal(texts.map((_, i) => `long-${i}`));
    await sink.close();
  });

  it('a line holds no character a reader splits lines on (U+2028, U+2029, U+0085): in the input, a caller, a session, a record', async () => {
    // JSON leaves these raw inside strings; Python's splitlines, editors and a JS regex's m flag
    // end a line at them, and the caller chooses both the input and (over HTTP) its own name.
    const breaks = 'a\u2028{"event":"call"}\u2029b\u0085c';
    const h = await host();
    await h.call('open_echo', JSON.stringify({ text: breaks }), {
      callId: `c-${breaks}`,
      sessionId: `s-${breaks}`,
      caller: { name: `who-${breaks}`, scopes: [], via: 'token' },
    });
    await h.close();
    const sink = createAuditSink(file);
    sink.write({ event: 'plugin', plugin: `p-${breaks}` });
    await sink.close();
    const text = readFileSync(file, 'utf8');
    expect(text).to.not.match(/[\u0085\u2028\u2029]/);
    const lines = text.split(/\r\n|[\n\r\u0085\u2028\u2029]/).filter(Boolean);
    const parsed = lines.map((l) => JSON.parse(l) as Line);
    expect(parsed.map((l) => l.event)).to.deep.equal(['decision', 'call', 'plugin']);
    expect(parsed[0]).to.include({
      callId: `c-${breaks}`,
      sessionId: `s-${breaks}`,
      caller: `who-${breaks}`,
      input: JSON.stringify({ text: breaks }),
    });
    expect(parsed[1]).to.include({ caller: `who-${breaks}` });
    expect(parsed[2]).to.include({ plugin: `p-${breaks}` });
  });

  it('a record that cannot be serialised is reported, and the records around it are written', async () => {
    const errors: string[] = [];
    const sink = createAuditSink(file, { onError: (e) => errors.push(e.message) });
    sink.write({ event: 'call', callId: 'one' });
    sink.write({ event: 'call', callId: 'bad', size: 1n });
    sink.write({ event: 'call', callId: 'two' });
    await sink.close();
    expect(readLines(file).map((l) => l.callId)).to.deep.equal(['one', 'two']);
    expect(errors.join('\n')).to.include('BigInt');
  });

  it('every line of a host carries its id, second after time, in each kind of line', async () => {
    const h = await host({}, { hostId: 'h1.example-2' });
    expect(h.hostId).to.equal('h1.example-2');
    await h.call('shell_run', '{"command":"ls"}', { callId: 'ok' });
    await h.call('shell_run', '{"command":"rm -rf /"}', { callId: 'denied' });
    await h.call('no_such_tool', '{}', { callId: 'unknown' });
    await h.close();
    const lines = readLines(file);
    expect(lines.map((l) => `${l.callId}:${l.event}`)).to.deep.equal([
      'ok:decision',
      'ok:call',
      'denied:decision',
      'denied:call',
      'unknown:call',
    ]);
    for (const line of lines) expect(Object.keys(line).slice(0, 3)).to.deep.equal(['time', 'host', 'event']);
    expect(lines.every((l) => l.host === 'h1.example-2')).to.equal(true);
    // Records a runner writes as objects (plugin crashes, quarantines) get it the same way.
    const sink = createAuditSink(file, { host: 'h1.example-2' });
    sink.write({ event: 'plugin', plugin: 'p', status: 'crashed' });
    await sink.close();
    expect(readLines(file).at(-1)).to.deep.include({ host: 'h1.example-2', event: 'plugin', status: 'crashed' });
    expect(auditLine(Date.UTC(2026, 0, 1), { event: 'plugin', plugin: 'p' }, 'h1')).to.equal(
      JSON.stringify({ time: '2026-01-01T00:00:00.000Z', host: 'h1', event: 'plugin', plugin: 'p' }),
    );
  });

  it('the host id comes from ROUSSEAU_HOST_ID, else the machine and the process; a bad one stops the host, naming where it came from', async () => {
    const saved = process.env.ROUSSEAU_HOST_ID;
    try {
      process.env.ROUSSEAU_HOST_ID = ''; // as unset
      const plain = await host();
      await plain.close();
      expect(plain.hostId)
        .to.match(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/)
        .and.match(new RegExp(`-${process.pid}$`));
      process.env.ROUSSEAU_HOST_ID = 'from-env';
      const fromEnv = await host();
      await fromEnv.call('shell_run', '{"command":"ls"}');
      await fromEnv.close();
      expect(fromEnv.hostId).to.equal('from-env');
      expect(readLines(file).at(-1)).to.include({ host: 'from-env' });
      // The option wins over the environment.
      const given = await host({}, { hostId: 'given' });
      await given.close();
      expect(given.hostId).to.equal('given');

      process.env.ROUSSEAU_HOST_ID = 'has space';
      const error = await host().then(
        () => undefined,
        (e: Error & { code?: string }) => e,
      );
      expect(error?.code).to.equal('RH_ERR_CONFIG_INVALID');
      expect(error?.message).to.include('ROUSSEAU_HOST_ID').and.include('"has space"');
      const optionError = await host({}, { hostId: '-dash' }).then(
        () => undefined,
        (e: Error & { code?: string }) => e,
      );
      expect(optionError?.message).to.include('(hostId)').and.include('"-dash"');
    } finally {
      if (saved === undefined) delete process.env.ROUSSEAU_HOST_ID;
      else process.env.ROUSSEAU_HOST_ID = saved;
    }
  });

  it('written() puts the pending lines in the file within this turn, one write for every caller asking in it', async () => {
    const sink = createAuditSink(file);
    // Where a request handler runs: in a microtask of the turn that read the request.
    await new Promise((resolve) => setImmediate(resolve));
    let turned = false;
    setImmediate(() => (turned = true));
    sink.write({ event: 'call', callId: 'a' });
    const first = sink.written();
    // A call that settles a few microtasks later in the same turn shares the write.
    await Promise.resolve();
    await Promise.resolve();
    sink.write({ event: 'call', callId: 'b' });
    expect(sink.written()).to.equal(first);
    expect(existsSync(file) ? readFileSync(file, 'utf8') : '').to.equal(''); // not before the microtasks have run
    await first;
    // The answers it holds back leave in this turn, not after another trip round the event loop.
    expect(turned).to.equal(false);
    // Well inside the 5 ms batch window, whose timer would write them otherwise.
    expect(readLines(file).map((l) => l.callId)).to.deep.equal(['a', 'b']);
    await sink.written(); // nothing pending: resolves all the same
    await sink.close();
    expect(readLines(file)).to.have.length(2);
  });

  it('a record written after written() has flushed its batch still goes out within the batch window', async () => {
    const sink = createAuditSink(file);
    sink.write({ event: 'call', callId: 'a' });
    await sink.written();
    sink.write({ event: 'call', callId: 'b' }); // no written(): the batch timer must write it
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readLines(file).map((l) => l.callId)).to.deep.equal(['a', 'b']);
    await sink.close();
  });

  it('arms the batch timer only for lines still pending when the turn ends: an idle host is not woken to write nothing', async () => {
    const sink = createAuditSink(file);
    const turnEnds = () => new Promise((resolve) => setImmediate(resolve));
    const armed: (number | undefined)[] = [];
    const realSetTimeout = globalThis.setTimeout;
    globalThis.setTimeout = ((callback: () => void, ms?: number) => {
      armed.push(ms);
      return realSetTimeout(callback, ms);
    }) as typeof setTimeout;
    try {
      // stdio: the transport writes the lines just before the answer, in the turn that made them.
      sink.write({ event: 'call', callId: 'a' });
      sink.flush();
      await turnEnds();
      expect(armed).to.deep.equal([]);
      // An embedder's call with nothing to write it out: the 5 ms window starts, counted from the
      // line (a loaded machine may take a millisecond or more to reach the end of the turn).
      sink.write({ event: 'call', callId: 'b' });
      await turnEnds();
      expect(armed).to.have.length(1);
      expect(armed[0]).to.be.within(0, 5);
    } finally {
      globalThis.setTimeout = realSetTimeout;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readLines(file).map((l) => l.callId)).to.deep.equal(['a', 'b']);
    await sink.close();
  });

  it('a sink drops (and reports) records written after close, and closing twice is fine', async () => {
    const errors: string[] = [];
    const sink = createAuditSink(file, { onError: (e) => errors.push(e.message) });
    sink.write({ event: 'call', callId: 'before' });
    await sink.close();
    sink.write({ event: 'call', callId: 'after' });
    await sink.close();
    expect(readLines(file).map((l) => l.callId)).to.deep.equal(['before']);
    expect(errors.join('\n')).to.include('after close dropped');
  });
});

describe('audit trail: the file is never reached through a link in the workspace', () => {
  let t: ReturnType<typeof tempDir>;
  let workspace: string;
  let outside: string;
  beforeEach(() => {
    t = tempDir();
    workspace = join(t.dir, 'ws');
    outside = join(t.dir, 'outside');
    mkdirSync(workspace);
    mkdirSync(outside);
    writeFileSync(join(outside, 'bashrc'), 'original\n');
  });
  afterEach(() => t.cleanup());

  /** The error createHost fails with, on the default `.rousseau/audit.jsonl`. */
  const refusal = () =>
    createHost({ cwd: workspace, logLevel: 'error', config: { builtins: false, plugins: [] } }).then(
      async (h) => {
        await h.close();
        return expect.fail('the host started');
      },
      (error: Error & { code?: string }) => error,
    );

  it('refuses .rousseau/audit.jsonl as a symlink, and appends nothing to its target', async () => {
    mkdirSync(join(workspace, '.rousseau'));
    symlinkSync(join(outside, 'bashrc'), join(workspace, '.rousseau', 'audit.jsonl'));
    const error = await refusal();
    expect(error.code).to.equal('RH_ERR_CONFIG_INVALID');
    expect(error.message)
      .to.include(join(workspace, '.rousseau', 'audit.jsonl'))
      .and.include('is a symlink');
    expect(readFileSync(join(outside, 'bashrc'), 'utf8')).to.equal('original\n');
  });

  it('refuses a dangling symlink without creating its target', async () => {
    mkdirSync(join(workspace, '.rousseau'));
    symlinkSync(join(outside, 'new-file'), join(workspace, '.rousseau', 'audit.jsonl'));
    expect((await refusal()).message).to.include('is a symlink');
    expect(readdirSync(outside)).to.deep.equal(['bashrc']);
  });

  it('refuses .rousseau itself as a symlink, and creates nothing where it points', async () => {
    symlinkSync(outside, join(workspace, '.rousseau'));
    const error = await refusal();
    expect(error.message).to.include(`${join(workspace, '.rousseau')} is a symlink`);
    expect(readdirSync(outside)).to.deep.equal(['bashrc']);
  });

  it('refuses a hard link, a directory and a FIFO in place of the file', async () => {
    mkdirSync(join(workspace, '.rousseau'));
    const file = join(workspace, '.rousseau', 'audit.jsonl');
    linkSync(join(outside, 'bashrc'), file);
    expect((await refusal()).message).to.include('has 2 hard links');
    rmSync(file);
    mkdirSync(file);
    expect((await refusal()).message).to.include(file); // EISDIR, named
    rmSync(file, { recursive: true });
    execFileSync('mkfifo', [file]);
    expect((await refusal()).message).to.include(`${file} is not a regular file`); // at once: no open blocks on it
    expect(readFileSync(join(outside, 'bashrc'), 'utf8')).to.equal('original\n');
  });

  it('creates .rousseau and the file when they are missing, and appends to its own file', async () => {
    for (let run = 0; run < 2; run++) {
      const h = await createHost({
        cwd: workspace,
        logLevel: 'error',
        config: { builtins: false, plugins: [{ module: KIT, isolation: 'inline' }] },
      });
      await h.call('open_echo', '{"text":"hi"}', { callId: `run-${run}` });
      await h.close();
    }
    expect(readLines(join(workspace, '.rousseau', 'audit.jsonl')).map((l) => l.callId)).to.deep.equal([
      'run-0',
      'run-0',
      'run-1',
      'run-1',
    ]);
  });
});
