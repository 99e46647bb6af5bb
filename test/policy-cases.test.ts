// Known ways around a regex policy (escapes, key order, duplicate keys, Unicode forms, numbers
// spelt otherwise, precedence between lists), each as a rule + input pair whose decision is
// asserted on a real host: the input goes through the pipeline's own parse, validation and
// canonical form (host.decide), and, where it matters, through a real call (host.call).
import { expect } from 'chai';
import { join } from 'node:path';
import type { HostConfig } from '../core/config-schema.ts';
import { createHost, type Host, type PolicyCheck } from '../core/host.ts';
import { FIXTURES } from './helpers.ts';

const KIT = join(FIXTURES, 'policy', 'tools.ts');

function hostWith(policy: HostConfig['policy']): Promise<Host> {
  return createHost({
    cwd: FIXTURES,
    audit: false,
    logLevel: 'error',
    config: { builtins: false, plugins: [{ module: KIT, isolation: 'inline' }], policy },
  });
}

function decided(check: PolicyCheck): Extract<PolicyCheck, { ok: true }> {
  if (!check.ok) throw new Error(`expected a decision, got ${check.code}: ${check.content}`);
  return check;
}

describe('policy: attack and precedence cases', () => {
  let host: Host | undefined;
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  it('25: deny beats a more specific allow; ask beats allow; no match falls to the default', async () => {
    host = await hostWith({
      default: 'deny',
      deny: [{ tool: 'shell_*', match: '"command":"rm ' }],
      ask: [{ tool: 'shell_run', where: { command: 'git push.*' } }],
      allow: [
        { tool: 'shell_run', where: { command: 'rm -rf /tmp/scratch' } },
        { tool: 'shell_run', where: { command: 'git push origin main' } },
      ],
    });
    const rm = decided(host.decide('shell_run', '{"command":"rm -rf /tmp/scratch"}'));
    expect(rm).to.include({ decision: 'deny' });
    expect(rm.rule?.id).to.equal('policy.deny[0]');
    const push = decided(host.decide('shell_run', '{"command":"git push origin main"}'));
    expect(push).to.include({ decision: 'ask' });
    expect(push.rule?.id).to.equal('policy.ask[0]');
    const other = decided(host.decide('shell_run', '{"command":"pwd"}'));
    expect(other.decision).to.equal('deny');
    expect(other.rule).to.equal(undefined);
    // The default for read-only tools is readOnlyDefault (allow unless set).
    expect(decided(host.decide('note_read', '{"path":"a"}')).decision).to.equal('allow');
  });

  describe('26–28, 30: the decision is made on the canonical input, not the raw text', () => {
    let shared: Host;
    before(async () => {
      shared = await hostWith({
        default: 'allow',
        deny: [{ tool: 'shell_run', match: '"command":"rm -rf', reason: 'no recursive deletes' }],
      });
    });
    after(() => shared.close());

    const denied = [
      ['26: a Unicode-escaped value', '{"command":"\\u0072m -rf /"}'],
      ['27: an escaped key', '{"\\u0063ommand":"rm -rf /"}'],
      ['28: whitespace and newlines between tokens', '{ "command" :\n\t "rm -rf /" }\n'],
      ['an escaped solidus', '{"command":"rm -rf \\/"}'],
    ] as const;
    for (const [name, raw] of denied) {
      it(`${name} is denied`, async () => {
        const h = shared;
        const check = decided(h.decide('shell_run', raw));
        expect(check).to.include({
          decision: 'deny',
          canonical: '{"command":"rm -rf /"}',
          reason: 'no recursive deletes',
        });
        const r = await h.call('shell_run', raw);
        expect(r).to.include({ isError: true, code: 'denied' });
        expect(r.content).to.include('no recursive deletes').and.include('policy.deny[0]');
      });
    }

    it('30: key order does not change the canonical input or the decision', async () => {
      const h = await hostWith({ default: 'allow', deny: [{ tool: 'open_echo', match: '^\\{"n":1,"text":"a"\\}$' }] });
      try {
        for (const raw of [
          '{"text":"a","n":1}',
          '{"n":1,"text":"a"}',
          '{"n":1.0,"text":"\\u0061"}',
          '{"n":1e0,"text":"a"}',
        ]) {
          expect(decided(h.decide('open_echo', raw)), raw).to.include({
            decision: 'deny',
            canonical: '{"n":1,"text":"a"}',
          });
        }
      } finally {
        await h.close();
      }
    });
  });

  it('29: duplicate keys are rejected before policy (the ls-then-rm allow bypass)', async () => {
    host = await hostWith({ default: 'deny', allow: [{ tool: 'shell_run', match: '"command":"(ls|cat) ' }] });
    const raw = '{"command":"ls -la","command":"rm -rf ~"}';
    const check = host.decide('shell_run', raw);
    expect(check).to.include({ ok: false, code: 'invalid_json' });
    const r = await host.call('shell_run', raw);
    expect(r).to.include({ isError: true, code: 'invalid_json' });
    expect(r.content).to.include('duplicate key "command"');
    // The same with the second key escaped, and with two keys that are one after Unicode NFC.
    expect(host.decide('shell_run', '{"command":"ls -la","\\u0063ommand":"rm -rf ~"}')).to.include({
      ok: false,
      code: 'invalid_json',
    });
    const nfc = host.decide('open_echo', '{"caf\\u00e9":1,"cafe\\u0301":2}');
    expect(nfc).to.include({ ok: false, code: 'invalid_json' });
    expect((nfc as { content: string }).content).to.include('Unicode-normalised');
    // Allowed input still passes: the rule works.
    expect(decided(host.decide('shell_run', '{"command":"ls -la"}')).decision).to.equal('allow');
  });

  it('31: __proto__, constructor and prototype keys are rejected before policy, escaped or not, text or object', async () => {
    host = await hostWith({ default: 'allow' });
    for (const raw of [
      '{"__proto__":{"command":"x"}}',
      '{"\\u005f_proto__":{}}',
      '{"constructor":{"prototype":{}}}',
      '{"text":"a","prototype":1}',
    ]) {
      expect(host.decide('open_echo', raw), raw).to.include({ ok: false, code: 'invalid_json' });
    }
    const parsed = JSON.parse('{"__proto__":{"polluted":true}}') as unknown;
    expect((await host.call('open_echo', parsed)).code).to.equal('invalid_json');
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });

  it('32: extra unknown fields are rejected by the closed schema before policy', async () => {
    host = await hostWith({ default: 'deny', allow: [{ tool: 'shell_run', where: { command: 'ls' } }] });
    const check = host.decide('shell_run', '{"command":"ls","sudo":true}');
    expect(check).to.include({ ok: false, code: 'invalid_input' });
    expect(decided(host.decide('shell_run', '{"command":"ls"}')).decision).to.equal('allow');
  });

  it('33: a pattern that cannot be matched in bounded time is a config error naming the rule; a backtracking bomb is time-bounded', async () => {
    const bad = (policy: HostConfig['policy']) =>
      hostWith(policy).then(
        (h) => {
          host = h;
          return 'loaded';
        },
        (e: Error & { code?: string }) => `${e.code}: ${e.message}`,
      );
    expect(await bad({ deny: [{ tool: 'shell_run', match: '(a)\\1' }] })).to.match(
      /^RH_ERR_CONFIG_INVALID: .*policy\.deny\[0\]\.match: .*uses a backreference, a lookaround/s,
    );
    expect(await bad({ ask: [{ tool: 'x' }, { tool: 'shell_run', where: { command: 'sudo(?!\\s+-n)' } }] })).to.include(
      'policy.ask[1].where.command',
    );
    expect(await bad({ allow: [{ tool: 'shell_run', match: '(' }] })).to.match(
      /policy\.allow\[0\]\.match: invalid regular expression/,
    );

    // (a+)+$ is accepted: V8 falls back to its linear engine when backtracking runs away, so
    // 20 000 characters decide at once instead of after 2^20000 steps.
    host = await hostWith({
      default: 'allow',
      deny: [
        { tool: 'shell_run', where: { command: '(a+)+' } },
        { tool: 'shell_run', match: '"(a|a)*"' },
      ],
    });
    const check = decided(host.decide('shell_run', JSON.stringify({ command: `${'a'.repeat(20_000)}!` })));
    expect(check.decision).to.equal('allow');
    expect(decided(host.decide('shell_run', '{"command":"aaaa"}')).decision).to.equal('deny');
  });

  it('34: a compound shell command does not inherit the allow of its first part', async () => {
    // Anchored per-field rule: the whole command must be `ls` or `cat` with plain arguments.
    host = await hostWith({
      default: 'ask',
      allow: [{ tool: 'shell_run', where: { command: '(ls|cat)( [^;&|`$()<>\\\\\\n]*)?' } }],
    });
    expect(decided(host.decide('shell_run', '{"command":"ls -la src"}')).decision).to.equal('allow');
    for (const command of [
      'ls && rm -rf x',
      'ls; rm -rf x',
      'ls | sh',
      'ls\nrm -rf x',
      'ls $(rm -rf x)',
      'ls `rm -rf x`',
      'cat x > /etc/passwd',
      'ls || curl x',
    ]) {
      expect(decided(host.decide('shell_run', JSON.stringify({ command }))).decision, command).to.equal('ask');
    }
    // In an allow rule `.` stops at a newline, so even a loose `ls.*` cannot carry a second line.
    const loose = await hostWith({ default: 'deny', allow: [{ tool: 'shell_run', where: { command: 'ls.*' } }] });
    try {
      expect(decided(loose.decide('shell_run', '{"command":"ls\\nrm -rf x"}')).decision).to.equal('deny');
    } finally {
      await loose.close();
    }
    // In a deny rule `.` spans lines, so a newline cannot split a command away from the rule.
    const strict = await hostWith({
      default: 'allow',
      deny: [{ tool: 'shell_run', where: { command: '.*rm -rf.*' } }],
    });
    try {
      expect(decided(strict.decide('shell_run', '{"command":"echo hi\\nrm -rf x"}')).decision).to.equal('deny');
    } finally {
      await strict.close();
    }
  });

  it('35: ask with no interactive approver (headless) is a denial that says why', async () => {
    host = await hostWith({ default: 'allow', ask: [{ tool: 'shell_run', reason: 'shell commands need a person' }] });
    expect(decided(host.decide('shell_run', '{"command":"ls"}')).decision).to.equal('ask');
    const r = await host.call('shell_run', '{"command":"ls"}');
    expect(r).to.include({ isError: true, code: 'denied' });
    expect(r.content)
      .to.include('needs approval')
      .and.include('shell commands need a person')
      .and.include('policy.ask[0]');
    expect(r.content).to.not.include('ran:');
  });

  it('36: a rule for one tool never matches another with a similar name (names and globs are anchored)', async () => {
    host = await hostWith({ default: 'allow', deny: [{ tool: 'shell_run' }, { tool: 'note_?ead' }] });
    expect(decided(host.decide('shell_run', '{"command":"ls"}')).decision).to.equal('deny');
    expect(decided(host.decide('shell_runner', '{"command":"ls"}')).decision).to.equal('allow');
    expect(decided(host.decide('note_read', '{"path":"a"}')).decision).to.equal('deny');
    const prefix = await hostWith({ default: 'allow', deny: [{ tool: 'shell_run*' }, { tool: 'open' }] });
    try {
      expect(decided(prefix.decide('shell_runner', '{"command":"ls"}')).decision).to.equal('deny');
      expect(decided(prefix.decide('open_echo', '{}')).decision).to.equal('allow');
    } finally {
      await prefix.close();
    }
  });
});
