// The policy on its own: rule compilation, precedence, defaults, the shipped rule, session rules.
import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { canonicalJson } from '../core/canonical-json.ts';
import type { PolicyConfig } from '../core/config-schema.ts';
import { compilePolicy, type Policy } from '../core/policy.ts';
import { HostError } from '../core/errors.ts';
import { nodeWithSource, ROOT } from './helpers.ts';

const tool = (name: string, readOnly = false) => ({ name, ...(readOnly ? { annotations: { readOnly: true } } : {}) });

/** Decides on a plain object input, computing its canonical JSON the way the dispatcher does. */
function decide(policy: Policy, name: string, input: Record<string, unknown>, sessionId?: string, readOnly = false) {
  return policy.decide(tool(name, readOnly), () => JSON.stringify(input), input, { sessionId });
}

/** The error compiling `config` throws, or undefined when it compiles. */
function configError(config: PolicyConfig, origin = 'rousseau.config.ts'): HostError | undefined {
  try {
    compilePolicy(config, origin);
  } catch (e) {
    return e as HostError;
  }
  return undefined;
}

describe('policy', () => {
  it('defaults: ask for other tools, allow for read-only ones; both configurable', () => {
    const p = compilePolicy({ builtinRules: false });
    expect(decide(p, 'write', {}).decision).to.equal('ask');
    expect(decide(p, 'read', {}, undefined, true).decision).to.equal('allow');
    const q = compilePolicy({ default: 'deny', readOnlyDefault: 'ask' });
    expect(decide(q, 'write', {}).decision).to.equal('deny');
    expect(decide(q, 'read', {}, undefined, true).decision).to.equal('ask');
  });

  it('precedence is deny, ask, allow whatever the order in the config', () => {
    const p = compilePolicy({ allow: [{ tool: '*' }], ask: [{ tool: 'b*' }], deny: [{ tool: 'bad' }] });
    expect(decide(p, 'bad', {})).to.deep.include({ decision: 'deny' });
    expect(decide(p, 'bad', {}).rule).to.include({ id: 'policy.deny[0]', list: 'deny', tool: 'bad' });
    expect(decide(p, 'bash', {}).rule?.id).to.equal('policy.ask[0]');
    expect(decide(p, 'cat', {}).rule?.id).to.equal('policy.allow[0]');
  });

  it('where: every field must be present and match in full; non-strings are matched as canonical JSON', () => {
    const p = compilePolicy({ default: 'deny', allow: [{ tool: 't', where: { path: 'src/.*', depth: '[0-3]' } }] });
    expect(decide(p, 't', { path: 'src/a.ts', depth: 2 }).decision).to.equal('allow');
    expect(decide(p, 't', { path: 'src/a.ts', depth: 12 }).decision).to.equal('deny');
    expect(decide(p, 't', { path: 'lib/src/a.ts', depth: 1 }).decision).to.equal('deny');
    expect(decide(p, 't', { path: 'src/a.ts' }).decision).to.equal('deny');
  });

  it('where: a key starting with / is a JSON pointer into nested input, array indexes and escapes included', () => {
    const p = compilePolicy({
      default: 'deny',
      allow: [
        {
          tool: 't',
          where: { '/headers/host': 'api\\.example\\.com', '/paths/0': 'src/.*', '/a~1b/~0c': 'yes', mode: 'read' },
        },
      ],
    });
    const input = {
      headers: { host: 'api.example.com' },
      paths: ['src/a.ts', '/etc/passwd'],
      'a/b': { '~c': 'yes' },
      mode: 'read',
    };
    expect(decide(p, 't', input).decision).to.equal('allow');
    expect(decide(p, 't', { ...input, headers: { host: 'api.example.com.evil.net' } }).decision).to.equal('deny');
    expect(decide(p, 't', { ...input, paths: ['/etc/passwd', 'src/a.ts'] }).decision).to.equal('deny');
    expect(decide(p, 't', { ...input, headers: {} }).decision).to.equal('deny'); // a missing field never matches
    expect(decide(p, 't', { ...input, headers: 'api.example.com' }).decision).to.equal('deny'); // nor a path through a string
    // Own properties only: a pointer cannot reach inherited ones.
    const q = compilePolicy({ default: 'deny', allow: [{ tool: 't', where: { '/o/toString': '.*' } }] });
    expect(decide(q, 't', { o: {} }).decision).to.equal('deny');
  });

  it('reads the canonical input only when a rule needs it', () => {
    let reads = 0;
    const p = compilePolicy({ allow: [{ tool: 'a' }], deny: [{ tool: 'b', match: 'x' }] });
    const canonical = () => {
      reads++;
      return '{}';
    };
    p.decide(tool('a'), canonical, {});
    expect(reads).to.equal(0);
    p.decide(tool('b'), canonical, {});
    expect(reads).to.equal(1);
  });

  it('a bad rule is a config error naming the file and the rule', () => {
    const error = configError({ deny: [{ tool: 'x', match: '[' }] }, '/project/rousseau.config.ts');
    expect(error).to.be.instanceOf(HostError);
    expect((error as HostError).code).to.equal('RH_ERR_CONFIG_INVALID');
    expect((error as HostError).message)
      .to.include('/project/rousseau.config.ts')
      .and.include('policy.deny[0].match: invalid regular expression');
  });

  it('a pattern or a where field NFC would change is a config error: input is NFC, so the rule could never match it', () => {
    // A decomposed é, as a macOS file name holds it: this deny rule matched nothing before.
    const pattern = configError({ deny: [{ tool: 't', where: { path: 'secrets/cafe\u0301\\.txt' } }] });
    expect(pattern?.code).to.equal('RH_ERR_CONFIG_INVALID');
    expect(pattern?.message)
      .to.include('policy.deny[0].where.path: the pattern is not in Unicode NFC')
      .and.include('"secrets/caf\\u00e9\\\\.txt"');
    expect(configError({ ask: [{ tool: 't', match: '\u212a' }] })?.message).to.include(
      'policy.ask[0].match: the pattern is not in Unicode NFC',
    );
    expect(configError({ deny: [{ tool: 't', where: { 'cafe\u0301': '.*' } }] })?.message).to.include(
      'the field name is not in Unicode NFC',
    );
    expect(
      configError({ deny: [{ tool: 't', where: { path: 'secrets/caf\u00e9\\.txt' }, match: '[\u0300-\u036f]' }] }),
    ).to.equal(undefined);
  });

  describe('regexes read decoded strings in where, escaped JSON text in match', () => {
    // The canonical text of {"command":"a<TAB>b"} holds a backslash and a t, not a tab.
    const input = { command: 'a\tb' };
    const canonical = () => canonicalJson(input);

    it('a match rule with \\s misses a tab: it reads the escaped canonical JSON', () => {
      const p = compilePolicy({ default: 'allow', deny: [{ tool: 't', match: 'a\\s+b' }] });
      expect(canonical()).to.equal('{"command":"a\\tb"}');
      expect(p.decide(tool('t'), canonical, input).decision).to.equal('allow');
      const escaped = compilePolicy({ default: 'allow', deny: [{ tool: 't', match: 'a(\\s|\\\\[tnr])+b' }] });
      expect(escaped.decide(tool('t'), canonical, input).decision).to.equal('deny');
    });

    it('a where rule with \\s matches the tab: a string field is tested decoded, nested ones through a JSON pointer', () => {
      const p = compilePolicy({
        default: 'allow',
        deny: [
          { tool: 't', where: { command: 'a\\s+b' } },
          { tool: 'u', where: { '/env/0': '.*\\s.*' } },
        ],
      });
      expect(p.decide(tool('t'), canonical, input).decision).to.equal('deny');
      const nested = { env: ['X=1\tY=2'] };
      expect(p.decide(tool('u'), () => canonicalJson(nested), nested).decision).to.equal('deny');
    });
  });

  it('reads only own keys: Object.prototype polluted while the policy compiles or decides changes no decision', () => {
    const proto = Object.prototype as Record<string, unknown>;
    const pollution: Record<string, unknown> = {
      match: 'never',
      where: { command: 'never' },
      default: 'allow',
      readOnlyDefault: 'allow',
      annotations: { readOnly: true },
      reason: 'polluted',
      rule: { id: 'polluted' },
    };
    const config = { builtinRules: false, deny: [{ tool: 'bash' }], ask: [{ tool: 'write' }] };
    const clean = compilePolicy(config);
    const expected = [decide(clean, 'bash', {}), decide(clean, 'write', {}), decide(clean, 'other', {})];
    expect(expected.map((d) => d.decision)).to.deep.equal(['deny', 'ask', 'ask']);
    try {
      Object.assign(proto, pollution);
      const polluted = compilePolicy(config);
      for (const p of [clean, polluted]) {
        const got = [decide(p, 'bash', {}), decide(p, 'write', {}), decide(p, 'other', {})];
        expect(got.map((d) => [d.decision, d.rule?.id, d.reason])).to.deep.equal(
          expected.map((d) => [d.decision, d.rule?.id, undefined]),
        );
      }
    } finally {
      for (const key of Object.keys(pollution)) delete proto[key];
    }
  });

  describe('the shipped rule for http_get', () => {
    const p = compilePolicy({ default: 'allow' });
    const blocked = [
      'https://169.254.169.254/latest/meta-data',
      'https://127.0.0.1:8443/',
      'https://LOCALHOST/',
      'https://user:pw@10.0.0.5/x',
      'https://192.168.1.1',
      'https://172.20.0.1/',
      'https://100.100.100.200/',
      'https://[::1]/',
      'https:\\\\169.254.169.254/',
      'https://metadata.google.internal/computeMetadata/v1/',
    ];
    for (const url of blocked) {
      it(`denies ${url}`, () => {
        const d = decide(p, 'http_get', { url });
        expect(d.decision).to.equal('deny');
        expect(d.rule?.id).to.equal('builtin.deny[0]');
        expect(d.reason).to.include('private');
      });
    }
    it("compiles at the first call of the tool it names: a policy without regexes leaves V8's regex flags alone", () => {
      // The flags are process-wide (and other tests switch them on), so this runs in a process of its own.
      const script = nodeWithSource(
        'core/policy.ts',
        `const linear = () => { try { return new RegExp('a', 'l').test('a'); } catch { return false; } };
        const p = $.compilePolicy({ deny: [{ tool: 'shell_run' }] });
        const before = linear();
        p.decide({ name: 'read' }, () => '{}', {});
        const unrelated = linear();
        const d = p.decide({ name: 'http_get' }, () => '{}', { url: 'http://127.0.0.1/' });
        process.stdout.write(JSON.stringify([before, unrelated, linear(), d.rule.id]));`,
      );
      const out = execFileSync(process.execPath, script, { cwd: ROOT, encoding: 'utf8' });
      expect(JSON.parse(out)).to.deep.equal([false, false, true, 'builtin.deny[0]']);
    });

    it('lets public addresses through, and can be turned off', () => {
      for (const url of [
        'https://example.com/',
        'https://api.github.com/?next=http://127.0.0.1/',
        'https://172.32.0.1/',
      ]) {
        expect(decide(p, 'http_get', { url }).decision, url).to.equal('allow');
      }
      expect(
        decide(compilePolicy({ default: 'allow', builtinRules: false }), 'http_get', { url: 'https://127.0.0.1/' })
          .decision,
      ).to.equal('allow');
    });
  });

  describe('session rules ("always")', () => {
    it('allow exactly one tool + canonical input in one session, and nothing else', () => {
      const p = compilePolicy({ default: 'ask' });
      const rule = p.allowForSession('bash', '{"command":"ls"}', { sessionId: 's1' });
      expect(rule).to.include({ id: 'session.allow[0]', list: 'allow', tool: 'bash', input: '{"command":"ls"}' });
      const granted = decide(p, 'bash', { command: 'ls' }, 's1');
      expect(granted.decision).to.equal('allow');
      expect(granted.rule).to.equal(rule);
      expect(decide(p, 'bash', { command: 'ls -la' }, 's1').decision).to.equal('ask');
      expect(decide(p, 'bash', { command: 'ls' }, 's2').decision).to.equal('ask');
      expect(decide(p, 'bash', { command: 'ls' }).decision).to.equal('ask');
      expect(decide(p, 'sh', { command: 'ls' }, 's1').decision).to.equal('ask');
      // The same answer twice is one rule.
      expect(p.allowForSession('bash', '{"command":"ls"}', { sessionId: 's1' })).to.equal(rule);
    });

    it('never overrides a deny', () => {
      const p = compilePolicy({ deny: [{ tool: 'bash', match: 'rm' }] });
      p.allowForSession('bash', '{"command":"rm x"}', { sessionId: 's' });
      expect(decide(p, 'bash', { command: 'rm x' }, 's').decision).to.equal('deny');
    });
  });
});
