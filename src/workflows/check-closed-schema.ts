import { isJsonObject, type JsonObject } from '../json.js';

const UNSUPPORTED = ['anyOf', 'oneOf', 'allOf', 'not', '$ref', '$defs', 'definitions', 'nullable', 'if', 'then', 'else', 'patternProperties', 'dependentSchemas'];
const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean']);

/**
 * Checks an `agent()` schema against the closed subset the contract allows: one non-null
 * `type`; every object lists all its properties in `required` and has
 * `additionalProperties: false`; arrays have `items`; no unions, `$ref` or nullable. Returns
 * the first problem with its path, or undefined when the schema is fine.
 */
export function checkClosedSchema(schema: unknown, path = 'schema'): string | undefined {
  if (!isJsonObject(schema)) return `${path}: must be a JSON Schema object`;
  for (const keyword of UNSUPPORTED) {
    if (Object.hasOwn(schema, keyword)) return `${path}: "${keyword}" is not allowed (no unions, $ref or nullable)`;
  }
  const type = schema['type'];
  if (typeof type !== 'string') return `${path}: needs exactly one "type" (a string such as "object" or "string")`;
  if (!TYPES.has(type)) return `${path}: type "${type}" is not allowed (one non-null type: ${[...TYPES].join(', ')})`;
  if (type === 'object') return checkObject(schema, path);
  if (type === 'array') {
    if (!Object.hasOwn(schema, 'items')) return `${path}: an array needs "items"`;
    return checkClosedSchema(schema['items'], `${path}.items`);
  }
  return undefined;
}

function checkObject(schema: JsonObject, path: string): string | undefined {
  const properties = schema['properties'] ?? {};
  if (!isJsonObject(properties)) return `${path}.properties: must be an object`;
  if (schema['additionalProperties'] !== false) return `${path}: an object needs "additionalProperties": false`;
  const required = schema['required'] ?? [];
  if (!Array.isArray(required) || !required.every((name) => typeof name === 'string')) return `${path}.required: must be an array of property names`;
  for (const name of Object.keys(properties)) {
    if (!required.includes(name)) return `${path}.required: must list every property ("${name}" is missing)`;
    const problem = checkClosedSchema(properties[name], `${path}.properties.${name}`);
    if (problem !== undefined) return problem;
  }
  for (const name of required) {
    if (!Object.hasOwn(properties, name)) return `${path}.required: "${name}" is not a property`;
  }
  return undefined;
}
