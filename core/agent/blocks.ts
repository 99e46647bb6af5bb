/**
 * What the providers share about a result's content blocks: which media types the model APIs take
 * as images and documents (docs/agent.md, "Rich results"). A block they cannot take goes as the
 * text the result's `content` names it by (`blockText` in core/block-text.ts).
 */
import type { ContentBlock } from '../contract.ts';
import { blockText } from '../block-text.ts';

/** A result's block as every provider sorts it; each writes the three kinds in its own wire shape. */
export type ModelPart =
  | { kind: 'image'; mimeType: string; data: string }
  | { kind: 'pdf'; uri: string; data: string }
  | { kind: 'text'; text: string };

/**
 * A result's blocks for a model: images and PDFs as themselves, everything else as text (a
 * resource's text, or a line naming what could not go). Empty texts are left out: the APIs refuse them.
 */
export function modelParts(blocks: readonly ContentBlock[]): ModelPart[] {
  const parts: ModelPart[] = [];
  for (const block of blocks) {
    const image = imageOf(block);
    const pdf = image ? undefined : pdfOf(block);
    if (image) parts.push({ kind: 'image', ...image });
    else if (pdf) parts.push({ kind: 'pdf', ...pdf });
    else {
      const text = blockText(block);
      if (text) parts.push({ kind: 'text', text });
    }
  }
  return parts;
}

/**
 * The image types every provider's API takes (Anthropic, OpenAI chat and Responses alike), by the
 * leading bytes that show them: the APIs check the bytes against the declared type, and refuse the
 * whole request on a mismatch.
 */
const IMAGE_TYPES: readonly [string, (head: Buffer) => boolean][] = [
  ['image/png', (h) => h.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))],
  ['image/jpeg', (h) => h.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))],
  ['image/gif', (h) => /^GIF8[79]a/.test(h.subarray(0, 6).toString('latin1'))],
  [
    'image/webp',
    (h) => h.subarray(0, 4).toString('latin1') === 'RIFF' && h.subarray(8, 12).toString('latin1') === 'WEBP',
  ],
];

/** The first bytes of base64 `data`: 16 characters are 12 bytes. */
const headOf = (data: string) => Buffer.from(data.slice(0, 16), 'base64');

/**
 * An image the model APIs take, with the media type its bytes show (a tool or an MCP server may
 * name them wrongly), or undefined: bytes that are none of those types go as a line naming them.
 */
export function imageOf(block: ContentBlock): { mimeType: string; data: string } | undefined {
  if (block.type !== 'image') return undefined;
  const head = headOf(block.data);
  const found = IMAGE_TYPES.find(([, shows]) => shows(head));
  return found ? { mimeType: found[0], data: block.data } : undefined;
}

/**
 * A PDF embedded as a resource (base64 `blob`), which Anthropic and the Responses API take as a
 * document; only when its bytes are one (`%PDF`): the APIs refuse anything else, and the request with it.
 */
export function pdfOf(block: ContentBlock): { uri: string; data: string } | undefined {
  return block.type === 'resource' &&
    block.resource.mimeType?.toLowerCase() === 'application/pdf' &&
    block.resource.blob &&
    headOf(block.resource.blob).subarray(0, 4).toString('latin1') === '%PDF'
    ? { uri: block.resource.uri, data: block.resource.blob }
    : undefined;
}
