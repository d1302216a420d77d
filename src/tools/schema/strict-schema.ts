import { isDeepStrictEqual } from 'node:util';
import { hasOwn, isJsonObject, type JsonObject, type JsonValue } from '../../json.js';

/**
 * Keywords that OpenAI's strict function calling rejects. A schema that uses one cannot be
 * sent strict, so it is refused at definition time rather than failing every model call.
 */
const UNSUPPORTED_KEYWORDS = [
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'patternProperties',
  'unevaluatedProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'unevaluatedItems',
  'prefixItems',
  'contains',
  'minContains',
  'maxContains',
  'uniqueItems',
  'minLength',
  'maxLength',
] as const;

/**
 * Where the model's `null` stands for "absent": the optional properties that strict mode
 * forced to be required and nullable. Mirrors the shape of the schema it was built from.
 */
export interface NullPlan {
  readonly properties?: ReadonlyMap<string, { readonly stripNull: boolean; readonly child: NullPlan }>;
  readonly items?: NullPlan;
  readonly anyOf?: readonly NullPlan[];
  readonly ref?: string;
  /** The values a `const` / `enum` admits: how a discriminated anyOf branch is recognised. */
  readonly allowed?: readonly JsonValue[];
}

export interface StrictSchema {
  readonly schema: JsonObject;
  /** Walks a decoded value and removes the nulls that mean "absent". */
  readonly stripOptionalNulls: (value: unknown) => unknown;
  /** True when nothing was made nullable, so stripping can be skipped. */
  readonly hasOptionalNulls: boolean;
}

/** Raised with the schema path that strict mode cannot express. */
export class StrictSchemaError extends Error {
  readonly path: string;

  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`);
    this.name = 'StrictSchemaError';
    this.path = path;
  }
}

/**
 * Compiles a JSON Schema into the form strict mode accepts: every property required,
 * optional ones made nullable, `additionalProperties: false` on every object. `oneOf` becomes
 * `anyOf` (the validator on our side still enforces exclusivity) and `default` moves into the
 * description, because strict mode rejects the keyword.
 */
export function toStrictJsonSchema(schema: JsonObject): StrictSchema {
  const definitions = new Map<string, NullPlan>();
  let optionalCount = 0;

  const compile = (node: JsonValue, path: string): { schema: JsonObject; plan: NullPlan } => {
    if (!isJsonObject(node)) throw new StrictSchemaError(path, 'expected a schema object');
    const plan: {
      properties?: Map<string, { stripNull: boolean; child: NullPlan }>;
      items?: NullPlan;
      anyOf?: NullPlan[];
      ref?: string;
      allowed?: readonly JsonValue[];
    } = {};
    const out: JsonObject = {};

    for (const keyword of UNSUPPORTED_KEYWORDS) {
      if (hasOwn(node, keyword)) throw new StrictSchemaError(path, `strict mode cannot express "${keyword}"`);
    }
    if (typeof node['$ref'] === 'string') {
      plan.ref = node['$ref'];
      return { schema: { ...node }, plan };
    }
    const typed =
      hasOwn(node, 'type') || hasOwn(node, 'anyOf') || hasOwn(node, 'oneOf') || hasOwn(node, 'enum') || hasOwn(node, 'const');
    if (!typed) throw new StrictSchemaError(path, 'strict mode needs a type here (an untyped value such as z.any() or z.unknown())');
    const constValue = node['const'];
    const enumValues = node['enum'];
    if (constValue !== undefined) plan.allowed = [constValue];
    else if (Array.isArray(enumValues)) plan.allowed = enumValues;

    for (const [key, value] of Object.entries(node)) {
      switch (key) {
        case 'properties':
        case 'required':
        case 'additionalProperties':
        case 'items':
        case 'anyOf':
        case 'oneOf':
        case '$defs':
        case 'definitions':
        case 'default':
          break;
        default:
          setOwn(out, key, value);
      }
    }
    if (hasOwn(node, 'default')) {
      const note = `Default: ${JSON.stringify(node['default'])}.`;
      out['description'] = typeof node['description'] === 'string' ? `${node['description']} ${note}` : note;
    }

    const branches = node['anyOf'] ?? node['oneOf'];
    if (branches !== undefined) {
      if (!Array.isArray(branches)) throw new StrictSchemaError(path, 'anyOf must be an array');
      const compiled = branches.map((branch, index) => compile(branch, `${path}|anyOf[${index}]`));
      out['anyOf'] = compiled.map((entry) => entry.schema);
      plan.anyOf = compiled.map((entry) => entry.plan);
    }

    const isObject = node['type'] === 'object' || hasOwn(node, 'properties');
    if (isObject) {
      const additional = node['additionalProperties'];
      if (additional !== undefined && additional !== false) {
        throw new StrictSchemaError(path, 'strict mode needs a closed object (no records, no passthrough properties)');
      }
      const properties = isJsonObject(node['properties']) ? node['properties'] : {};
      const required = new Set(Array.isArray(node['required']) ? node['required'].filter((k) => typeof k === 'string') : []);
      const outProperties: JsonObject = {};
      const propertyPlans = new Map<string, { stripNull: boolean; child: NullPlan }>();
      for (const [name, child] of Object.entries(properties)) {
        const compiled = compile(child, path === '(root)' ? name : `${path}.${name}`);
        if (required.has(name)) {
          setOwn(outProperties, name, compiled.schema);
          propertyPlans.set(name, { stripNull: false, child: compiled.plan });
        } else {
          const nullable = makeNullable(compiled.schema);
          optionalCount += 1;
          setOwn(outProperties, name, nullable.schema);
          propertyPlans.set(name, { stripNull: !nullable.alreadyNullable, child: compiled.plan });
        }
      }
      out['properties'] = outProperties;
      out['required'] = Object.keys(outProperties);
      out['additionalProperties'] = false;
      plan.properties = propertyPlans;
    }

    if (node['type'] === 'array') {
      if (!isJsonObject(node['items'])) throw new StrictSchemaError(path, 'strict mode needs a schema for the array items');
      const compiled = compile(node['items'], `${path}[]`);
      out['items'] = compiled.schema;
      plan.items = compiled.plan;
    }

    for (const defsKey of ['$defs', 'definitions'] as const) {
      const defs = node[defsKey];
      if (!isJsonObject(defs)) continue;
      const outDefs: JsonObject = {};
      for (const [name, definition] of Object.entries(defs)) {
        const compiled = compile(definition, `#/${defsKey}/${name}`);
        setOwn(outDefs, name, compiled.schema);
        definitions.set(`#/${defsKey}/${name}`, compiled.plan);
      }
      out[defsKey] = outDefs;
    }
    return { schema: out, plan };
  };

  const root = compile(schema, '(root)');
  if (root.schema['type'] !== 'object') throw new StrictSchemaError('(root)', 'the root must be an object');
  return {
    schema: root.schema,
    hasOptionalNulls: optionalCount > 0,
    stripOptionalNulls: (value) => stripNulls(value, root.plan, definitions, 0),
  };
}

function makeNullable(schema: JsonObject): { schema: JsonObject; alreadyNullable: boolean } {
  const type = schema['type'];
  if (Array.isArray(schema['anyOf'])) {
    const hasNull = schema['anyOf'].some((branch) => isJsonObject(branch) && branch['type'] === 'null');
    return hasNull
      ? { schema, alreadyNullable: true }
      : { schema: { ...schema, anyOf: [...schema['anyOf'], { type: 'null' }] }, alreadyNullable: false };
  }
  if (typeof type === 'string' && !hasOwn(schema, 'enum') && !hasOwn(schema, 'const')) {
    return type === 'null'
      ? { schema, alreadyNullable: true }
      : { schema: { ...schema, type: [type, 'null'] }, alreadyNullable: false };
  }
  if (Array.isArray(type) && !hasOwn(schema, 'enum') && !hasOwn(schema, 'const')) {
    return type.includes('null')
      ? { schema, alreadyNullable: true }
      : { schema: { ...schema, type: [...type, 'null'] }, alreadyNullable: false };
  }
  const { description, ...rest } = schema;
  const wrapped: JsonObject = { anyOf: [rest, { type: 'null' }] };
  if (description !== undefined) wrapped['description'] = description;
  return { schema: wrapped, alreadyNullable: false };
}

const MAX_STRIP_DEPTH = 64;

function stripNulls(value: unknown, plan: NullPlan, definitions: ReadonlyMap<string, NullPlan>, depth: number): unknown {
  if (depth > MAX_STRIP_DEPTH) return value;
  const resolved = plan.ref === undefined ? plan : definitions.get(plan.ref);
  if (resolved === undefined) return value;
  if (resolved.anyOf !== undefined) {
    const branch = chooseBranch(value, resolved.anyOf, definitions);
    return branch === undefined ? value : stripNulls(value, branch, definitions, depth + 1);
  }
  if (Array.isArray(value) && resolved.items !== undefined) {
    const items = resolved.items;
    return value.map((item: unknown) => stripNulls(item, items, definitions, depth + 1));
  }
  if (isJsonObject(value) && resolved.properties !== undefined) {
    const result: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) {
      const property = resolved.properties.get(key);
      if (property === undefined) {
        setOwn(result, key, entry);
      } else if (entry === null && property.stripNull) {
        continue;
      } else {
        setOwn(result, key, stripNulls(entry, property.child, definitions, depth + 1));
      }
    }
    return result;
  }
  return value;
}

/**
 * Picks the anyOf branch a value belongs to: for objects, one whose properties cover its keys,
 * preferring the one whose `const` / `enum` properties (a discriminator) admit the value's.
 */
function chooseBranch(value: unknown, branches: readonly NullPlan[], definitions: ReadonlyMap<string, NullPlan>): NullPlan | undefined {
  const resolve = (plan: NullPlan) => (plan.ref === undefined ? plan : definitions.get(plan.ref));
  if (Array.isArray(value)) return branches.find((branch) => resolve(branch)?.items !== undefined);
  if (isJsonObject(value)) {
    const keys = Object.keys(value);
    const covering = branches.filter((branch) => {
      const properties = resolve(branch)?.properties;
      return properties !== undefined && keys.every((key) => properties.has(key));
    });
    const discriminated = covering.find((branch) =>
      [...(resolve(branch)?.properties ?? new Map<string, { child: NullPlan }>())].every(([key, property]) => {
        const allowed = property.child.allowed;
        const entry = hasOwn(value, key) ? value[key] : undefined;
        return allowed === undefined || entry === undefined || entry === null || allowed.some((option) => isDeepStrictEqual(option, entry));
      }),
    );
    return discriminated ?? covering[0];
  }
  return undefined;
}

/** Sets an own property, even one named `__proto__` (plain assignment would set the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
