/**
 * A result's content blocks as text, for whatever reads text only: the result's `content`, an
 * OpenAI-compatible tool message, a terminal, a session file. A text block is its text; every other
 * block is named by its type, MIME type, size and URI, never its bytes.
 */
import type { ContentBlock } from './contract.ts';

/** The text of a result given as blocks: text as it is, every other block named (never its bytes). */
export function textOf(blocks: readonly ContentBlock[]): string {
  return blocks.map(blockText).join('\n');
}

/** A block as text: a text block's text; the others named by type, MIME type, size and URI. */
export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}, ${formatBytes(decodedSize(block.data))}]`;
    case 'resource_link':
      return `[resource link ${block.uri} "${block.name}"${block.mimeType ? ` ${block.mimeType}` : ''}]`;
    case 'resource': {
      const r = block.resource;
      const mime = r.mimeType ? ` ${r.mimeType}` : '';
      return r.text === undefined
        ? `[resource ${r.uri}${mime}, ${formatBytes(decodedSize(r.blob ?? ''))}]`
        : `[resource ${r.uri}${mime}]\n${r.text}`;
    }
  }
}

/** Short names of a result's non-text blocks, for a one-line summary: `image image/png`, `resource file:///a.pdf`. */
export function blockNames(blocks: readonly ContentBlock[]): string[] {
  const names: string[] = [];
  for (const b of blocks) {
    if (b.type === 'image' || b.type === 'audio') names.push(`${b.type} ${b.mimeType}`);
    else if (b.type === 'resource_link') names.push(`link ${b.uri}`);
    else if (b.type === 'resource') names.push(`resource ${b.resource.uri}`);
  }
  return names;
}

/** A size for people: `812 B`, `5.2 KB`, `1.4 MB` (powers of 1024). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The bytes a base64 string decodes to. */
export function decodedSize(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}
