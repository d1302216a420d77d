import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JsonObject } from '../../src/json.js';
import { StrictSchemaError, toStrictJsonSchema } from '../../src/tools/schema/strict-schema.js';
import { zodToJsonSchema } from '../../src/tools/schema/zod-to-json-schema.js';

const strictFromZod = (schema: z.ZodType) => toStrictJsonSchema(zodToJsonSchema({ toolName: 'probe', schema }));

function refusal(schema: JsonObject): StrictSchemaError {
  try {
    toStrictJsonSchema(schema);
  } catch (error) {
    if (error instanceof StrictSchemaError) return error;
    throw error;
  }
  throw new Error('expected the schema to be refused');
}

const object = (properties: JsonObject, required: string[] = Object.keys(properties)): JsonObject => ({ type: 'object', properties, required });

describe('toStrictJsonSchema: compilation', () => {
  it('makes every property required, optional ones nullable, and closes every object', () => {
    const { schema, hasOptionalNulls } = strictFromZod(
      z.object({
        path: z.string(),
        limit: z.int().optional(),
        filter: z.object({ glob: z.string().optional(), hidden: z.boolean() }).optional(),
      }),
    );
    expect(hasOptionalNulls).toBe(true);
    expect(schema).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string' },
        limit: { type: ['integer', 'null'] },
        filter: {
          type: ['object', 'null'],
          properties: { glob: { type: ['string', 'null'] }, hidden: { type: 'boolean' } },
          required: ['glob', 'hidden'],
          additionalProperties: false,
        },
      },
      required: ['path', 'limit', 'filter'],
      additionalProperties: false,
    });
  });

  it('closes objects inside arrays', () => {
    const { schema } = strictFromZod(z.object({ rows: z.array(z.object({ id: z.string(), note: z.string().optional() })) }));
    expect(schema['properties']).toEqual({
      rows: {
        type: 'array',
        items: { type: 'object', properties: { id: { type: 'string' }, note: { type: ['string', 'null'] } }, required: ['id', 'note'], additionalProperties: false },
      },
    });
  });

  it('makes an optional enum or const nullable through anyOf, keeping its values intact', () => {
    const { schema } = strictFromZod(z.object({ order: z.enum(['asc', 'desc']).optional(), mode: z.literal('fast').optional() }));
    expect(schema['properties']).toEqual({
      order: { anyOf: [{ type: 'string', enum: ['asc', 'desc'] }, { type: 'null' }] },
      mode: { anyOf: [{ type: 'string', const: 'fast' }, { type: 'null' }] },
    });
  });

  it('keeps a description outside the anyOf it wraps', () => {
    const { schema } = toStrictJsonSchema(object({ order: { enum: ['asc', 'desc'], type: 'string', description: 'Sort order.' } }, []));
    expect(schema['properties']).toEqual({ order: { anyOf: [{ type: 'string', enum: ['asc', 'desc'] }, { type: 'null' }], description: 'Sort order.' } });
  });

  it('turns oneOf into anyOf and compiles each branch', () => {
    const { schema } = strictFromZod(
      z.object({
        target: z.discriminatedUnion('kind', [z.object({ kind: z.literal('file'), path: z.string() }), z.object({ kind: z.literal('url'), url: z.string() })]),
      }),
    );
    const target = (schema['properties'] as JsonObject)['target'] as JsonObject;
    expect(target).not.toHaveProperty('oneOf');
    expect(target['anyOf']).toEqual([
      { type: 'object', properties: { kind: { type: 'string', const: 'file' }, path: { type: 'string' } }, required: ['kind', 'path'], additionalProperties: false },
      { type: 'object', properties: { kind: { type: 'string', const: 'url' }, url: { type: 'string' } }, required: ['kind', 'url'], additionalProperties: false },
    ]);
  });

  it('moves a default into the description, after any description already there', () => {
    const { schema } = strictFromZod(z.object({ page: z.int().default(1).describe('Page to show.'), sort: z.string().default('name') }));
    expect(schema['properties']).toEqual({
      page: { type: ['integer', 'null'], description: 'Page to show. Default: 1.' },
      sort: { type: ['string', 'null'], description: 'Default: "name".' },
    });
  });

  it('reports no optional nulls when every property is required', () => {
    expect(strictFromZod(z.object({ a: z.string(), b: z.string().nullable() })).hasOptionalNulls).toBe(false);
  });

  it('compiles $defs and keeps $ref pointing at them', () => {
    type Node = { name: string; children?: Node[] | undefined };
    const node: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), children: z.array(node).optional() }));
    const { schema } = strictFromZod(z.object({ tree: node }));
    const defs = schema['$defs'] as JsonObject;
    const [definition] = Object.values(defs) as JsonObject[];
    expect(definition).toEqual({
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: ['array', 'null'], items: { $ref: expect.stringMatching(/^#\/\$defs\//) as unknown } } },
      required: ['name', 'children'],
      additionalProperties: false,
    });
  });

  it('keeps a property named "__proto__" as a property', () => {
    const { schema } = toStrictJsonSchema(JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"b":{"type":"string"}},"required":["b"]}') as JsonObject);
    expect(JSON.parse(JSON.stringify(schema))).toEqual({
      type: 'object',
      properties: JSON.parse('{"__proto__":{"type":["string","null"]},"b":{"type":"string"}}') as unknown,
      required: ['__proto__', 'b'],
      additionalProperties: false,
    });
  });
});

describe('toStrictJsonSchema: refusals name the path', () => {
  it('refuses a record', () => {
    expect(() => strictFromZod(z.object({ labels: z.record(z.string(), z.string()) }))).toThrow(StrictSchemaError);
    expect(refusal(object({ labels: { type: 'object', additionalProperties: { type: 'string' } } })).message).toBe(
      'labels: strict mode needs a closed object (no records, no passthrough properties)',
    );
  });

  it('refuses a passthrough object at the root and in a nested field', () => {
    expect(() => strictFromZod(z.looseObject({ a: z.string() }))).toThrow(
      new StrictSchemaError('(root)', 'strict mode needs a closed object (no records, no passthrough properties)'),
    );
    expect(refusal(object({ outer: object({ inner: { type: 'object', properties: {}, additionalProperties: true } }) })).path).toBe('outer.inner');
  });

  it('refuses minLength, naming the nested field', () => {
    const error = (() => {
      try {
        strictFromZod(z.object({ user: z.object({ name: z.string().min(1) }) }));
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(StrictSchemaError);
    expect((error as StrictSchemaError).message).toBe('user.name: strict mode cannot express "minLength"');
  });

  it('refuses uniqueItems inside array items and anyOf branches, with paths', () => {
    expect(refusal(object({ tags: { type: 'array', items: { type: 'string' }, uniqueItems: true } })).message).toBe('tags: strict mode cannot express "uniqueItems"');
    expect(refusal(object({ rows: { type: 'array', items: object({ key: { type: 'string', maxLength: 4 } }) } })).path).toBe('rows[].key');
    expect(refusal(object({ value: { anyOf: [{ type: 'string' }, { type: 'string', pattern: 'x', minLength: 2 }] } })).path).toBe('value|anyOf[1]');
  });

  it('refuses z.any() and z.unknown(), which have no type', () => {
    expect(() => strictFromZod(z.object({ payload: z.any() }))).toThrow(
      new StrictSchemaError('payload', 'strict mode needs a type here (an untyped value such as z.any() or z.unknown())'),
    );
    expect(() => strictFromZod(z.object({ list: z.array(z.unknown()) }))).toThrow(/^list\[\]: strict mode needs a type/);
  });

  it('refuses a tuple (prefixItems) and allOf', () => {
    expect(() => strictFromZod(z.object({ pair: z.tuple([z.string(), z.number()]) }))).toThrow('pair: strict mode cannot express "prefixItems"');
    expect(refusal(object({ a: { allOf: [{ type: 'string' }] } })).message).toBe('a: strict mode cannot express "allOf"');
  });

  it('refuses an array without an items schema', () => {
    expect(refusal(object({ list: { type: 'array' } })).message).toBe('list: strict mode needs a schema for the array items');
  });

  it('refuses a root that is not an object', () => {
    expect(refusal({ type: 'string' }).message).toBe('(root): the root must be an object');
  });

  it('names a refused definition by its $defs path', () => {
    expect(refusal({ ...object({ a: { $ref: '#/$defs/Thing' } }), $defs: { Thing: { type: 'string', minLength: 1 } } }).path).toBe('#/$defs/Thing');
  });
});

describe('toStrictJsonSchema: null stripping', () => {
  it('removes a null that stands for an absent optional property, and nothing else', () => {
    const strict = strictFromZod(z.object({ path: z.string().nullable(), limit: z.int().optional(), note: z.string().nullable().optional() }));
    expect(strict.stripOptionalNulls({ path: null, limit: null, note: null })).toEqual({ path: null, note: null });
    expect(strict.stripOptionalNulls({ path: 'a', limit: 3, note: 'n' })).toEqual({ path: 'a', limit: 3, note: 'n' });
  });

  it('keeps null for an optional property that was already nullable (null means null there)', () => {
    const strict = strictFromZod(z.object({ parent: z.union([z.string(), z.null()]).optional(), order: z.enum(['a', 'b']).nullable().optional() }));
    expect(strict.stripOptionalNulls({ parent: null, order: null })).toEqual({ parent: null, order: null });
  });

  it('strips inside nested objects and array items', () => {
    const strict = strictFromZod(
      z.object({ filter: z.object({ glob: z.string().optional() }).optional(), rows: z.array(z.object({ id: z.string(), note: z.string().optional() })) }),
    );
    expect(strict.stripOptionalNulls({ filter: { glob: null }, rows: [{ id: 'a', note: null }, { id: 'b', note: 'x' }] })).toEqual({
      filter: {},
      rows: [{ id: 'a' }, { id: 'b', note: 'x' }],
    });
    expect(strict.stripOptionalNulls({ filter: null, rows: [] })).toEqual({ rows: [] });
  });

  it('strips inside the anyOf branch a value belongs to', () => {
    const strict = strictFromZod(
      z.object({
        target: z.union([z.object({ path: z.string(), encoding: z.string().optional() }), z.object({ url: z.string(), timeoutMs: z.int().optional() })]),
      }),
    );
    expect(strict.stripOptionalNulls({ target: { path: 'a', encoding: null } })).toEqual({ target: { path: 'a' } });
    expect(strict.stripOptionalNulls({ target: { url: 'u', timeoutMs: null } })).toEqual({ target: { url: 'u' } });
  });

  it('picks a discriminated branch by its discriminator, not only by its keys', () => {
    const strict = strictFromZod(
      z.object({
        item: z.discriminatedUnion('kind', [
          z.object({ kind: z.literal('draft'), note: z.string().optional() }),
          z.object({ kind: z.literal('final'), note: z.string().nullable() }),
        ]),
      }),
    );
    expect(strict.stripOptionalNulls({ item: { kind: 'final', note: null } })).toEqual({ item: { kind: 'final', note: null } });
    expect(strict.stripOptionalNulls({ item: { kind: 'draft', note: null } })).toEqual({ item: { kind: 'draft' } });
  });

  it('follows $ref into recursive $defs', () => {
    type Node = { name: string; size?: number | undefined; children?: Node[] | undefined };
    const node: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), size: z.number().optional(), children: z.array(node).optional() }));
    const strict = strictFromZod(z.object({ tree: node }));
    const value = { tree: { name: 'root', size: null, children: [{ name: 'leaf', size: 3, children: null }] } };
    expect(strict.stripOptionalNulls(value)).toEqual({ tree: { name: 'root', children: [{ name: 'leaf', size: 3 }] } });
  });

  it('leaves unknown keys and non-object values alone', () => {
    const strict = strictFromZod(z.object({ a: z.string().optional() }));
    expect(strict.stripOptionalNulls({ a: null, extra: null })).toEqual({ extra: null });
    expect(strict.stripOptionalNulls('text')).toBe('text');
    expect(strict.stripOptionalNulls(null)).toBeNull();
    expect(strict.stripOptionalNulls([1])).toEqual([1]);
  });

  it('does not let a "__proto__" key turn into the prototype of the stripped value', () => {
    const strict = strictFromZod(z.object({ mode: z.string().optional() }));
    const stripped = strict.stripOptionalNulls(JSON.parse('{"mode":null,"__proto__":{"mode":"admin"}}')) as Record<string, unknown>;
    expect(stripped['mode']).toBeUndefined();
    expect(Object.getPrototypeOf(stripped)).toBe(Object.prototype);
    expect(Object.keys(stripped)).toEqual(['__proto__']);
  });

  it('does not recurse forever on a hostile, deeply nested value', () => {
    type Node = { next?: Node | undefined };
    const node: z.ZodType<Node> = z.lazy(() => z.object({ next: node.optional() }));
    const strict = strictFromZod(z.object({ head: node }));
    let deep: Record<string, unknown> = { next: null };
    for (let depth = 0; depth < 10_000; depth += 1) deep = { next: deep };
    expect(() => strict.stripOptionalNulls({ head: deep })).not.toThrow();
  });
});
