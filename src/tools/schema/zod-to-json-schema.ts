import { z } from 'zod';
import { isJsonObject, type JsonObject, type JsonValue } from '../../json.js';
import { ToolDefinitionError } from '../tool-definition-error.js';

/**
 * Converts a tool's Zod schema into the JSON Schema the model sees.
 *
 * - The root must be an object: providers only accept object parameters.
 * - `$schema` is dropped: it is noise in every request and some providers reject it.
 * - The `±Number.MAX_SAFE_INTEGER` bounds that `z.number().int()` emits are dropped:
 *   they tell the model nothing, and Zod still enforces them on the way in.
 *
 * `io: 'input'` describes what the caller may send, so a field with a default is optional.
 */
export function zodToJsonSchema(options: { toolName: string; schema: z.ZodType }): JsonObject {
  let converted: unknown;
  try {
    converted = z.toJSONSchema(options.schema, { io: 'input', unrepresentable: 'throw' });
  } catch (error) {
    throw new ToolDefinitionError(
      options.toolName,
      `its schema cannot be expressed as JSON Schema (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (!isJsonObject(converted) || converted['type'] !== 'object') {
    throw new ToolDefinitionError(options.toolName, 'function tool parameters must use a root object schema');
  }
  const { $schema: _dropped, ...rest } = converted;
  return dropSafeIntegerBounds(rest);
}

/** Keywords whose value is data, not a schema: a `maximum` key in a default is not a bound. */
const DATA_KEYWORDS = new Set(['default', 'const', 'enum', 'examples']);
/** Keywords whose value maps names to schemas: a property may be named `default`. */
const NAMED_SCHEMA_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

function dropSafeIntegerBounds(node: JsonObject): JsonObject {
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'minimum' && value === -Number.MAX_SAFE_INTEGER) continue;
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue;
    if (DATA_KEYWORDS.has(key)) result[key] = value;
    else if (NAMED_SCHEMA_KEYWORDS.has(key) && isJsonObject(value)) {
      result[key] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, mapChildren(child)]));
    } else result[key] = mapChildren(value);
  }
  return result;
}

function mapChildren(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(mapChildren);
  if (isJsonObject(value)) return dropSafeIntegerBounds(value);
  return value;
}
