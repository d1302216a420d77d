import { describe, expect, it } from 'vitest';
import { toMcpToolResult } from '../../../src/tools/mcp/to-mcp-tool-result.js';

const base = { server: 'acme', tool: 'lookup' };

describe('toMcpToolResult', () => {
  it('joins text blocks into the text the model reads, keeping structuredContent in details', () => {
    const result = toMcpToolResult({
      ...base,
      result: { content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }], structuredContent: { id: 1 } },
    });
    expect(result.content).toBe('one\ntwo');
    expect(result.details).toEqual({ server: 'acme', tool: 'lookup', structuredContent: { id: 1 } });
  });

  it('passes images as images, and describes audio and non-image data as text', () => {
    const result = toMcpToolResult({
      ...base,
      result: {
        content: [
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'image', data: 'AAAA', mimeType: 'application/octet-stream' },
          { type: 'audio', data: 'AAAAAAAA', mimeType: 'audio/wav' },
        ],
      },
    });
    expect(result.content).toEqual([
      { type: 'image', mediaType: 'image/png', data: 'AAAA' },
      { type: 'text', text: '[image application/octet-stream, 3 B not shown]' },
      { type: 'text', text: '[audio audio/wav, 6 B not shown]' },
    ]);
  });

  it('describes resource links and embedded resources as text', () => {
    const result = toMcpToolResult({
      ...base,
      result: {
        content: [
          { type: 'resource_link', uri: 'file:///a.pdf', name: 'manual', mimeType: 'application/pdf' },
          { type: 'resource', resource: { uri: 'file:///n.txt', mimeType: 'text/plain', text: 'hello' } },
          { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA' } },
        ],
      },
    });
    expect(result.content).toBe(
      '[resource link: manual <file:///a.pdf> (application/pdf)]\n[resource <file:///n.txt> (text/plain)]\nhello\n[resource <file:///b.bin>, 3 B of binary data not shown]',
    );
  });

  it('throws the server text when the result is an error', () => {
    expect(() => toMcpToolResult({ ...base, result: { isError: true, content: [{ type: 'text', text: 'item 7 is locked' }] } })).toThrow(
      new Error('item 7 is locked'),
    );
    expect(() => toMcpToolResult({ ...base, result: { isError: true, content: [] } })).toThrow('acme.lookup reported an error without saying what went wrong');
  });

  it('shows structured content when the server sent no content, and says so when there is nothing', () => {
    expect(toMcpToolResult({ ...base, result: { content: [], structuredContent: { ok: true } } }).content).toBe('{"ok":true}');
    expect(toMcpToolResult({ ...base, result: { content: [] } }).content).toBe('acme.lookup returned no content');
  });

  it('cuts a flood of text and says how much was cut', () => {
    const result = toMcpToolResult({ ...base, result: { content: [{ type: 'text', text: 'x'.repeat(150_000) }, { type: 'text', text: 'tail' }] } });
    expect(typeof result.content).toBe('string');
    const text = result.content as string;
    expect(text.startsWith('x'.repeat(100_000))).toBe(true);
    expect(text).toContain('[… 50004 more characters cut]');
    expect(text.length).toBeLessThan(100_100);
  });

  it('leaves huge structured content out of the details, saying how big it was', () => {
    const big = { rows: 'y'.repeat(70_000) };
    const result = toMcpToolResult({ ...base, result: { content: [{ type: 'text', text: 'ok' }], structuredContent: big } });
    expect(result.details).toEqual({ server: 'acme', tool: 'lookup', structuredContentOmitted: '70011 characters of JSON' });
  });
});
