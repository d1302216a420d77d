import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { zodToJsonSchema } from '../../src/tools/schema/zod-to-json-schema.js';
import { ToolDefinitionError } from '../../src/tools/tool-definition-error.js';

const convert = (schema: z.ZodType) => zodToJsonSchema({ toolName: 'probe', schema });

describe('zodToJsonSchema', () => {
  it('converts an object schema and drops $schema', () => {
    const zodOutput = z.toJSONSchema(z.object({ path: z.string() }));
    expect(zodOutput['$schema']).toBeDefined();
    const converted = convert(z.object({ path: z.string().describe('The file to read.') }));
    expect(converted).toEqual({
      type: 'object',
      properties: { path: { type: 'string', description: 'The file to read.' } },
      required: ['path'],
    });
    expect(converted).not.toHaveProperty('$schema');
  });

  it('drops the ±MAX_SAFE_INTEGER bounds of an int, at every depth', () => {
    const raw = z.toJSONSchema(z.object({ n: z.int() }));
    expect(raw).toMatchObject({ properties: { n: { minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER } } });
    const converted = convert(
      z.object({
        n: z.int(),
        m: z.number().int(),
        rows: z.array(z.object({ id: z.int() })),
        either: z.union([z.int(), z.string()]),
      }),
    );
    expect(converted).toEqual({
      type: 'object',
      properties: {
        n: { type: 'integer' },
        m: { type: 'integer' },
        rows: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
        either: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
      },
      required: ['n', 'm', 'rows', 'either'],
    });
  });

  it('keeps bounds that say something', () => {
    const converted = convert(z.object({ page: z.int().min(1).max(50), small: z.int32() }));
    expect(converted['properties']).toEqual({
      page: { type: 'integer', minimum: 1, maximum: 50 },
      small: { type: 'integer', minimum: -2147483648, maximum: 2147483647 },
    });
  });

  it('leaves data inside default and const alone, even keys named like bounds', () => {
    const converted = convert(
      z.object({
        limits: z.object({ maximum: z.number() }).default({ maximum: Number.MAX_SAFE_INTEGER }),
        ceiling: z.literal(Number.MAX_SAFE_INTEGER).optional(),
      }),
    );
    expect(converted['properties']).toMatchObject({
      limits: { default: { maximum: Number.MAX_SAFE_INTEGER } },
      ceiling: { const: Number.MAX_SAFE_INTEGER },
    });
  });

  it('still drops the bounds of a property that happens to be named "default" or "minimum"', () => {
    const converted = convert(z.object({ default: z.int(), minimum: z.int() }));
    expect(converted['properties']).toEqual({ default: { type: 'integer' }, minimum: { type: 'integer' } });
  });

  it('describes the input side: a field with a default is optional', () => {
    const converted = convert(z.object({ page: z.int().default(1), query: z.string() }));
    expect(converted['required']).toEqual(['query']);
    expect(converted['properties']).toMatchObject({ page: { default: 1 } });
  });

  it('refuses a root that is not an object, naming the tool', () => {
    for (const schema of [z.string(), z.array(z.string()), z.union([z.object({ a: z.string() }), z.object({ b: z.string() })])] as z.ZodType[]) {
      expect(() => convert(schema)).toThrow(new ToolDefinitionError('probe', 'function tool parameters must use a root object schema'));
    }
  });

  it('refuses a schema JSON Schema cannot express', () => {
    expect(() => convert(z.object({ when: z.date() }))).toThrow(/tool "probe": its schema cannot be expressed as JSON Schema \(.*Date/);
    expect(() => convert(z.object({ big: z.bigint() }))).toThrow(ToolDefinitionError);
  });
});
