import { expect } from 'chai';
import { hostError } from '../core/errors.ts';
import { Limiter } from '../core/limiter.ts';
import { type PluginHandle, Registry, type ToolDefinition } from '../core/registry.ts';
import type { PluginRunner } from '../core/runners/runner.ts';

function handle(name: string, extra: Partial<PluginHandle> = {}): PluginHandle {
  return {
    name,
    source: `./${name}.ts`,
    isolation: 'inline',
    limiter: new Limiter(1, 1),
    timeoutMs: 1_000,
    maxOutputBytes: 1_000,
    warnings: [],
    ...extra,
  };
}

function tool(name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition {
  return { name, description: `${name}.`, inputSchema: { type: 'object', properties: {} }, ...extra };
}

describe('Registry', () => {
  it('lists tools sorted by name whatever order plugins were added in, and again after each add', () => {
    const registry = new Registry();
    expect(registry.add(handle('p1'), [tool('zeta'), tool('Alpha')])).to.equal(undefined);
    expect(registry.names()).to.deep.equal(['Alpha', 'zeta']); // code-unit order: upper case first
    expect(registry.add(handle('p2'), [tool('beta'), tool('alpha')])).to.equal(undefined);
    expect(registry.names()).to.deep.equal(['Alpha', 'alpha', 'beta', 'zeta']);
    expect(registry.tools().map((t) => t.plugin)).to.deep.equal(['p1', 'p2', 'p2', 'p1']);
  });

  it('a tool name taken by another plugin fails the newcomer whole: none of its tools is added', () => {
    const registry = new Registry();
    registry.add(handle('first'), [tool('read')]);
    const second = handle('second');
    const error = registry.add(second, [tool('write'), tool('read')]);
    expect(error?.code).to.equal('RH_ERR_TOOL_COLLISION');
    expect(error?.message).to.equal(
      "Tool 'read' of plugin 'second' collides with the tool of the same name in plugin 'first'",
    );
    expect(second.error).to.equal(error);
    expect(registry.names()).to.deep.equal(['read']);
    expect(registry.get('read')!.plugin.name).to.equal('first');
    expect(registry.plugins().map((p) => [p.name, p.status, p.tools.length])).to.deep.equal([
      ['first', 'loaded', 1],
      ['second', 'failed', 0],
    ]);
  });

  it('a plugin name taken by a loaded plugin fails the newcomer; a failed plugin does not hold its name', () => {
    const registry = new Registry();
    registry.addFailed(
      Object.assign(handle('dup'), { error: hostError('RH_ERR_PLUGIN_IMPORT', ['./dup.ts', 'boom']) }),
    );
    expect(registry.add(handle('dup', { source: './second.ts' }), [tool('one')])).to.equal(undefined);
    const third = registry.add(handle('dup', { source: './third.ts' }), [tool('two')]);
    expect(third?.code).to.equal('RH_ERR_PLUGIN_DUPLICATE');
    expect(third?.message).to.include('./second.ts');
    expect(registry.names()).to.deep.equal(['one']);
    expect(registry.plugins().map((p) => [p.source, p.status])).to.deep.equal([
      ['./dup.ts', 'failed'],
      ['./second.ts', 'loaded'],
      ['./third.ts', 'failed'],
    ]);
  });

  it("lists plugins in the order they were added, failed ones with their error, and a tool's own timeout over its plugin's", () => {
    const registry = new Registry();
    const broken = handle('broken', { loadMs: 12.345 });
    broken.error = hostError('RH_ERR_PLUGIN_IMPORT', ['./broken.ts', 'boom']);
    registry.addFailed(broken);
    registry.add(handle('ok', { version: '1.2.3', timeoutMs: 500 }), [
      tool('slow', { timeoutMs: 9_000 }),
      tool('quick'),
    ]);
    const [first, second] = registry.plugins();
    expect(first).to.include({ name: 'broken', status: 'failed', loadMs: 12.3 });
    expect(first!.error).to.include({ code: 'RH_ERR_PLUGIN_IMPORT' });
    expect(second).to.include({ name: 'ok', status: 'loaded', version: '1.2.3' });
    expect(second!.error).to.equal(undefined);
    expect(second!.tools.map((t) => t.name)).to.deep.equal(['quick', 'slow']);
    expect(registry.get('slow')!.timeoutMs).to.equal(9_000);
    expect(registry.get('quick')!.timeoutMs).to.equal(500);
    expect(registry.get('missing')).to.equal(undefined);
  });

  it("shows a plugin as quarantined while its runner says so, with the runner's reason, then loaded again", () => {
    let health = { quarantined: true, reason: '3 crashes' };
    const runner = { health: () => health } as unknown as PluginRunner;
    const registry = new Registry();
    registry.add(handle('flaky', { runner, isolation: 'worker' }), [tool('f')]);
    expect(registry.plugins()[0]).to.deep.include({
      status: 'quarantined',
      error: { code: 'quarantined', message: '3 crashes' },
    });
    expect(registry.plugins()[0]!.tools).to.have.length(1); // its tools stay listed: calls fail fast meanwhile
    health = { quarantined: false, reason: '' };
    expect(registry.plugins()[0]).to.include({ status: 'loaded' }).and.not.have.property('error');
  });

  it('compiles a schema on first use only, and knows whether it declares defaults', () => {
    const registry = new Registry();
    registry.add(handle('p'), [
      tool('plain'),
      tool('defaulted', { inputSchema: { type: 'object', properties: { n: { type: 'number', default: 1 } } } }),
    ]);
    const plain = registry.get('plain')!;
    expect(plain.hasDefaults).to.equal(false);
    expect(registry.get('defaulted')!.hasDefaults).to.equal(true);
    const validator = plain.validator();
    expect(plain.validator()).to.equal(validator);
    expect(validator.Check({})).to.equal(true);
  });
});
