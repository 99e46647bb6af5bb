// A call's own approver (`CallOptions.approve`, what an MCP client that can elicit supplies) answers
// its `ask` instead of the host's, and the audit's decision line says who answered.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApproveFn } from '../core/dispatch.ts';
import { createHost, type Host } from '../core/host.ts';
import { FIXTURES, tempDir, until } from './helpers.ts';

const KIT = join(FIXTURES, 'policy', 'tools.ts');

describe('dispatch: a per-call approver', () => {
  const tmp = tempDir('rh-approve-');
  const audit = join(tmp.dir, 'audit.jsonl');
  let host: Host;
  const hostAsked: string[] = [];

  before(async () => {
    host = await createHost({
      cwd: FIXTURES,
      audit,
      logLevel: 'error',
      approve: Object.assign(
        (request: Parameters<ApproveFn>[0]) => {
          hostAsked.push(request.input);
          return false;
        },
        { answeredBy: 'embedder' },
      ),
      config: {
        builtins: false,
        plugins: [{ module: KIT, isolation: 'inline' }],
        policy: { default: 'ask' },
      },
    });
  });
  after(async () => {
    await host.close();
    tmp.cleanup();
  });

  const answers = () =>
    readFileSync(audit, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; answer?: string; answeredBy?: string })
      .filter((l) => l.event === 'decision')
      .map((l) => [l.answer, l.answeredBy]);

  it("answers the call's ask instead of the host's approver, and is audited as who answered", async () => {
    const mine = Object.assign(async () => true as const, { answeredBy: 'mcp-client' });
    const ran = await host.call('shell_run', '{"command":"ls"}', { approve: mine });
    expect(ran).to.include({ isError: false, content: 'ran: ls' });
    const refused = await host.call('shell_run', '{"command":"pwd"}');
    expect(refused.code).to.equal('denied');
    expect(hostAsked).to.deep.equal(['{"command":"pwd"}']);
    // An approver without a name leaves the field out.
    await host.call('shell_run', '{"command":"id"}', { approve: () => false });
    expect(await until(() => answers().length === 3 && answers())).to.deep.equal([
      ['approved', 'mcp-client'],
      ['refused', 'embedder'],
      ['refused', undefined],
    ]);
  });

  it('takes the approver only as an own property of the options', async () => {
    const options = Object.create({ approve: () => true });
    const result = await host.call('shell_run', '{"command":"whoami"}', options);
    expect(result.code).to.equal('denied');
    expect(hostAsked).to.include('{"command":"whoami"}');
  });
});
