import { expect } from 'chai';
import type { ToolCall } from '../../../core/agent/messages.ts';
import { Display } from '../../../core/cli/repl/display.ts';
import type { ContentBlock } from '../../../core/contract.ts';
import { textOf } from '../../../core/block-text.ts';
import type { CallResult } from '../../../core/types.ts';
import { PNG } from '../../agent/helpers.ts';
import { capturingStderr } from '../../helpers.ts';

const call: ToolCall = { id: 'c1', name: 'shot', arguments: '{}' };
const blocks: ContentBlock[] = [
  { type: 'text', text: 'x'.repeat(300) },
  { type: 'image', data: PNG, mimeType: 'image/png' },
  { type: 'resource_link', uri: 'file:///w/a.pdf', name: 'a.pdf' },
];
// The content as `host.call` gives it: the text, each other block named.
const result: CallResult = { isError: false, content: textOf(blocks), durationMs: 3, blocks };

/** What the display writes to stderr for one call and its result. */
async function shown(live: boolean, done: CallResult): Promise<string> {
  const display = new Display({ live, colour: false, streamText: false, columns: () => 100 });
  const { stderr } = await capturingStderr(async () => {
    display.show({ type: 'tool_call', call, tool: 'shot' });
    display.show({ type: 'tool_result', call, result: done });
    display.show({
      type: 'turn_end',
      turn: 1,
      stopReason: 'tool_use',
      usage: { inputTokens: 0, outputTokens: 0 },
      session: { usage: { inputTokens: 0, outputTokens: 0 } },
    });
  });
  return stderr;
}

describe('the REPL display of a result with blocks', () => {
  it('names the non-text blocks before the clipped text, on a terminal and off one', async () => {
    expect(await shown(false, result)).to.include('✓ shot (3 ms) [image image/png, link file:///w/a.pdf]: xxx');
    expect(await shown(true, result)).to.match(
      /✓ shot \{\}\s+3 ms\s+\[image image\/png, link file:\/\/\/w\/a\.pdf\] xxx/,
    );
  });

  it('shows a result without blocks as before', async () => {
    const { blocks: _, ...plain } = result;
    expect(await shown(false, plain)).to.include('✓ shot (3 ms): xxx');
  });
});
