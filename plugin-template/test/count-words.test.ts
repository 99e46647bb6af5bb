// count_words, called directly: what it counts, how it caps its listing, and that it stops when aborted.
import { expect } from 'chai';
import { countWords } from '../src/count-words.ts';
import { textOf, toolContext } from './context.ts';

describe('count_words', () => {
  it('counts words and lists the most frequent first, ties in alphabetical order', async () => {
    const out = textOf(
      await countWords.execute({ text: 'The cat saw the dog; the DOG ran. Cat-like, isn’t it?' }, toolContext()),
    );
    expect(out.split('\n')).to.deep.equal([
      '11 words, 8 distinct',
      'the: 3',
      'dog: 2',
      'cat: 1',
      'cat-like: 1',
      'isn’t: 1',
      'it: 1',
      'ran: 1',
      'saw: 1',
    ]);
  });

  it('keeps case apart when ignore_case is false', async () => {
    const out = textOf(await countWords.execute({ text: 'Go go GO', ignore_case: false, top: 1 }, toolContext()));
    expect(out.split('\n')).to.deep.equal(['3 words, 3 distinct', 'GO: 1', '(2 more distinct words not listed)']);
  });

  it('bounds its output whatever the input: top lines at most, long words cut', async () => {
    const words = Array.from({ length: 5000 }, (_, i) => `${'w'.repeat(200)}${i.toString(36)}`);
    const out = textOf(await countWords.execute({ text: words.join(' '), top: 50 }, toolContext()));
    const lines = out.split('\n');
    expect(lines).to.have.length(52); // summary + 50 words + "more" line
    expect(lines.at(-1)).to.equal('(4950 more distinct words not listed)');
    expect(Math.max(...lines.map((l) => l.length))).to.be.at.most(60);
  });

  it('gives up when the call is aborted, instead of running to the end', async () => {
    const controller = new AbortController();
    const text = 'word '.repeat(200_000);
    const running = countWords.execute({ text }, toolContext({ signal: controller.signal }));
    controller.abort(new DOMException('timed out', 'TimeoutError'));
    const thrown = await Promise.resolve(running).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(thrown).to.be.instanceOf(DOMException).with.property('name', 'TimeoutError');
  });
});
