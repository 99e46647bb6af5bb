// Content blocks and structured data from a plugin run inline, in a worker thread and in a child
// process (test/fixtures/plugins/rich.ts): blocks cross the wire intact, and are checked and capped
// by the host the same way whatever the isolation.
import { expect } from 'chai';
import { join } from 'node:path';
import { createHost, type Host } from '../../core/index.ts';
import { PNG } from '../fixtures/plugins/rich.ts';
import { FIXTURES, tempDir } from '../helpers.ts';

const PLUGIN = join(FIXTURES, 'plugins', 'rich.ts');

for (const isolation of ['inline', 'worker', 'process'] as const) {
  describe(`rich results (${isolation})`, function () {
    this.timeout(60_000);
    let host: Host;
    let temp: ReturnType<typeof tempDir>;

    before(async () => {
      temp = tempDir('rh-rich-');
      host = await createHost({
        cwd: temp.dir,
        audit: false,
        logLevel: 'error',
        config: {
          builtins: false,
          plugins: [{ module: PLUGIN, isolation, maxOutputBytes: 4096 }],
          policy: { default: 'allow' },
        },
      });
    });
    after(async () => {
      await host.close();
      temp.cleanup();
    });

    it('returns an image block byte for byte, named in the text', async () => {
      const r = await host.call('picture', {});
      expect(r.isError, r.content).to.equal(false);
      expect(r.blocks).to.deep.equal([
        { type: 'text', text: 'a red dot' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
      ]);
      expect(r.content).to.equal('a red dot\n[image image/png, 70 B]');
    });

    it('returns one block of each type', async () => {
      const r = await host.call('every_block', {});
      expect(r.blocks?.map((b) => b.type)).to.deep.equal(['text', 'audio', 'resource_link', 'resource', 'resource']);
      expect(r.content).to.contain('[resource file:///a.txt text/plain]\nembedded text');
    });

    it('refuses each malformed block with invalid_output naming it', async () => {
      for (const [kind, why] of [
        ['unknown-type', /unknown type "video"/],
        ['no-mime', /needs `mimeType`/],
        ['not-base64', /is not base64/],
        ['no-uri', /needs `resource.uri`/],
        ['link-without-name', /needs `name`/],
        ['not-an-object', /must be an object/],
      ] as const) {
        const r = await host.call('malformed', { kind });
        expect(r, kind).to.include({ isError: true, code: 'invalid_output' });
        expect(r.content).to.match(/^Tool "malformed" returned an invalid content block at index 1: /);
        expect(r.content).to.match(why);
      }
    });

    it('fails an image over the cap with output_too_large; one under it passes whole', async () => {
      const over = await host.call('image_of', { bytes: 5000 });
      expect(over).to.include({ isError: true, code: 'output_too_large' });
      expect(over.content).to.contain('image block 1 (image/png) of 5000 bytes');
      expect(over.content).to.contain('cap of 4096 bytes');
      const under = await host.call('image_of', { bytes: 4000 });
      expect(under.isError, under.content).to.equal(false);
      const image = under.blocks?.[1] as { data: string };
      expect(Buffer.from(image.data, 'base64')).to.deep.equal(Buffer.alloc(4000, 7));
    });

    it('caps text blocks together in what the image leaves, and flags the result truncated', async () => {
      const r = await host.call('texts', { count: 3, bytes: 3000 });
      expect(r.isError, r.content).to.equal(false);
      expect(r.truncated).to.equal(true);
      const text = r.blocks!.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text);
      expect(Buffer.byteLength(text.join(''))).to.be.below(4096 - 70 + 200); // the cap, less the PNG, plus the marker
      expect(text[0]!.startsWith('A')).to.equal(true);
      expect(text.at(-1)!.endsWith('C')).to.equal(true);
      expect(r.blocks?.at(-1)).to.deep.equal({ type: 'image', data: PNG, mimeType: 'image/png' });
    });

    it('checks data against the outputSchema: its JSON is the text when there is none; a mismatch names the path', async () => {
      const ok = await host.call('weather', { mode: 'ok' });
      expect(ok).to.deep.include({
        isError: false,
        content: '{"city":"Paris","temperature":21.5}',
        data: { city: 'Paris', temperature: 21.5 },
      });
      expect((await host.call('weather', { mode: 'text' })).content).to.equal('Paris: 21.5 °C');
      const wrong = await host.call('weather', { mode: 'wrong-type' });
      expect(wrong).to.include({ isError: true, code: 'invalid_output' });
      expect(wrong.content).to.match(/does not match its outputSchema:\n- \/temperature: /);
      expect((await host.call('weather', { mode: 'no-data' })).code).to.equal('invalid_output');
      expect((await host.call('weather', { mode: 'error' })).code).to.equal('tool_error');
    });

    it('lists the outputSchema in tools() and plugins()', () => {
      const weather = host.tools().find((t) => t.name === 'weather');
      expect(weather?.outputSchema).to.deep.include({ type: 'object', required: ['city', 'temperature'] });
      const listed = host.plugins()[0]?.tools.find((t) => t.name === 'weather');
      expect(listed?.outputSchema).to.deep.equal(weather?.outputSchema);
      expect(host.tools().find((t) => t.name === 'picture')).to.not.have.property('outputSchema');
    });
  });
}
