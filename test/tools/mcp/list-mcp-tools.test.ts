import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { listMcpTools } from '../../../src/tools/mcp/list-mcp-tools.js';

/**
 * A real SDK server (the low-level `Server`, which sends whatever listing it is given) linked
 * in memory to a real client: the way to meet listings `McpServer` would never produce.
 */
async function connectTo(pages: Record<string, { tools: unknown[]; nextCursor?: string }>): Promise<{ client: Client; requests: (string | undefined)[] }> {
  // The deprecated low-level server on purpose: only it sends a listing McpServer would refuse to build.
  // eslint-disable-next-line @typescript-eslint/no-deprecated
  const server = new Server({ name: 'odd', version: '1' }, { capabilities: { tools: {} } });
  const requests: (string | undefined)[] = [];
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const cursor = request.params?.cursor;
    requests.push(cursor);
    return pages[cursor ?? ''] ?? { tools: [] };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  return { client, requests };
}

const good = (name: string) => ({ name, inputSchema: { type: 'object', properties: { q: { type: 'string' } } } });

describe('listMcpTools', () => {
  it('keeps the valid tools of a listing in which some are malformed', async () => {
    const { client } = await connectTo({
      '': {
        tools: [
          good('first'),
          { name: 'array_root', inputSchema: { type: 'array', items: { type: 'string' } } },
          { name: 'no_schema' },
          { name: 'boolean_property', inputSchema: { type: 'object', properties: { a: true } } },
          { inputSchema: { type: 'object' } },
          good('first'),
          good('last'),
        ],
      },
    });
    const listing = await listMcpTools({ client, timeoutMs: 5_000 });
    expect(listing.tools.map((tool) => tool.definition.name)).toEqual(['first', 'last']);
    expect(listing.skipped.map((entry) => entry.tool)).toEqual(['array_root', 'no_schema', 'boolean_property', '(unnamed)', 'first']);
    expect(listing.skipped[0]?.reason).toMatch(/^malformed definition: inputSchema\.type: /);
    expect(listing.skipped[4]?.reason).toBe('the server listed this name more than once');
    await client.close();
  });

  it('keeps the input schema as the server sent it, unknown keywords included', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 1, 'x-unit': 'kg' } }, additionalProperties: false, $defs: { a: { type: 'string' } } };
    const { client } = await connectTo({ '': { tools: [{ name: 'weigh', inputSchema: schema }] } });
    const listing = await listMcpTools({ client, timeoutMs: 5_000 });
    expect(listing.tools[0]?.inputSchema).toEqual(schema);
    await client.close();
  });

  it('follows pages, and stops following a server that pages forever', async () => {
    const { client, requests } = await connectTo({ '': { tools: [good('a')], nextCursor: 'p2' }, p2: { tools: [good('b')] } });
    expect((await listMcpTools({ client, timeoutMs: 5_000 })).tools.map((tool) => tool.definition.name)).toEqual(['a', 'b']);
    expect(requests).toEqual([undefined, 'p2']);
    await client.close();

    const endless = await connectTo({ '': { tools: [good('a')], nextCursor: '' } });
    const listing = await listMcpTools({ client: endless.client, timeoutMs: 5_000 });
    expect(endless.requests).toHaveLength(20);
    expect(listing.skipped.at(-1)?.reason).toBe('the server listed more than 20 pages of tools; the rest are left out');
    await endless.client.close();
  });
});
