import { expect } from 'chai';
import Type, { type TSchema } from 'typebox';
import { capOutput, capTexts, DEFAULT_MAX_OUTPUT_BYTES, normalise, type OutputTool } from '../core/output.ts';
import { validatorFor } from '../core/shared-validators.ts';

describe('output cap', () => {
  it('leaves output under the cap alone', () => {
    expect(capOutput('short', 100)).to.deep.equal({ text: 'short', truncated: false });
    const exact = 'x'.repeat(100);
    expect(capOutput(exact, 100)).to.deep.equal({ text: exact, truncated: false });
  });

  it('keeps the head and the tail with a marker that says how much was cut', () => {
    const text = `BEGIN${'.'.repeat(10_000)}END`;
    const { text: out, truncated } = capOutput(text, 1000);
    expect(truncated).to.equal(true);
    expect(out.startsWith('BEGIN')).to.equal(true);
    expect(out.endsWith('END')).to.equal(true);
    expect(out).to.match(/\[… 9008 bytes omitted of 10008: output capped at 1000 bytes, head and tail kept …\]/);
    expect(Buffer.byteLength(out) - Buffer.byteLength(out.match(/\n\n\[.*\]\n\n/)![0])).to.be.at.most(1000);
  });

  it('never splits a multi-byte character', () => {
    const text = '€'.repeat(5000); // 3 bytes each
    const { text: out } = capOutput(text, 1001);
    expect(out).to.not.contain('\uFFFD');
    const [head, tail] = out.split(/\n\n\[.*\]\n\n/);
    expect(head).to.match(/^€+$/);
    expect(tail).to.match(/^€+$/);
  });

  it('counts bytes, not characters', () => {
    expect(capOutput('é'.repeat(600), 1000).truncated).to.equal(true); // 600 chars, 1200 bytes
    expect(capOutput('e'.repeat(600), 1000).truncated).to.equal(false);
  });

  it('documents its default: 64 KiB', () => {
    expect(DEFAULT_MAX_OUTPUT_BYTES).to.equal(65536);
  });
});

describe('normalise: content blocks and structured data', () => {
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
  const tool = (maxOutputBytes = 1000, outputSchema?: TSchema): OutputTool => ({
    info: { name: 't' },
    plugin: { isolation: 'inline', maxOutputBytes },
    ...(outputSchema ? { outputValidator: () => validatorFor(outputSchema) } : {}),
  });
  const ok = (step: ReturnType<typeof normalise>) => {
    if (!step.ok) throw new Error(`expected a result, got ${step.code}: ${step.content}`);
    return step.result;
  };

  it('keeps blocks as copies of their known fields, and names the non-text ones in the text', () => {
    const given = [
      { type: 'text', text: 'caption', extra: 'dropped' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'resource_link', uri: 'file:///n.md', name: 'notes', mimeType: 'text/markdown' },
      { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inside' } },
      { type: 'resource', resource: { uri: 'file:///b.bin', mimeType: 'application/pdf', blob: 'AQID' } },
    ];
    const result = ok(normalise(tool(), { content: given }));
    expect(result.blocks).to.deep.equal([{ type: 'text', text: 'caption' }, ...given.slice(1)]);
    expect(result.blocks![0]).to.not.equal(given[0]);
    expect(result.content).to.equal(
      [
        'caption',
        '[image image/png, 70 B]',
        '[resource link file:///n.md "notes" text/markdown]',
        '[resource file:///a.txt]\ninside',
        '[resource file:///b.bin application/pdf, 3 B]',
      ].join('\n'),
    );
    expect(result).to.not.have.property('truncated');
  });

  it('refuses a malformed block with invalid_output, naming its index and what is wrong', () => {
    const cases: [unknown, RegExp][] = [
      [{ type: 'video', data: PNG }, /unknown type "video"/],
      [{ type: 'image', data: PNG }, /an image block needs `mimeType`/],
      [{ type: 'audio', data: 'abc!', mimeType: 'audio/wav' }, /`data` is not base64/],
      [{ type: 'image', data: 'abc', mimeType: 'image/png' }, /`data` is not base64/], // length not a multiple of 4
      [{ type: 'resource', resource: { text: 'x' } }, /needs `resource.uri`/],
      [{ type: 'resource', resource: { uri: 'file:///a' } }, /one of `resource.text` .* or `resource.blob`/],
      [{ type: 'resource_link', uri: 'file:///a' }, /needs `name`/],
      [{ type: 'text' }, /needs `text`, a string/],
      [null, /must be an object/],
    ];
    for (const [block, why] of cases) {
      const step = normalise(tool(), { content: [{ type: 'text', text: 'fine' }, block] });
      expect(step.ok, JSON.stringify(block)).to.equal(false);
      if (step.ok) continue;
      expect(step.code).to.equal('invalid_output');
      expect(step.content).to.contain('at index 1:');
      expect(step.content).to.match(why);
    }
  });

  it('fails with output_too_large when a binary block does not fit, naming it, its size, the cap and the option', () => {
    const image = Buffer.alloc(2000).toString('base64');
    const step = normalise(tool(1000), {
      content: [
        { type: 'text', text: 'x' },
        { type: 'image', data: image, mimeType: 'image/jpeg' },
      ],
    });
    expect(step).to.deep.include({ ok: false, code: 'output_too_large' });
    expect(!step.ok && step.content).to.equal(
      'Tool "t" returned image block 1 (image/jpeg) of 2000 bytes, which does not fit in the plugin\'s output cap of 1000 bytes. A binary block cannot be cut: ask for a smaller one, or raise the plugin\'s `maxOutputBytes` in the config.',
    );
    // Blocks that fit one by one count together.
    const two = Buffer.alloc(600).toString('base64');
    const both = normalise(tool(1000), {
      content: [
        { type: 'image', data: two, mimeType: 'image/png' },
        { type: 'audio', data: two, mimeType: 'audio/wav' },
      ],
    });
    expect(!both.ok && both.content).to.match(
      /audio block 1 \(audio\/wav\) of 600 bytes, which does not fit in the plugin's output cap of 1000 bytes beside 624 bytes of blocks before it that cannot be cut either/,
    );
  });

  it('counts the line that names each non-text block: links past the cap fail the call, naming the first that does not fit', () => {
    const links = Array.from({ length: 100 }, (_, i) => ({
      type: 'resource_link',
      uri: `file:///${i}`.padEnd(40, 'x'),
      name: `n${i}`,
    }));
    const step = normalise(tool(1000), { content: links });
    expect(step).to.deep.include({ ok: false, code: 'output_too_large' });
    expect(!step.ok && step.content).to.match(
      /returned resource_link block 1\d of \d+ bytes, .* A resource link cannot be cut/,
    );
  });

  it("counts every field of a block that cannot be cut: a link's description, a text resource's URI and MIME type", () => {
    const huge = 'x'.repeat(10_000);
    const cases: [string, unknown][] = [
      ['link description', { type: 'resource_link', uri: 'file:///a', name: 'a', description: huge }],
      ['text resource uri', { type: 'resource', resource: { uri: `file:///${huge}`, text: 'hi' } }],
      ['text resource mimeType', { type: 'resource', resource: { uri: 'file:///a', mimeType: huge, text: 'hi' } }],
    ];
    for (const [what, block] of cases) {
      const step = normalise(tool(1000), { content: [block] });
      expect(step, what).to.deep.include({ ok: false, code: 'output_too_large' });
      expect(!step.ok && step.content, what).to.match(/returned resource(_link)? block 0 .* cannot be cut/);
    }
    // Under the cap, a text resource's URI still leaves its text less room.
    const result = ok(
      normalise(tool(1000), {
        content: [{ type: 'resource', resource: { uri: `file:///${'u'.repeat(400)}`, text: 'T'.repeat(900) } }],
      }),
    );
    expect(result.truncated).to.equal(true);
    // The cap counts what is kept, not the marker that says what was cut.
    const kept = result.content.replace(/\n\n\[… .* …\]\n\n/, '');
    expect(kept).to.match(/^\[resource file:\/\/\/u+\]\nT+$/);
    expect(Buffer.byteLength(kept)).to.be.at.most(1000);
  });

  it('counts the line break between blocks: thousands of empty text blocks cannot pass the cap', () => {
    const empty = (n: number) => Array.from({ length: n }, () => ({ type: 'text', text: '' }));
    const step = normalise(tool(1000), { content: empty(10_000) });
    expect(step).to.deep.include({ ok: false, code: 'output_too_large' });
    expect(!step.ok && step.content).to.equal(
      'Tool "t" returned 10000 content blocks: the line breaks between them alone are 9999 bytes, over the plugin\'s output cap of 1000 bytes. Return fewer blocks (join short texts into one), or raise the plugin\'s `maxOutputBytes` in the config.',
    );
    expect(ok(normalise(tool(1000), { content: empty(1000) })).content).to.equal('\n'.repeat(999));
  });

  it('caps text blocks as one text in what the binary blocks leave: head and tail kept, the middle blocks dropped', () => {
    const texts = ['A', 'B', 'C', 'D'].map((c) => ({ type: 'text', text: c.repeat(400) }));
    const result = ok(
      normalise(tool(1097), {
        content: [...texts.slice(0, 2), { type: 'image', data: PNG, mimeType: 'image/png' }, ...texts.slice(2)],
      }),
    );
    // 1097 - 70 bytes of PNG - 23 of its name ("[image image/png, 70 B]") - 4 line breaks between the 5 blocks
    // leave 1000 for 1600 bytes of text: 500 from the head, 500 from the tail.
    expect(result.truncated).to.equal(true);
    const kept = result.blocks!.map((b) => (b.type === 'text' ? b.text : b.type));
    expect(kept).to.deep.equal([
      'A'.repeat(400),
      `${'B'.repeat(100)}\n\n[… 600 bytes omitted of 1600: output capped at 1000 bytes, head and tail kept …]\n\n`,
      'image',
      'C'.repeat(100),
      'D'.repeat(400),
    ]);
    // Five blocks of one letter each: the middle one falls wholly in the cut, and is gone.
    const five = ['A', 'B', 'C', 'D', 'E'].map((c) => ({ type: 'text', text: c.repeat(300) }));
    const shorter = ok(normalise(tool(1000), { content: five })).blocks!.map((b) => (b as { text: string }).text[0]);
    expect(shorter).to.deep.equal(['A', 'B', 'D', 'E']);
  });

  it('capTexts cuts one long text between head and tail, like capOutput', () => {
    const { texts, truncated } = capTexts([undefined, `BEGIN${'.'.repeat(2000)}END`], 100);
    expect(truncated).to.equal(true);
    expect(texts[0]).to.equal(undefined);
    expect(texts[1]).to.match(/^BEGIN\.{45}\n\n\[… 1908 bytes omitted of 2008: .*\]\n\n\.{47}END$/);
  });

  it('capTexts keeps the exact head and tail of the texts joined, within the cap, never splitting a character', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = ['a', 'é', '€', '𝄞', '\n'];
    for (let round = 0; round < 200; round++) {
      const texts = Array.from({ length: 1 + random(5) }, () =>
        random(4) === 0 ? undefined : Array.from({ length: random(300) }, () => alphabet[random(5)]).join(''),
      );
      const maxBytes = 16 + random(600);
      const { texts: out, truncated } = capTexts(texts, maxBytes);
      const joined = texts.filter((t) => t !== undefined).join('');
      const kept = out.filter((t): t is string => typeof t === 'string').join('');
      expect(
        out.map((t) => t === undefined),
        JSON.stringify(texts),
      ).to.deep.equal(texts.map((t) => t === undefined));
      if (!truncated) {
        expect(kept).to.equal(joined);
        continue;
      }
      const marker = /\n\n\[… (\d+) bytes omitted of (\d+): output capped at \d+ bytes, head and tail kept …\]\n\n/;
      const [found, omitted, total] = marker.exec(kept)!;
      const [headPart, tailPart] = [kept.slice(0, kept.indexOf(found)), kept.slice(kept.indexOf(found) + found.length)];
      expect(joined.startsWith(headPart) && joined.endsWith(tailPart)).to.equal(true);
      expect(Buffer.byteLength(headPart) + Buffer.byteLength(tailPart)).to.be.at.most(maxBytes);
      expect(Number(total)).to.equal(Buffer.byteLength(joined));
      expect(Number(omitted)).to.equal(Number(total) - Buffer.byteLength(headPart) - Buffer.byteLength(tailPart));
      expect(kept).to.not.contain('\uFFFD');
    }
  });

  it('refuses data too large to check against the outputSchema in bounded time, before the check', () => {
    const schema = { type: 'object', properties: { list: { type: 'array', uniqueItems: true } } } as unknown as TSchema;
    const list = Array.from({ length: 60_000 }, (_, i) => i);
    const big = normalise(tool(10_000_000, schema), { content: 'x', data: { list } });
    expect(big).to.deep.include({ ok: false, code: 'invalid_output' });
    expect(!big.ok && big.content).to.match(
      /^Tool "t" returned data too large to check against its outputSchema: it holds over [\d,]+ values/,
    );
    expect(
      ok(normalise(tool(10_000_000, schema), { content: 'x', data: { list: list.slice(0, 20_000) } })).data,
    ).to.deep.equal({ list: list.slice(0, 20_000) });
  });

  it("stops a check whose formats would read the data's strings past the bound: invalid_output naming it", () => {
    const schema = {
      type: 'object',
      properties: { s: { anyOf: Array.from({ length: 1_000 }, () => ({ type: 'string', format: 'email' })) } },
    } as unknown as TSchema;
    const big = normalise(tool(10_000_000, schema), { content: 'x', data: { s: 'a.'.repeat(500_000) } });
    expect(big).to.deep.include({ ok: false, code: 'invalid_output' });
    expect(!big.ok && big.content).to.match(
      /^Tool "t" returned data too large to check against its outputSchema: its strings would be read past 50,000,000 steps/,
    );
    expect(ok(normalise(tool(10_000_000, schema), { content: 'x', data: { s: 'a@b.co' } })).data).to.deep.equal({
      s: 'a@b.co',
    });
  });

  it('checks data against the outputSchema, naming the failing path; with no text of its own the JSON is the text', () => {
    const schema = Type.Object({ n: Type.Number({ description: 'N.' }) });
    const good = ok(normalise(tool(1000, schema), { content: '', data: { n: 1 } }));
    expect(good).to.deep.include({ content: '{"n":1}', data: { n: 1 } });
    const withText = ok(normalise(tool(1000, schema), { content: 'one', data: { n: 1 } }));
    expect(withText.content).to.equal('one');
    const bad = normalise(tool(1000, schema), { content: '', data: { n: 'one' } });
    expect(bad).to.deep.include({ ok: false, code: 'invalid_output' });
    expect(!bad.ok && bad.content).to.match(/does not match its outputSchema:\n- \/n: /);
    const none = normalise(tool(1000, schema), 'no data');
    expect(!none.ok && none.code).to.equal('invalid_output');
    // An error result need not match: it says what went wrong.
    expect(ok(normalise(tool(1000, schema), { content: 'failed', isError: true })).code).to.equal('tool_error');
  });

  it('never fails a call for data over the cap: long strings are cut to fit, else the data is left out with a note', () => {
    const text = `HEAD${'.'.repeat(150_000)}TAIL`;
    const cut = ok(normalise(tool(65536), { content: text, data: { content: text } }));
    expect(cut).to.deep.include({ isError: false, truncated: true, dataTruncated: true });
    const data = cut.data as { content: string };
    expect(Buffer.byteLength(JSON.stringify(data))).to.be.at.most(65536);
    expect(data.content).to.match(/^HEAD\.+\n\n\[… \d+ bytes omitted of 150008: .*\]\n\n\.+TAIL$/);

    // Two long strings: each is cut shorter until both fit.
    const two = ok(
      normalise(tool(65536), { content: 'two', data: { a: 'a'.repeat(100_000), b: 'b'.repeat(100_000) } }),
    );
    const { a, b } = two.data as { a: string; b: string };
    expect([a.startsWith('aaa'), a.endsWith('aaa'), b.startsWith('bbb'), b.endsWith('bbb')]).to.deep.equal([
      true,
      true,
      true,
      true,
    ]);
    expect(Buffer.byteLength(JSON.stringify(two.data))).to.be.within(30_000, 65536);

    // Cut to fit, data that no longer matches its schema is left out rather than served wrong.
    const short = Type.Object({ s: Type.String({ description: 'S.', pattern: '^x+$' }) });
    const unmatched = ok(normalise(tool(1000, short), { content: 'x', data: { s: 'x'.repeat(5000) } }));
    expect(unmatched).to.not.have.property('data');
    expect(unmatched).to.deep.include({ dataTruncated: true, isError: false });

    const many = Array.from({ length: 5000 }, (_, i) => i);
    const dropped = ok(normalise(tool(1000), { content: 'numbers', data: many }));
    expect(dropped).to.not.have.property('data');
    expect(dropped.dataTruncated).to.equal(true);
    expect(dropped.content).to.equal(
      "numbers\n\n[data left out: its JSON is over the plugin's output cap of 1000 bytes]",
    );
  });
});
