import { canonicalJson } from '../canonical-json.js';
import { hasOwn, isJsonObject, type JsonObject, type JsonValue } from '../json.js';

/** The suffix `@fastify/type-provider-zod` gives the input variant of a registered schema. */
const INPUT_SUFFIX = 'Input';

const SCHEMA_REF_PREFIX = '#/components/schemas/';

/**
 * Folds the `<Name>Input` twins `@fastify/type-provider-zod` writes next to every registered
 * schema (it converts its whole registry twice, once per direction, whether a direction is
 * used or not). A twin no operation reaches describes nothing the API accepts: it is dropped.
 * A reached twin whose JSON Schema is the output's, once its own references to folded twins
 * are read as the output names, is dropped too and every `$ref` to it points at the output
 * component. A reached twin that differs (a default, a transform, an object that strips extra
 * keys on input but never sends them) stays, since one component could not say both. Mutates
 * `document`.
 */
export function foldInputSchemas(document: JsonObject): void {
  const components = document['components'];
  const schemas = isJsonObject(components) ? components['schemas'] : undefined;
  if (!isJsonObject(components) || !isJsonObject(schemas)) return;
  const reached = reachedSchemaNames({ document, schemas });
  const twins = new Set([...twinBaseNames(schemas)].filter((base) => reached.has(inputName(base))));
  const folding = foldableTwins({ schemas, twins });
  const kept = new Set([...twins].filter((base) => !folding.has(base)).map(inputName));
  components['schemas'] = Object.fromEntries(Object.entries(schemas).filter(([name]) => !isInputTwin({ name, schemas }) || kept.has(name)));
  renameSchemaRefs(document, outputNameFor(folding));
}

/**
 * The twins whose schemas are equal, read as a greatest fixed point: assume every twin folds,
 * then drop each one that still differs from its output once references to the twins still
 * assumed are renamed, until none drops. Twins that refer to each other (a union over event
 * twins, a recursive schema) fold together when nothing else tells them apart.
 */
function foldableTwins(options: { readonly schemas: JsonObject; readonly twins: ReadonlySet<string> }): Set<string> {
  const { schemas } = options;
  const folding = new Set(options.twins);
  let dropped = true;
  while (dropped) {
    dropped = false;
    for (const base of folding) {
      const input = structuredClone(schemas[inputName(base)] ?? null);
      renameSchemaRefs(input, outputNameFor(folding));
      if (canonicalJson(input) === canonicalJson(schemas[base])) continue;
      folding.delete(base);
      dropped = true;
    }
  }
  return folding;
}

/** Names of the components `paths` (or any other part outside the schemas) refers to, directly or through other components. */
function reachedSchemaNames(options: { readonly document: JsonObject; readonly schemas: JsonObject }): Set<string> {
  const { document, schemas } = options;
  const outside = Object.entries(document).map(([key, value]) => (key === 'components' && isJsonObject(value) ? { ...value, schemas: {} } : value));
  const reached = new Set<string>();
  const pending = schemaRefsIn(outside);
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (reached.has(name)) continue;
    reached.add(name);
    pending.push(...schemaRefsIn(hasOwn(schemas, name) ? (schemas[name] ?? null) : null));
  }
  return reached;
}

/** Base names `X` for which both `X` and `XInput` are components. */
function twinBaseNames(schemas: JsonObject): Set<string> {
  return new Set(Object.keys(schemas).filter((name) => isInputTwin({ name, schemas })).map(baseName));
}

function isInputTwin(options: { readonly name: string; readonly schemas: JsonObject }): boolean {
  return options.name.endsWith(INPUT_SUFFIX) && hasOwn(options.schemas, baseName(options.name));
}

/** The component names of the `$ref`s under `value`. */
function schemaRefsIn(value: JsonValue): string[] {
  if (Array.isArray(value)) return value.flatMap(schemaRefsIn);
  if (!isJsonObject(value)) return [];
  return Object.entries(value).flatMap(([key, child]) =>
    key === '$ref' && typeof child === 'string' && child.startsWith(SCHEMA_REF_PREFIX) ? [child.slice(SCHEMA_REF_PREFIX.length)] : schemaRefsIn(child),
  );
}

/** Rewrites, in place, every `$ref` to a component schema under `value` by its component name. */
function renameSchemaRefs(value: JsonValue, rename: (name: string) => string): void {
  if (Array.isArray(value)) {
    for (const item of value) renameSchemaRefs(item, rename);
    return;
  }
  if (!isJsonObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    if (key === '$ref' && typeof child === 'string' && child.startsWith(SCHEMA_REF_PREFIX)) value[key] = SCHEMA_REF_PREFIX + rename(child.slice(SCHEMA_REF_PREFIX.length));
    else renameSchemaRefs(child, rename);
  }
}

/** Reads a reference to a twin in `folding` as one to its output component. */
function outputNameFor(folding: ReadonlySet<string>): (name: string) => string {
  return (name) => (name.endsWith(INPUT_SUFFIX) && folding.has(baseName(name)) ? baseName(name) : name);
}

function inputName(base: string): string {
  return base + INPUT_SUFFIX;
}

function baseName(input: string): string {
  return input.slice(0, -INPUT_SUFFIX.length);
}
