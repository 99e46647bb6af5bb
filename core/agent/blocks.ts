/**
 * What the providers share about a result's content blocks: which media types the model APIs take
 * as images and documents (docs/agent.md, "Rich results"). A block they cannot take goes as the
 * text the result's `content` names it by (`blockText` in core/output.ts). A leaf: no run-time imports.
 */
import type { ContentBlock } from '../contract.ts';

/** The image types every provider's API takes (Anthropic, OpenAI chat and Responses alike). */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** An image the model APIs take, with its media type, or undefined. */
export function imageOf(block: ContentBlock): { mimeType: string; data: string } | undefined {
  return block.type === 'image' && IMAGE_TYPES.has(block.mimeType.toLowerCase()) && block.data
    ? { mimeType: block.mimeType.toLowerCase(), data: block.data }
    : undefined;
}

/** A PDF embedded as a resource (base64 `blob`), which Anthropic and the Responses API take as a document. */
export function pdfOf(block: ContentBlock): { uri: string; data: string } | undefined {
  return block.type === 'resource' &&
    block.resource.mimeType?.toLowerCase() === 'application/pdf' &&
    block.resource.blob
    ? { uri: block.resource.uri, data: block.resource.blob }
    : undefined;
}
