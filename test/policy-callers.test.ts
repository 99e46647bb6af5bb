// Rules that name callers and scopes: which calls they match, which tools a caller can ever call,
// "always" grants kept per caller, the config errors, and the same through a real host's calls.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateConfig } from '../core/config.ts';
import type { PolicyConfig } from '../core/config-schema.ts';
import { HostError } from '../core/errors.ts';
import { createHost, type Host } from '../core/host.ts';
import { compilePolicy, type Policy } from '../core/policy.ts';
import type { Caller } from '../core/types.ts';
import { tempDir } from './helpers.ts';

const alice: Caller = { name: 'alice', scopes: ['tools:read'], via: 'token' };
const bob: Caller = { name: 'bob', scopes: ['tools:write', 'admin'], via: 'oauth' };
const carol: Caller = { name: 'carol', scopes: [], via: 'token' };

const tool = (name: string, readOnly = false) => ({ name, ...(readOnly ? { annotations: { readOnly: true } } : {}) });

function decide(
  policy: Policy,
  name: string,
  caller?: Caller,
  input: Record<string, unknown> = {},
  sessionId?: string,
) {
  return policy.decide(tool(name), () => JSON.stringify(input), input, {
    ...(caller ? { caller } : {}),
    ...(sessionId ? { sessionId } : {}),
  }).decision;
}

/** The config error's message for a policy, or undefined when it validates. */
function configError(policy: unknown): string | undefined {
  try {
    validateConfig({ policy }, 'rousseau.config.ts');
  } catch (error) {
    expect(error).to.be.instanceOf(HostError);
    expect((error as HostError).code).to.equal('RH_ERR_CONFIG_INVALID');
    return (error as HostError).message;
  }
  return undefined;
}

describe('policy: callers and scopes', () => {
  it('a rule naming callers matches only calls from one of them, never a call without a caller', () => {
    const p = compilePolicy({ default: 'allow', deny: [{ tool: 'bash', callers: ['alice', 'carol'] }] });
    expect(decide(p, 'bash', alice)).to.equal('deny');
    expect(decide(p, 'bash', carol)).to.equal('deny');
    expect(decide(p, 'bash', bob)).to.equal('allow');
    expect(decide(p, 'bash')).to.equal('allow');
    expect(decide(p, 'sh', alice), 'other tools are not concerned').to.equal('allow');
  });

  it('scopes: any one of them is enough; with callers too, both must hold', () => {
    const p = compilePolicy({
      default: 'deny',
      allow: [
        { tool: 'write', scopes: ['tools:write', 'root'] },
        { tool: 'read', callers: ['alice', 'bob'], scopes: ['tools:read'] },
      ],
    });
    expect(decide(p, 'write', bob)).to.equal('allow');
    expect(decide(p, 'write', alice)).to.equal('deny');
    expect(decide(p, 'write', carol)).to.equal('deny');
    expect(decide(p, 'write')).to.equal('deny');
    expect(decide(p, 'read', alice)).to.equal('allow');
    expect(decide(p, 'read', bob), 'bob is named but lacks the scope').to.equal('deny');
    expect(
      decide(p, 'read', { name: 'dave', scopes: ['tools:read'], via: 'token' }),
      'the scope, not the name',
    ).to.equal('deny');
  });

  it('precedence is unchanged: a deny for one caller beats an allow for everyone, for that caller only', () => {
    const p = compilePolicy({
      allow: [{ tool: 'http_*' }],
      ask: [{ tool: 'http_post', scopes: ['guest'] }],
      deny: [{ tool: 'http_*', callers: ['carol'], match: 'internal', reason: 'carol stays outside' }],
    });
    const input = { url: 'https://internal.example/' };
    const denied = p.decide(tool('http_get'), () => JSON.stringify(input), input, { caller: carol });
    expect(denied).to.deep.include({ decision: 'deny', reason: 'carol stays outside' });
    expect(denied.rule?.id).to.equal('policy.deny[0]');
    expect(decide(p, 'http_get', carol, { url: 'https://example.com/' })).to.equal('allow');
    expect(decide(p, 'http_get', alice, input)).to.equal('allow');
    expect(decide(p, 'http_post', { name: 'g', scopes: ['guest'], via: 'token' })).to.equal('ask');
    expect(decide(p, 'http_post', alice)).to.equal('allow');
  });

  it('"always" grants belong to the caller that got them: not to another caller, nor to calls without one, in the same session', () => {
    const p = compilePolicy({ default: 'ask' });
    const rule = p.allowForSession('bash', '{"command":"ls"}', { caller: alice, sessionId: 's1' });
    expect(decide(p, 'bash', alice, { command: 'ls' }, 's1')).to.equal('allow');
    expect(decide(p, 'bash', bob, { command: 'ls' }, 's1')).to.equal('ask');
    expect(decide(p, 'bash', undefined, { command: 'ls' }, 's1')).to.equal('ask');
    expect(decide(p, 'bash', alice, { command: 'ls' }, 's2')).to.equal('ask');
    // The host's lifetime (no session) is shared by nobody either.
    p.allowForSession('bash', '{"command":"pwd"}', {});
    expect(decide(p, 'bash', undefined, { command: 'pwd' })).to.equal('allow');
    expect(decide(p, 'bash', alice, { command: 'pwd' })).to.equal('ask');
    expect(p.allowForSession('bash', '{"command":"ls"}', { caller: alice, sessionId: 's1' })).to.equal(rule);
  });

  it('a caller is read from its own properties: Object.prototype lends no one a scope or a name', () => {
    const p = compilePolicy({ default: 'deny', allow: [{ tool: 'write', scopes: ['admin'] }] });
    const proto = Object.prototype as Record<string, unknown>;
    proto.scopes = ['admin'];
    proto.caller = bob;
    try {
      const noScopes = { name: 'eve', via: 'token' } as unknown as Caller;
      expect(decide(p, 'write', noScopes)).to.equal('deny');
      expect(p.decide(tool('write'), () => '{}', {}, {}).decision, 'no own caller').to.equal('deny');
      expect(p.canEverCall(tool('write'), noScopes)).to.equal(false);
    } finally {
      delete proto.scopes;
      delete proto.caller;
    }
  });

  describe('canEverCall: which tools a caller sees', () => {
    const policy: PolicyConfig = {
      default: 'deny',
      readOnlyDefault: 'allow',
      deny: [
        { tool: 'bash', callers: ['carol'] },
        { tool: 'fetch', scopes: ['tools:read'], where: { url: 'http://.*' } },
        { tool: 'secret_*', scopes: ['guest'] },
      ],
      ask: [{ tool: 'bash', scopes: ['admin'] }],
      allow: [
        { tool: 'write', scopes: ['tools:write'] },
        { tool: 'fetch', where: { url: 'https://.*' } },
      ],
    };
    const p = compilePolicy(policy);

    it('hidden: an input-blind deny that applies to the caller, or a deny default nothing lifts for them', () => {
      expect(p.canEverCall(tool('bash'), carol), 'denied by name').to.equal(false);
      expect(p.canEverCall(tool('bash'), bob), 'asked').to.equal(true);
      expect(p.canEverCall(tool('bash'), alice), 'default deny, no rule for alice').to.equal(false);
      expect(p.canEverCall(tool('write'), bob)).to.equal(true);
      expect(p.canEverCall(tool('write'), alice)).to.equal(false);
      expect(p.canEverCall(tool('secret_read', true), { name: 'g', scopes: ['guest'], via: 'token' })).to.equal(false);
      expect(p.canEverCall(tool('secret_read', true), alice), 'read-only default allows').to.equal(true);
    });

    it('visible: a deny that reads the input leaves other inputs to the rules below it', () => {
      expect(p.canEverCall(tool('fetch'), alice), 'https is allowed for everyone').to.equal(true);
      const strict = compilePolicy({ default: 'deny', deny: [{ tool: 'fetch', match: 'http' }] });
      expect(strict.canEverCall(tool('fetch'), alice), 'no rule lets anything through').to.equal(false);
    });

    it('without a caller every tool is visible, whatever the rules: local calls are told why they are denied', () => {
      expect(p.canEverCall(tool('bash'), undefined)).to.equal(true);
      expect(compilePolicy({ deny: [{ tool: '*' }] }).canEverCall(tool('x'), undefined)).to.equal(true);
    });
  });

  it('config errors: empty lists, empty or non-string names, misspelt keys, each named', () => {
    expect(configError({ deny: [{ tool: 'bash', callers: ['alice'], scopes: ['admin'] }] })).to.equal(undefined);
    expect(configError({ deny: [{ tool: 'bash', callers: [] }] })).to.include(
      'policy.deny[0].callers: must not have fewer than 1 items',
    );
    expect(configError({ allow: [{ tool: 'bash', scopes: [] }] })).to.include('policy.allow[0].scopes: must not have');
    expect(configError({ ask: [{ tool: 'bash', callers: ['alice', 7] }] })).to.include(
      'policy.ask[0].callers[1]: must be string',
    );
    expect(configError({ ask: [{ tool: 'bash', scopes: [''] }] })).to.include('policy.ask[0].scopes[0]');
    expect(configError({ deny: [{ tool: 'bash', callers: 'alice' }] })).to.include('policy.deny[0].callers');
    expect(configError({ deny: [{ tool: 'bash', caller: ['alice'] }] })).to.include(
      'policy.deny[0].caller: unknown key (did you mean "callers"?)',
    );
  });

  describe('through the host', () => {
    const tmp = tempDir('rh-callers-');
    const audit = join(tmp.dir, 'audit.jsonl');
    let host: Host;
    before(async () => {
      tmp.write(
        'tools.mjs',
        `export default { name: 'kit', version: '1.0.0', tools: ['open', 'admin_reset'].map((name) => ({
          name, description: 'Answers its name.', inputSchema: { type: 'object', properties: {} }, execute: () => name,
        })) };`,
      );
      host = await createHost({
        cwd: tmp.dir,
        audit,
        logLevel: 'error',
        config: {
          builtins: false,
          plugins: [{ module: './tools.mjs', isolation: 'inline' }],
          policy: {
            default: 'allow',
            deny: [
              { tool: 'admin_*', reason: 'admins only' },
              { tool: '*', callers: ['scraper'], reason: 'reads /metrics only' },
            ],
            allow: [],
          },
        },
      });
    });
    after(async () => {
      await host.close();
      tmp.cleanup();
    });

    it('a hidden tool is an unknown tool to the caller, whose list of tools leaves it out; local calls are told the denial', async () => {
      const hidden = await host.call('admin_reset', {}, { caller: alice });
      expect(hidden).to.include({ isError: true, code: 'unknown_tool' });
      expect(hidden.content).to.equal('Unknown tool "admin_reset". Available tools: open.');
      expect(host.decide('admin_reset', '{}', { caller: alice })).to.include({ ok: false, code: 'unknown_tool' });
      // Not even its schema shows through: bad input to a hidden tool is still an unknown tool.
      expect(await host.call('admin_reset', '{"x":', { caller: alice })).to.include({ code: 'unknown_tool' });
      expect(await host.call('open', {}, { caller: alice })).to.include({ isError: false, content: 'open' });
      // A caller that sees no tool at all is told that, not that none loaded.
      const shut = await host.call('open', {}, { caller: { ...alice, name: 'scraper' } });
      expect(shut.content).to.equal('Unknown tool "open". No tool is open to this caller.');
      const local = await host.call('admin_reset', {});
      expect(local).to.include({ code: 'denied' });
      expect(local.content).to.include('admins only');
      await host.close();
      const lines = readFileSync(audit, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const hiddenLine = lines.find((l) => l.tool === 'admin_reset' && l.caller === 'alice');
      expect(hiddenLine, 'the refused call is audited with its caller').to.include({
        event: 'call',
        code: 'unknown_tool',
      });
      expect(hiddenLine).to.not.have.property('plugin');
    });
  });
});
