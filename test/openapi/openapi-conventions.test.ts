import { beforeAll, describe, expect, it } from 'vitest';
import { renderOpenApiDocument } from '../../scripts/openapi-document.js';
import { canonicalJson } from '../../src/canonical-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../src/json.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/**
 * The verbs an operation id may start with. A new route whose action is none of these adds its
 * verb here; what this keeps out is an id spelled from the method and path
 * (`postTurnsIdApprovalsCallId`), which changes whenever the path does.
 */
const VERBS = ['get', 'list', 'search', 'create', 'put', 'update', 'delete', 'cancel', 'decide', 'send', 'stop', 'pause', 'resume'];

interface Operation {
  readonly label: string;
  readonly operation: JsonObject;
}

function operationsOf(document: JsonObject): Operation[] {
  const paths = isJsonObject(document['paths']) ? document['paths'] : {};
  return Object.entries(paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = isJsonObject(item) ? item[method] : undefined;
      return isJsonObject(operation) ? [{ label: `${method.toUpperCase()} ${path}`, operation }] : [];
    }),
  );
}

function schemasOf(document: JsonObject): JsonObject {
  const components = document['components'];
  const schemas = isJsonObject(components) ? components['schemas'] : undefined;
  return isJsonObject(schemas) ? schemas : {};
}

/** The component names the `$ref`s under `value` point at. */
function refsIn(value: JsonValue | undefined): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (!isJsonObject(value)) return [];
  return Object.entries(value).flatMap(([key, child]) => (key === '$ref' && typeof child === 'string' ? [child.replace('#/components/schemas/', '')] : refsIn(child)));
}

/** `value` as canonical JSON with every reference to an `XInput` read as one to `X`. */
function withOutputRefs(value: JsonValue | undefined): string {
  return canonicalJson(value).replace(/("\$ref":"#\/components\/schemas\/[A-Za-z0-9_]+)Input"/g, '$1"');
}

describe('the OpenAPI document’s conventions', () => {
  let document: JsonObject;
  beforeAll(async () => {
    const parsed: unknown = JSON.parse(await renderOpenApiDocument());
    document = isJsonObject(parsed) ? parsed : {};
  }, 60_000);

  it('gives every operation a named, camelCase, verb-first operationId, each once', () => {
    const operations = operationsOf(document);
    expect(operations.length).toBeGreaterThan(20);
    const unnamed = operations.filter(({ operation }) => {
      const id = operation['operationId'];
      return typeof id !== 'string' || !/^[a-z]+(?:[A-Z][a-z0-9]*)+$/.test(id) || !VERBS.includes(id.split(/(?=[A-Z])/)[0] ?? '');
    });
    expect(unnamed.map(({ label, operation }) => `${label}: ${JSON.stringify(operation['operationId'] ?? null)}`)).toEqual([]);
    const ids = operations.map(({ operation }) => operation['operationId']);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('lists each request header once per operation, whatever its case', () => {
    const repeated = operationsOf(document).flatMap(({ label, operation }) => {
      const parameters = Array.isArray(operation['parameters']) ? operation['parameters'].filter(isJsonObject) : [];
      const names = parameters.filter((parameter) => parameter['in'] === 'header').map((parameter) => JSON.stringify(parameter['name'] ?? null).toLowerCase());
      return names.filter((name, index) => names.indexOf(name) !== index).map((name) => `${label}: ${name}`);
    });
    expect(repeated).toEqual([]);
    const createTurn = operationsOf(document).find(({ label }) => label === 'POST /turns');
    const headers = (Array.isArray(createTurn?.operation['parameters']) ? createTurn.operation['parameters'] : []).filter(isJsonObject).filter((parameter) => parameter['in'] === 'header');
    expect(headers.map((parameter) => parameter['name'])).toEqual(['Idempotency-Key', 'Last-Event-ID', 'traceparent']);
  });

  it('keeps an `XInput` component only when an operation uses it and it differs from `X`', () => {
    const schemas = schemasOf(document);
    const twins = Object.keys(schemas).filter((name) => name.endsWith('Input') && name.slice(0, -'Input'.length) in schemas);
    const reached = new Set<string>();
    const pending = refsIn(document['paths']);
    for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
      if (reached.has(name)) continue;
      reached.add(name);
      pending.push(...refsIn(schemas[name]));
    }
    const needless = twins.filter((twin) => {
      const base = twin.slice(0, -'Input'.length);
      // A twin may equal its output in itself and still differ through another kept twin it refers to.
      const throughTwin = refsIn(schemas[twin]).some((ref) => ref !== twin && twins.includes(ref));
      return !reached.has(twin) || (!throughTwin && withOutputRefs(schemas[twin]) === withOutputRefs(schemas[base]));
    });
    expect(needless).toEqual([]);
    expect(refsIn(document).filter((ref) => !(ref in schemas))).toEqual([]);
  });
});
