import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/json.js';
import { McpSchemaInterner } from '../../../src/tools/mcp/mcp-schema-interner.js';

const schema = (id: number): JsonObject => ({ type: 'object', properties: { [`field${String(id)}`]: { type: 'string' } } });
const intern = (interner: McpSchemaInterner, value: JsonObject) => interner.intern(value, JSON.stringify(value));

describe('McpSchemaInterner', () => {
  it('hands back the first object seen with the same JSON text', () => {
    const interner = new McpSchemaInterner();
    const first = schema(1);
    expect(intern(interner, first)).toBe(first);
    expect(intern(interner, schema(1))).toBe(first);
    const other = schema(2);
    expect(intern(interner, other)).toBe(other);
  });

  it('forgets the least recently used schema past 2,000', () => {
    const interner = new McpSchemaInterner();
    const first = schema(0);
    const kept = schema(1);
    intern(interner, first);
    intern(interner, kept);
    for (let id = 2; id < 2_000; id += 1) intern(interner, schema(id));
    // Used again: now the most recent, so the next new schema pushes `first` out instead.
    expect(intern(interner, schema(1))).toBe(kept);
    intern(interner, schema(2_000));
    expect(intern(interner, schema(0))).not.toBe(first);
    expect(intern(interner, schema(1))).toBe(kept);
  });
});
