import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGENT_ERROR_CODES, RUN_STOP_REASONS } from '../core/agent/agent.ts';
import { PROVIDER_ERROR_CODES } from '../core/agent/messages.ts';
import { HOST_ERROR_CODES, hostError, messageOf, RESULT_CODES } from '../core/errors.ts';
import { ROOT } from './helpers.ts';

describe('error codes', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');

  it('documents every result code and every host error code', () => {
    for (const code of [...RESULT_CODES, ...HOST_ERROR_CODES]) expect(doc, code).to.contain(`| \`${code}\` |`);
  });

  it('documents every stop reason of an agent run, and every agent and provider error code', () => {
    const agent = doc.slice(doc.indexOf('## Agent runs'));
    expect(agent).to.not.equal(doc.slice(-1));
    for (const code of [...RUN_STOP_REASONS, ...AGENT_ERROR_CODES, ...PROVIDER_ERROR_CODES])
      expect(agent, code).to.contain(`| \`${code}\` |`);
  });

  it('builds messages from the registered templates, in argument order', () => {
    const e = hostError('RH_ERR_PLUGIN_LOAD_TIMEOUT', ['./slow', 300, 'why']);
    expect(e.code).to.equal('RH_ERR_PLUGIN_LOAD_TIMEOUT');
    expect(e.message).to.equal("Plugin './slow' did not finish loading within 300 ms (why)");
    const cause = new Error('root');
    expect(hostError('RH_ERR_PLUGIN_IMPORT', ['x', 'y'], cause).cause).to.equal(cause);
  });

  it('messageOf describes anything thrown and never throws itself', () => {
    const boom = () => {
      throw new Error('trap');
    };
    const messageGetter = new Error('hidden');
    Object.defineProperty(messageGetter, 'message', { get: boom });
    const proxy = new Proxy({}, { get: boom, getPrototypeOf: boom, ownKeys: boom, getOwnPropertyDescriptor: boom });
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const bare: unknown = Object.defineProperty(Object.create(null), 'toJSON', { get: boom });
    for (const thrown of [messageGetter, proxy, revoked.proxy, bare])
      expect(messageOf(thrown)).to.be.a('string').and.not.equal('');
    expect(messageOf(new Error('plain'))).to.equal('plain');
    expect(messageOf('text')).to.equal('text');
    expect(messageOf({ a: 1 })).to.equal('{"a":1}');
  });
});
