import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { promptApprover } from '../../core/cli/approve-prompt.ts';
import type { ApprovalRequest } from '../../core/dispatch.ts';

describe('the approval prompt', () => {
  it('escapes control and bidi characters from the tool, the plugin, the reason and the input', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d: Buffer) => (shown += d.toString()));
    const approve = promptApprover(input, output);
    // The input shows as `rm -rf ~ # txt.gnp` reversed into a harmless-looking name, and an ESC sequence would clear the line.
    const request = {
      tool: { name: 'bash\u001b[2K', plugin: 'shell\u202e', description: '', inputSchema: {} },
      input: JSON.stringify({ command: 'cat \u202egnp.txt\u202c; rm -rf ~ \u2066x\u2069\r\u0085' }),
      decision: { decision: 'ask', reason: 'runs \u200fcommands' },
      callId: 'c1',
    } as unknown as ApprovalRequest;
    const pending = approve(request);
    await new Promise((resolve) => setImmediate(resolve));
    input.write('n\n');
    expect(await pending).to.equal(false);
    expect(shown).to.not.match(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    expect(shown).to.contain(
      'bash\\u001b[2K (plugin shell\\u202e) needs approval: the default policy, runs \\u200fcommands.',
    );
    expect(shown).to.contain('input: {"command":"cat \\u202egnp.txt\\u202c; rm -rf ~ \\u2066x\\u2069\\r\\u0085"}');
  });
});
