import type { JsonObject } from '../../json.js';

/** Distinct schemas kept per server: a few listings' worth of tools. */
const MAX_SCHEMAS = 2_000;

/**
 * One object per distinct input schema of a server, whichever agent's session listed it. A
 * tool's schema is compiled (Ajv) once per schema object (see define-worker-tool.ts), so
 * every agent's session of a server shares the validators its first session compiled
 * instead of compiling its own. Keyed by the schema's JSON text; the least recently used
 * schema is forgotten past `MAX_SCHEMAS`.
 */
export class McpSchemaInterner {
  readonly #schemas = new Map<string, JsonObject>();

  /** The object first seen with this JSON text, or `schema` itself when it is new. */
  intern(schema: JsonObject, text: string): JsonObject {
    const known = this.#schemas.get(text);
    if (known !== undefined) {
      this.#schemas.delete(text);
      this.#schemas.set(text, known);
      return known;
    }
    this.#schemas.set(text, schema);
    if (this.#schemas.size > MAX_SCHEMAS) {
      const oldest = this.#schemas.keys().next();
      if (oldest.done !== true) this.#schemas.delete(oldest.value);
    }
    return schema;
  }
}
