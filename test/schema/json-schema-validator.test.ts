import { describe, expect, it } from 'vitest';
import { compileJsonSchemaValidator } from '../../src/tools/schema/json-schema-validator.js';

describe('compileJsonSchemaValidator', () => {
  it('compiles schemas that share an $id independently, each keeping its own constraints', () => {
    const small = compileJsonSchemaValidator({ $id: 'https://example.com/args', type: 'object', properties: { n: { type: 'integer', maximum: 5 } } });
    const large = compileJsonSchemaValidator({ $id: 'https://example.com/args', type: 'object', properties: { n: { type: 'integer', maximum: 500 } } });
    expect(small({ n: 50 })).toMatchObject({ ok: false, issues: [{ path: ['n'], message: 'must be <= 5' }] });
    expect(large({ n: 50 })).toEqual({ ok: true, value: { n: 50 } });
    // A validator keeps working after later compiles.
    expect(small({ n: 3 })).toEqual({ ok: true, value: { n: 3 } });
  });

  it('refuses a broken schema and still compiles the next one with the same $id', () => {
    expect(() => compileJsonSchemaValidator({ $id: 'https://example.com/broken', type: 'object', properties: { code: { type: 'string', pattern: '^a\\-b$' } } })).toThrow(
      /Invalid regular expression/,
    );
    const fixed = compileJsonSchemaValidator({ $id: 'https://example.com/broken', type: 'object', properties: { code: { type: 'string', pattern: '^a-b$' } } });
    expect(fixed({ code: 'a-b' })).toEqual({ ok: true, value: { code: 'a-b' } });
  });

  it('follows the dialect $schema names', () => {
    // prefixItems exists in 2020-12 only; draft-07 ignores it.
    const tuple = { type: 'array', prefixItems: [{ type: 'integer' }] };
    expect(compileJsonSchemaValidator({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { t: tuple } })({ t: ['x'] })).toMatchObject({ ok: false });
    expect(compileJsonSchemaValidator({ type: 'object', properties: { t: tuple } })({ t: ['x'] })).toMatchObject({ ok: true });
  });
});
