import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JsonObject } from '../../src/json.js';
import { createToolMap } from '../../src/tools/tool-map.js';
import { defineWorkerTool, type WorkerToolOptions } from '../../src/tools/define-worker-tool.js';
import { ToolDefinitionError } from '../../src/tools/tool-definition-error.js';
import { toProviderTools } from '../../src/turns/provider-tools.js';

/** Any option, or `undefined` to leave it out (e.g. `schema: undefined` for a raw-jsonSchema tool). */
type Overrides = { [Key in keyof WorkerToolOptions<unknown>]?: WorkerToolOptions<unknown>[Key] | undefined };

/** A harmless read-only tool; each test overrides what it is about. */
function define(overrides: Overrides = {}) {
  const options = {
    name: 'probe',
    description: 'A probe.',
    schema: z.object({ path: z.string() }),
    executionMode: 'sequential',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: () => 'Probing',
    execute: () => Promise.resolve({ content: 'ok' }),
    ...overrides,
  };
  return defineWorkerTool<unknown>(options as WorkerToolOptions<unknown>);
}

describe('defineWorkerTool: refusals at definition time', () => {
  it('refuses names providers reject', () => {
    for (const name of ['', 'read file', 'files.read', 'naïve', 'x'.repeat(65), 'a/b']) {
      expect(() => define({ name }), name).toThrow(new ToolDefinitionError(name, 'a tool name must match ^[A-Za-z0-9_-]{1,64}$'));
    }
    expect(define({ name: 'x'.repeat(64) }).name).toHaveLength(64);
  });

  it('refuses a namespace providers reject', () => {
    expect(() => define({ namespace: 'my files' })).toThrow('tool "probe": namespace "my files" must match ^[A-Za-z0-9_-]{1,64}$');
  });

  it('refuses parallel for a tool that is not read-only', () => {
    expect(() => define({ executionMode: 'parallel', isReadOnly: false })).toThrow(
      new ToolDefinitionError('probe', 'only a read-only, non-destructive tool may run in parallel'),
    );
  });

  it('refuses parallel for a destructive tool, even one that claims to be read-only', () => {
    expect(() => define({ executionMode: 'parallel', isReadOnly: true, isDestructive: true })).toThrow(/only a read-only, non-destructive tool may run in parallel/);
  });

  it('allows parallel for a read-only, non-destructive tool and sequential for anything', () => {
    expect(define({ executionMode: 'parallel' }).executionMode).toBe('parallel');
    expect(define({ executionMode: 'sequential', isReadOnly: false, isDestructive: true }).isDestructive).toBe(true);
  });

  it('refuses a tool with neither a Zod schema nor a jsonSchema', () => {
    expect(() => defineWorkerTool({ ...define(), schema: undefined } as unknown as WorkerToolOptions<unknown>)).toThrow(/give a Zod `schema` or a raw `jsonSchema`/);
  });

  it('refuses a Zod schema whose root is not an object', () => {
    expect(() => define({ schema: z.array(z.string()) })).toThrow('tool "probe": function tool parameters must use a root object schema');
  });

  it('refuses a raw jsonSchema whose root is not an object', () => {
    expect(() => define({ schema: undefined, jsonSchema: { type: 'array', items: { type: 'string' } } })).toThrow(
      'tool "probe": a raw jsonSchema must have a root object schema ("type": "object")',
    );
  });

  it('refuses a raw jsonSchema that does not compile', () => {
    expect(() => define({ schema: undefined, jsonSchema: { type: 'object', properties: { a: { type: 'text' } } } })).toThrow(
      /tool "probe": its jsonSchema does not compile: schema is invalid/,
    );
    expect(() => define({ schema: undefined, jsonSchema: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } } })).toThrow(
      /its jsonSchema does not compile: can't resolve reference/,
    );
  });

  it('refuses a strict Zod schema strict mode cannot express, naming the path', () => {
    expect(() => define({ strict: true, schema: z.object({ query: z.string().min(1) }) })).toThrow(
      new ToolDefinitionError('probe', 'strict mode: query: strict mode cannot express "minLength"'),
    );
    expect(() => define({ strict: true, schema: z.object({ headers: z.record(z.string(), z.string()) }) })).toThrow(/strict mode: headers: /);
    expect(() => define({ strict: true, schema: z.object({ payload: z.any() }) })).toThrow(/strict mode: payload: strict mode needs a type here/);
  });

  it('accepts the same schema when not strict', () => {
    expect(define({ schema: z.object({ query: z.string().min(1) }) }).parameters).toMatchObject({ properties: { query: { minLength: 1 } } });
  });
});

describe('defineWorkerTool: the schema the model sees', () => {
  it('copies strict and defaults deferLoading to false', () => {
    const tool = define({ strict: true });
    expect(tool.strict).toBe(true);
    expect(tool.deferLoading).toBe(false);
    expect(tool.schemaSource).toBe('zod');
    expect(toProviderTools([tool])).toEqual([
      {
        type: 'function',
        name: 'probe',
        description: 'A probe.',
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
        strict: true,
      },
    ]);
  });

  it('passes a raw jsonSchema through as the very same object, constraints untouched', () => {
    const jsonSchema: JsonObject = {
      type: 'object',
      properties: {
        count: { type: 'integer', minimum: 1, maximum: 10 },
        email: { type: 'string', format: 'email' },
        id: { type: 'string', minLength: 3 },
      },
      required: ['count'],
    };
    const snapshot = structuredClone(jsonSchema);
    const tool = define({ schema: undefined, jsonSchema, strict: true });
    expect(tool.parameters).toBe(jsonSchema);
    expect(tool.schemaSource).toBe('json');
    expect(toProviderTools([tool])[0]?.['parameters']).toBe(jsonSchema);
    expect(jsonSchema).toEqual(snapshot);
  });

  it('validates a raw jsonSchema with its minimum, maximum and format', () => {
    const tool = define({
      schema: undefined,
      jsonSchema: {
        type: 'object',
        properties: { count: { type: 'integer', minimum: 1, maximum: 10 }, email: { type: 'string', format: 'email' } },
        required: ['count'],
        additionalProperties: false,
      },
    });
    expect(tool.checkArguments({ count: 5, email: 'a@example.com' })).toEqual({ ok: true, params: { count: 5, email: 'a@example.com' } });
    expect(tool.checkArguments({ count: 0 })).toEqual({ ok: false, issues: [{ path: ['count'], message: 'must be >= 1' }] });
    expect(tool.checkArguments({ count: 11 })).toEqual({ ok: false, issues: [{ path: ['count'], message: 'must be <= 10' }] });
    expect(tool.checkArguments({ count: 1, email: 'not-an-address' })).toEqual({ ok: false, issues: [{ path: ['email'], message: 'must match format "email"' }] });
    expect(tool.checkArguments({})).toEqual({ ok: false, issues: [{ path: ['count'], message: 'required' }] });
    expect(tool.checkArguments({ count: 1, extra: true })).toEqual({ ok: false, issues: [{ path: ['extra'], message: 'unknown property' }] });
  });

  it('follows the dialect a raw jsonSchema declares', () => {
    const tool = define({
      schema: undefined,
      jsonSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false } },
      },
    });
    expect(tool.checkArguments({ pair: ['a', 1] }).ok).toBe(true);
    expect(tool.checkArguments({ pair: ['a', 'b'] }).ok).toBe(false);
    expect(tool.checkArguments({ pair: ['a', 1, 2] }).ok).toBe(false);
  });

  it('sends the raw jsonSchema but validates with Zod when a tool gives both', () => {
    const jsonSchema: JsonObject = { type: 'object', properties: { path: { type: 'string', maxLength: 5 } }, required: ['path'] };
    const tool = define({ jsonSchema, schema: z.object({ path: z.string().endsWith('.md') }) });
    expect(tool.parameters).toBe(jsonSchema);
    expect(tool.schemaSource).toBe('json');
    expect(tool.checkArguments({ path: 'a.md' })).toEqual({ ok: true, params: { path: 'a.md' } });
    expect(tool.checkArguments({ path: 'a.txt' })).toEqual({ ok: false, issues: [{ path: ['path'], message: 'Invalid string: must end with ".md"' }] });
  });

  it('strips the nulls a strict tool was forced to accept before Zod sees them', () => {
    const schema = z.object({ path: z.string(), limit: z.int().optional() });
    expect(define({ strict: true, schema }).checkArguments({ path: 'a', limit: null })).toEqual({ ok: true, params: { path: 'a' } });
  });

  it('does not strip nulls for a tool that is not strict', () => {
    const schema = z.object({ path: z.string(), limit: z.int().optional() });
    expect(define({ schema }).checkArguments({ path: 'a', limit: null })).toEqual({
      ok: false,
      issues: [{ path: ['limit'], message: 'expected number, received null' }],
    });
  });

  it('accepts a discriminated strict value whose branch keeps null', () => {
    const schema = z.object({
      item: z.discriminatedUnion('kind', [z.object({ kind: z.literal('draft'), note: z.string().optional() }), z.object({ kind: z.literal('final'), note: z.string().nullable() })]),
    });
    const tool = define({ strict: true, schema });
    expect(tool.checkArguments({ item: { kind: 'final', note: null } })).toEqual({ ok: true, params: { item: { kind: 'final', note: null } } });
    expect(tool.checkArguments({ item: { kind: 'draft', note: null } })).toEqual({ ok: true, params: { item: { kind: 'draft' } } });
  });
});

describe('defineWorkerTool: memoisation', () => {
  it('compiles the same Zod schema once, however many tools are built from it', () => {
    const schema = z.object({ path: z.string(), limit: z.int().optional() });
    const first = define({ name: 'first', schema });
    const second = define({ name: 'second', schema });
    expect(second.parameters).toBe(first.parameters);
    const strictFirst = define({ name: 'first', schema, strict: true });
    const strictSecond = define({ name: 'second', schema, strict: true });
    expect(strictSecond.parameters).toBe(strictFirst.parameters);
    expect(strictFirst.parameters).not.toBe(first.parameters);
    expect(strictFirst.parameters).toMatchObject({ additionalProperties: false });
    expect(first.parameters).not.toHaveProperty('additionalProperties');
  });

  it('compiles a different schema object separately, even with the same shape', () => {
    expect(define({ schema: z.object({ a: z.string() }) }).parameters).not.toBe(define({ schema: z.object({ a: z.string() }) }).parameters);
  });

  it('compiles a raw jsonSchema once: later tools reuse its validator', () => {
    let reads = 0;
    const properties = { n: { type: 'integer', maximum: 3 } };
    const jsonSchema = {
      type: 'object',
      get properties() {
        reads += 1;
        return properties;
      },
    } as unknown as JsonObject;
    const first = define({ name: 'first', schema: undefined, jsonSchema });
    const readsAfterFirst = reads;
    expect(readsAfterFirst).toBeGreaterThan(0);
    const second = define({ name: 'second', schema: undefined, jsonSchema });
    expect(reads).toBe(readsAfterFirst);
    expect(second.checkArguments({ n: 4 }).ok).toBe(false);
    expect(first.checkArguments({ n: 2 }).ok).toBe(true);
  });

  it('does not remember a refused definition as compiled', () => {
    const schema = z.object({ q: z.string().min(1) });
    expect(() => define({ schema, strict: true })).toThrow(ToolDefinitionError);
    expect(() => define({ schema, strict: true })).toThrow(ToolDefinitionError);
  });
});

describe('defineWorkerTool: hostile names', () => {
  it('lets a tool be named "__proto__" or "constructor" without touching any prototype', () => {
    const proto = define({ name: '__proto__' });
    const constructorTool = define({ name: 'constructor' });
    const map = createToolMap([proto, constructorTool]);
    expect(map.get('__proto__')).toBe(proto);
    expect(map.get('constructor')).toBe(constructorTool);
    const provider = toProviderTools([proto]);
    expect(JSON.parse(JSON.stringify(provider))).toEqual([expect.objectContaining({ name: '__proto__' })]);
    expect(Object.getPrototypeOf(provider[0])).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['description']).toBeUndefined();
  });
});
