import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOST_ERROR_CODES, hostError, RESULT_CODES } from '../core/errors.ts';
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
});
