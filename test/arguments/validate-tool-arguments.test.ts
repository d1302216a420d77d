import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { validateToolArguments } from '../../src/arguments/validate-tool-arguments.js';
import { defineWorkerTool, type WorkerAgentTool } from '../../src/tools/define-worker-tool.js';
import type { JsonObject } from '../../src/json.js';

function tool<TParams>(name: string, schema: z.ZodType<TParams>, options: { strict?: boolean } = {}): WorkerAgentTool<TParams> {
  return defineWorkerTool<TParams>({
    name,
    description: `The ${name} tool.`,
    schema,
    ...(options.strict === undefined ? {} : { strict: options.strict }),
    executionMode: 'sequential',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: () => name,
    execute: () => Promise.resolve({ content: 'ok' }),
  });
}

function jsonTool(name: string, jsonSchema: JsonObject): WorkerAgentTool {
  return defineWorkerTool({
    name,
    description: `The ${name} tool.`,
    jsonSchema,
    executionMode: 'sequential',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: () => name,
    execute: () => Promise.resolve({ content: 'ok' }),
  });
}

const readFile = tool('read_file', z.object({ path: z.string(), limit: z.number().int().optional() }));
const listTasks = tool('list_tasks', z.object({ status: z.enum(['open', 'done']).optional(), page: z.number().int().default(1) }));
const tagItems = tool('tag_items', z.object({ items: z.array(z.object({ id: z.string(), tags: z.array(z.string()) })) }));

describe('validateToolArguments', () => {
  it('returns the validated params and the rung used', () => {
    expect(validateToolArguments({ tool: readFile, rawArguments: '{"path":"a.md"}' })).toEqual({ ok: true, params: { path: 'a.md' }, repair: 'none' });
    expect(validateToolArguments({ tool: readFile, rawArguments: '```json\n{"path":"a.md"}\n```' })).toEqual({
      ok: true,
      params: { path: 'a.md' },
      repair: 'code_fence',
    });
    expect(validateToolArguments({ tool: readFile, rawArguments: 'ok: {"path":"a.md"}' })).toMatchObject({ ok: true, repair: 'balanced_object' });
    expect(validateToolArguments({ tool: readFile, rawArguments: '{"path":"a.md"' })).toMatchObject({ ok: true, repair: 'closed_containers' });
  });

  it('gives {} with the rung "empty_object" to an all-optional tool called with empty arguments', () => {
    expect(validateToolArguments({ tool: listTasks, rawArguments: '' })).toEqual({ ok: true, params: { page: 1 }, repair: 'empty_object' });
  });

  it('refuses empty arguments for a tool with required parameters, naming the tool', () => {
    const result = validateToolArguments({ tool: readFile, rawArguments: '   ' });
    expect(result).toEqual({
      ok: false,
      message: 'invalid arguments for read_file: the arguments are empty; send a JSON object with the required parameters',
      repair: undefined,
    });
  });

  it('asks a raw JSON Schema tool whether it accepts {} before giving it {}', () => {
    const optional = jsonTool('ping', { type: 'object', properties: { note: { type: 'string' } } });
    const required = jsonTool('pong', { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] });
    expect(validateToolArguments({ tool: optional, rawArguments: '' })).toEqual({ ok: true, params: {}, repair: 'empty_object' });
    expect(validateToolArguments({ tool: required, rawArguments: '' }).ok).toBe(false);
  });

  it('refuses a top-level array as "expected a JSON object", keeping the rung', () => {
    expect(validateToolArguments({ tool: readFile, rawArguments: '[{"path":"a.md"}]' })).toEqual({
      ok: false,
      message: 'invalid arguments for read_file: expected a JSON object, received an array',
      repair: 'none',
    });
  });

  it('refuses a JSON string, number or null at the top level', () => {
    expect(validateToolArguments({ tool: readFile, rawArguments: '"a.md"' })).toMatchObject({ ok: false, message: expect.stringContaining('received string') as unknown });
    expect(validateToolArguments({ tool: readFile, rawArguments: '42' })).toMatchObject({ ok: false, message: expect.stringContaining('received number') as unknown });
    expect(validateToolArguments({ tool: readFile, rawArguments: 'null' })).toMatchObject({ ok: false, message: expect.stringContaining('received null') as unknown });
  });

  it('names the path of a schema error the way a person writes it', () => {
    const result = validateToolArguments({ tool: tagItems, rawArguments: '{"items":[{"id":"a","tags":"urgent"}]}' });
    expect(result).toEqual({ ok: false, message: 'invalid arguments for tag_items: items[0].tags: expected array, received string', repair: 'none' });
  });

  it('reports a missing required property and a wrong type together', () => {
    const result = validateToolArguments({ tool: tagItems, rawArguments: '{"items":[{"tags":[]},{"id":7,"tags":[]}]}' });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toContain('items[0].id: expected string, received undefined');
      expect(result.message).toContain('items[1].id: expected string, received number');
    }
  });

  it('keeps the rung when repaired arguments then fail the schema: repair never relaxes the schema', () => {
    const result = validateToolArguments({ tool: readFile, rawArguments: '```json\n{"path":3}\n```' });
    expect(result).toEqual({ ok: false, message: 'invalid arguments for read_file: path: expected string, received number', repair: 'code_fence' });
  });

  it('lists at most eight issues and counts the rest', () => {
    const eleven = tool('eleven', z.object(Object.fromEntries(Array.from({ length: 11 }, (_, index) => [`field${index}`, z.string()]))));
    const result = validateToolArguments({ tool: eleven, rawArguments: '{}' });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message.match(/field\d+:/g)).toHaveLength(8);
      expect(result.message).toMatch(/; and 3 more$/);
    }
  });

  it('quotes a hostile key in an issue path', () => {
    const dotted = jsonTool('dotted', {
      type: 'object',
      properties: { 'a.b': { type: 'object', properties: { 'c d': { type: 'number' } } } },
    });
    const result = validateToolArguments({ tool: dotted, rawArguments: '{"a.b":{"c d":"x"}}' });
    expect(result).toMatchObject({ ok: false, message: 'invalid arguments for dotted: ["a.b"]["c d"]: must be number' });
  });

  it('does not let a "__proto__" key smuggle a value past the schema', () => {
    const result = validateToolArguments({ tool: readFile, rawArguments: '{"path":"a.md","__proto__":{"limit":5}}' });
    expect(result).toEqual({ ok: true, params: { path: 'a.md' }, repair: 'none' });
  });

  it('refuses what the ladder refuses, with the tool name in front', () => {
    const result = validateToolArguments({ tool: readFile, rawArguments: '{"path":"no' });
    expect(result).toEqual({
      ok: false,
      message: 'invalid arguments for read_file: the arguments were cut off inside a string; send the complete JSON object again',
      repair: undefined,
    });
  });
});
