import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { stdioTestServer } from '../support/mcp-test-server.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

/**
 * A tool with a raw JSON Schema (here an MCP server's `inputSchema`) reaches the model exactly
 * as given — constraints and key order intact — and GET /turns/:id/tools shows those bytes.
 */
describe('raw JSON Schemas, from definition to the wire', () => {
  let folder: string;
  let provider: FakeResponsesProvider;
  let runtime: TestRuntime;
  let listed: Map<string, unknown>;

  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'raw-schema-'));
    const configFile = path.join(folder, 'mcp.json');
    await writeFile(configFile, JSON.stringify({ servers: { acme: stdioTestServer() } }));
    listed = await listToolsRaw();
    provider = await startFakeResponsesProvider();
    runtime = await startTestRuntime({
      env: { MCP_CONFIG_FILE: configFile, TOOL_SEARCH_MODE: 'native', OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '0' },
    });
  });
  afterAll(async () => {
    await runtime.close();
    await provider.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('sends the MCP inputSchema byte for byte less $schema, and GET /turns/:id/tools shows the same bytes', async () => {
    provider.enqueue({ text: 'Nothing to do.' });
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ agent: { id: 'raw', tools: { mcp: ['acme'] } }, input: 'hi', model: { name: 'gpt-5.1' } }),
    });
    const turn = await readJson(response);
    expect(turn.status).toBe('completed');

    // As listed, key order and all, but for `$schema`: dropped as from Zod's schemas.
    const { $schema: dialect, ...lookupListed } = listed.get('lookup') as Record<string, unknown>;
    expect(dialect).toBe('http://json-schema.org/draft-07/schema#');
    const lookupSchema = JSON.stringify(lookupListed);
    expect(lookupSchema).toContain('"minimum":1');
    expect(lookupSchema).not.toContain('$schema');
    const sent = provider.requests.at(-1)!.rawBody;
    expect(sent).toContain(`"parameters":${lookupSchema}`);
    expect(sent).toContain('"defer_loading":true');
    expect(sent).toContain('{"type":"tool_search"}');

    const toolsText = await (await fetch(`${runtime.baseUrl}/turns/${turn.id as string}/tools`)).text();
    const tools = JSON.parse(toolsText);
    const lookup = tools.tools.find((tool: { name: string }) => tool.name === 'lookup');
    expect(lookup).toMatchObject({ namespace: 'acme', deferLoading: true, schemaSource: 'json' });
    expect(JSON.stringify(lookup.parameters)).toBe(lookupSchema);
    expect(sent).toContain(`"tools":${JSON.stringify(tools.providerTools)}`);
    expect(toolsText).toContain(lookupSchema);
  });
});

/**
 * The server's tools/list answer as it came over the wire (JSON.parse keeps key order). Not an
 * SDK client: its schema parsing reorders keys, which is exactly what this test must not hide.
 */
async function listToolsRaw(): Promise<Map<string, unknown>> {
  const { command, args, cwd } = stdioTestServer();
  const child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'ignore'] });
  try {
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    for await (const line of createInterface({ input: child.stdout })) {
      const message = JSON.parse(line) as { id?: number; result?: { tools?: { name: string; inputSchema: unknown }[] } };
      if (message.id === 1) {
        send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      }
      if (message.id === 2) return new Map((message.result?.tools ?? []).map((tool) => [tool.name, tool.inputSchema]));
    }
    throw new Error('the MCP server closed before listing its tools');
  } finally {
    child.kill();
  }
}
