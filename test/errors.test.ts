import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOST_ERROR_CODES, hostError, messageOf, RESULT_CODES } from '../core/errors.ts';
import { ROOT } from './helpers.ts';

describe('error codes', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');

  it('documents every result code and every host error code', () => {
    for (const code of [...RESULT_CODES, ...HOST_ERROR_CODES]) expect(doc, code).to.contain(`| \`${code}\` |`);
  });

  it('builds messages from the registered templates, in argument order', () => {
    const e = hostError('RH_ERR_PLUGIN_LOAD_TIMEOUT', ['./slow', 300]);
    expect(e.code).to.equal('RH_ERR_PLUGIN_LOAD_TIMEOUT');
    expect(e.message).to.match(/^Plugin '\.\/slow' did not finish loading within 300 ms/);
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
    for (const thrown of [messageGetter, proxy, revoked.proxy, bare]) expect(messageOf(thrown)).to.be.a('string').and.not.equal('');
    expect(messageOf(new Error('plain'))).to.equal('plain');
    expect(messageOf('text')).to.equal('text');
    expect(messageOf({ a: 1 })).to.equal('{"a":1}');
  });
});
