import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { isJsonObject, type JsonObject } from '../../json.js';
import type { AgentToolResult, ToolContentPart } from '../tool-result.js';

/** What the model may read of one call; a server cannot flood the conversation. */
const MAX_TEXT_CHARS = 100_000;
/** Base64 characters per image (about 7.5 MB); bigger images are described, not sent. */
const MAX_IMAGE_CHARS = 10_000_000;
const MAX_IMAGES = 8;
/** Structured content kept in the call's details (logs, events), as JSON text. */
const MAX_STRUCTURED_CHARS = 64 * 1024;

/**
 * Turns an MCP `tools/call` result into what the model sees: text as text, images as images,
 * resources and links described as text, and `structuredContent` kept in `details` (shown to
 * the model only when the server sent no content at all). A result with `isError: true`
 * throws the server's text, which the loop hands the model as an `Error:` output.
 */
export function toMcpToolResult(options: { readonly server: string; readonly tool: string; readonly result: CallToolResult }): AgentToolResult {
  const { server, tool, result } = options;
  const parts: ToolContentPart[] = [];
  let images = 0;
  for (const block of result.content) {
    if (block.type === 'image' && block.mimeType.startsWith('image/') && block.data.length <= MAX_IMAGE_CHARS && images < MAX_IMAGES) {
      images += 1;
      parts.push({ type: 'image', mediaType: block.mimeType, data: block.data });
    } else {
      parts.push({ type: 'text', text: describeBlock(block) });
    }
  }
  const structured = isJsonObject(result.structuredContent) ? result.structuredContent : undefined;
  if (result.isError === true) {
    const text = joinText(parts).trim();
    throw new Error(capText(text === '' ? `${server}.${tool} reported an error without saying what went wrong` : text));
  }
  if (parts.length === 0) {
    parts.push({ type: 'text', text: structured === undefined ? `${server}.${tool} returned no content` : JSON.stringify(structured) });
  }
  const details: JsonObject = { server, tool };
  if (structured !== undefined) {
    const json = JSON.stringify(structured);
    if (json.length <= MAX_STRUCTURED_CHARS) details['structuredContent'] = structured;
    else details['structuredContentOmitted'] = `${json.length} characters of JSON`;
  }
  return { content: capParts(parts), details };
}

function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image ${block.mimeType}, ${approximateBytes(block.data)} not shown]`;
    case 'audio':
      return `[audio ${block.mimeType}, ${approximateBytes(block.data)} not shown]`;
    case 'resource_link': {
      const about = [block.mimeType, block.description].filter((part) => part !== undefined && part !== '').join(', ');
      return `[resource link: ${block.title ?? block.name} <${block.uri}>${about === '' ? '' : ` (${about})`}]`;
    }
    case 'resource': {
      const { resource } = block;
      const type = resource.mimeType === undefined ? '' : ` (${resource.mimeType})`;
      if ('text' in resource) return `[resource <${resource.uri}>${type}]\n${resource.text}`;
      return `[resource <${resource.uri}>${type}, ${approximateBytes(resource.blob)} of binary data not shown]`;
    }
  }
}

function joinText(parts: readonly ToolContentPart[]): string {
  return parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

/** Text parts share one budget; what is cut is said, so the model knows it saw a part. */
function capParts(parts: readonly ToolContentPart[]): AgentToolResult['content'] {
  let budget = MAX_TEXT_CHARS;
  let cut = 0;
  const capped: ToolContentPart[] = [];
  for (const part of parts) {
    if (part.type !== 'text') {
      capped.push(part);
      continue;
    }
    if (part.text.length <= budget) {
      capped.push(part);
      budget -= part.text.length;
    } else {
      cut += part.text.length - budget;
      if (budget > 0) capped.push({ type: 'text', text: part.text.slice(0, budget) });
      budget = 0;
    }
  }
  if (cut > 0) capped.push({ type: 'text', text: `[… ${cut} more characters cut]` });
  return capped.every((part) => part.type === 'text') ? joinText(capped) : capped;
}

function capText(text: string): string {
  return text.length <= MAX_TEXT_CHARS ? text : `${text.slice(0, MAX_TEXT_CHARS)}… [${text.length - MAX_TEXT_CHARS} more characters cut]`;
}

function approximateBytes(base64: string): string {
  const bytes = Math.floor((base64.length * 3) / 4);
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
