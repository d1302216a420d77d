import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/json.js';
import type { McpToolCaller } from '../../../src/tools/mcp/create-mcp-tool.js';
import type { ListedMcpTool } from '../../../src/tools/mcp/list-mcp-tools.js';
import { projectMcpTools } from '../../../src/tools/mcp/project-mcp-tools.js';

const calls: { tool: string; arguments: JsonObject }[] = [];
const callTool: McpToolCaller = (call) => {
  calls.push({ tool: call.tool, arguments: call.arguments });
  return Promise.resolve({ content: [{ type: 'text', text: `ran ${call.tool}` }] });
};

function listed(name: string, inputSchema: JsonObject, extra: Partial<Tool> = {}): ListedMcpTool {
  const definition: Tool = { name, inputSchema: { type: 'object' }, ...extra };
  return { definition, inputSchema };
}

function project(tools: readonly ListedMcpTool[], previous = new Map()) {
  return projectMcpTools({ server: 'acme', namespaceDescription: 'Acme tools.', listing: { tools, skipped: [] }, previous, callTool });
}

const objectSchema: JsonObject = { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] };

describe('projectMcpTools', () => {
  it('drops the server schema\'s $schema, as from Zod\'s, and keeps the rest as sent', () => {
    const withDialect: JsonObject = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { id: { type: 'integer', minimum: 1 } } };
    const [tool] = project([listed('dialect', withDialect)]).tools;
    expect(tool?.parameters).toEqual({ type: 'object', properties: { id: { type: 'integer', minimum: 1 } } });
    expect(tool?.checkArguments({ id: 0 })).toMatchObject({ ok: false });
    expect(tool?.checkArguments({ id: 2 })).toEqual({ ok: true, params: { id: 2 } });
  });

  it('passes the server schema through as the very object, deferred, in the server namespace', () => {
    const { tools } = project([listed('lookup', objectSchema, { description: 'Looks up.' })]);
    const [tool] = tools;
    expect(tool?.parameters).toBe(objectSchema);
    expect(tool).toMatchObject({
      name: 'lookup',
      description: 'Looks up.',
      namespace: 'acme',
      namespaceDescription: 'Acme tools.',
      deferLoading: true,
      strict: false,
      schemaSource: 'json',
    });
  });

  it('derives execution mode and effects from the annotations, fail-closed', () => {
    const { tools } = project([
      listed('reads', objectSchema, { annotations: { readOnlyHint: true } }),
      listed('reads_explicit', objectSchema, { annotations: { readOnlyHint: true, destructiveHint: false } }),
      listed('contradicts', objectSchema, { annotations: { readOnlyHint: true, destructiveHint: true } }),
      listed('writes', objectSchema, { annotations: { readOnlyHint: false, destructiveHint: false } }),
      listed('unannotated', objectSchema),
      listed('destroys', objectSchema, { annotations: { destructiveHint: true } }),
    ]);
    const modes = Object.fromEntries(tools.map((tool) => [tool.name, [tool.executionMode, tool.isReadOnly, tool.isDestructive]]));
    expect(modes).toEqual({
      reads: ['parallel', true, false],
      reads_explicit: ['parallel', true, false],
      contradicts: ['sequential', true, true],
      writes: ['sequential', false, false],
      unannotated: ['sequential', false, true],
      destroys: ['sequential', false, true],
    });
  });

  it('skips a tool whose schema is not an object schema or does not compile, keeping the others', () => {
    const { tools, skipped } = project([
      listed('array_root', { type: 'array' }),
      listed('no_type', { properties: {} }),
      listed('bad_pattern', { type: 'object', properties: { code: { type: 'string', pattern: '(' } } }),
      listed('bad_keyword', { type: 'object', properties: { n: { type: 'integer', minimum: 'one' } } }),
      listed('good', objectSchema),
    ]);
    expect(tools.map((tool) => tool.name)).toEqual(['good']);
    expect(skipped.map((entry) => entry.tool)).toEqual(['array_root', 'no_type', 'bad_pattern', 'bad_keyword']);
    expect(skipped[0]?.reason).toContain('root object schema');
    expect(skipped[2]?.reason).toContain('does not compile');
  });

  it('lists a tool that runs only as an MCP task, and calls it as one, presenting its progress', async () => {
    const taskCalls: boolean[] = [];
    const asTaskCaller: McpToolCaller = (call) => {
      taskCalls.push(call.asTask);
      call.onTaskStatus({ taskId: 't1', status: 'working', statusMessage: 'Gathering sources...' });
      return Promise.resolve({ content: [{ type: 'text', text: 'report' }] });
    };
    const { tools, skipped } = projectMcpTools({
      server: 'acme',
      namespaceDescription: 'Acme tools.',
      listing: { tools: [listed('batch', objectSchema, { execution: { taskSupport: 'required' } }), listed('good', objectSchema, { execution: { taskSupport: 'optional' } })], skipped: [] },
      previous: new Map(),
      callTool: asTaskCaller,
    });
    expect(tools.map((tool) => tool.name)).toEqual(['batch', 'good']);
    expect(skipped).toEqual([]);
    const presented: unknown[] = [];
    const context = { signal: new AbortController().signal, callId: 'c', logger: pino({ level: 'silent' }), present: (event: unknown) => presented.push(event), reportStopped: () => undefined };
    expect((await tools[0]?.execute({ id: 1 }, context))?.content).toBe('report');
    await tools[1]?.execute({ id: 1 }, context);
    // Only a tool the server runs solely as a task is called as one; `optional` is called plainly.
    expect(taskCalls).toEqual([true, false]);
    expect(presented[0]).toEqual({ type: 'mcp.task_status', data: { taskId: 't1', status: 'working', statusMessage: 'Gathering sources...' } });
  });

  it('renames tools providers would reject and calls the server with the original name', async () => {
    const { tools } = project([listed('get.user', { type: 'object', properties: { name: { type: 'string' } } })]);
    const [tool] = tools;
    expect(tool?.name).toBe('get_user');
    expect(tool?.describeActivity({})).toBe('Calling acme.get.user');
    calls.length = 0;
    const result = await tool?.execute({ name: 'ada' }, { signal: new AbortController().signal, callId: 'c', logger: pino({ level: 'silent' }), present: () => undefined, reportStopped: () => undefined });
    expect(calls).toEqual([{ tool: 'get.user', arguments: { name: 'ada' } }]);
    expect(result?.content).toBe('ran get.user');
    expect(tool?.describeCompletedActivity?.({}, { content: '' })).toBe('Called acme.get.user');
  });

  it('reuses the tool object when a relisting brings the same definition, and rebuilds a changed one', () => {
    const first = project([listed('lookup', objectSchema, { description: 'v1' }), listed('other', objectSchema)]);
    const second = project(
      [listed('lookup', structuredClone(objectSchema), { description: 'v1' }), listed('other', objectSchema, { description: 'now described' })],
      new Map(first.byOriginalName),
    );
    expect(second.tools[0]).toBe(first.tools[0]);
    expect(second.tools[1]).not.toBe(first.tools[1]);
    expect(second.tools[1]?.description).toBe('now described');
  });

  it('gives an undescribed tool a description, and cuts a huge one', () => {
    const { tools } = project([listed('quiet', objectSchema), listed('titled', objectSchema, { title: 'Titled tool' }), listed('loud', objectSchema, { description: 'z'.repeat(10_000) })]);
    expect(tools[0]?.description).toBe('quiet (a tool of the MCP server acme)');
    expect(tools[1]?.description).toBe('Titled tool');
    expect(tools[2]?.description).toHaveLength(4_000);
  });
});
