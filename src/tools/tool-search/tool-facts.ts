import { isJsonObject, type JsonObject, type JsonValue } from '../../json.js';
import { toolIdentity } from '../tool-map.js';
import type { WorkerAgentTool } from '../define-worker-tool.js';
import { prepareBm25Document, type PreparedBm25Document } from './bm25-index.js';
import { flattenToolName } from './flatten-tool-name.js';
import { tokenizeSearchText } from '../../text/tokenize-search-text.js';

/** A provider tool definition as an object and as its exact JSON text (`JSON.stringify` of it). */
export interface ProviderDefinition {
  readonly object: JsonObject;
  readonly json: string;
}

/** What the search and the provider lists need from one tool; derived from its definition alone. */
export interface ToolFacts {
  /** `namespace.name`, or `name` outside a namespace. */
  readonly identity: string;
  /** The plain-function name in emulated mode (`calendar__create_event`), unless taken in a turn. */
  readonly flatName: string;
  /** The first sentence of the description, at most ~100 characters, for listings and labels. */
  readonly shortDescription: string;
  /** The function definition for native mode (inside its namespace, if any), with `defer_loading` when deferred. */
  readonly native: ProviderDefinition;
  /** The plain function definition for emulated mode, under `flatName`. */
  readonly emulated: ProviderDefinition;
  /** The tool as a BM25 document: name, namespace, description, namespace description, parameter names. */
  readonly document: PreparedBm25Document;
}

/*
 * Field weights: a match in the tool's own name counts most, then its namespace and its
 * description; the namespace description and parameter names help recall but must not
 * outrank a tool that names the thing.
 */
const NAME_WEIGHT = 3;
const NAMESPACE_WEIGHT = 1.5;
const DESCRIPTION_WEIGHT = 1;
const NAMESPACE_DESCRIPTION_WEIGHT = 0.5;
const PARAMETER_WEIGHT = 0.75;
const SHORT_DESCRIPTION_LENGTH = 100;
const MAX_PARAMETER_NAMES = 64;
const MAX_PARAMETER_DEPTH = 3;

/*
 * Memoised per tool object, weakly. Tools from the same source (an MCP server's list) are the
 * same objects from turn to turn, so their JSON text and search terms are computed once, not
 * per turn; per-turn tools (which close over a turn's home) get fresh entries that go away
 * with them. Keyed by tool rather than by a turn's tools array: the array is new every turn
 * (assembly builds it), the tool objects are not. A pure cache of pure functions: nothing
 * reads it but `toolFacts`.
 */
const factsMemo = new WeakMap<WorkerAgentTool, ToolFacts>();

export function toolFacts(tool: WorkerAgentTool): ToolFacts {
  let facts = factsMemo.get(tool);
  if (facts === undefined) {
    facts = new MemoizedToolFacts(tool);
    factsMemo.set(tool, facts);
  }
  return facts;
}

class MemoizedToolFacts implements ToolFacts {
  readonly identity: string;
  readonly flatName: string;
  readonly #tool: WorkerAgentTool;
  #shortDescription: string | undefined;
  #native: ProviderDefinition | undefined;
  #emulated: ProviderDefinition | undefined;
  #document: PreparedBm25Document | undefined;

  constructor(tool: WorkerAgentTool) {
    this.#tool = tool;
    this.identity = toolIdentity(tool.name, tool.namespace);
    this.flatName = tool.namespace === undefined ? tool.name : flattenToolName({ namespace: tool.namespace, name: tool.name });
  }

  get shortDescription(): string {
    return (this.#shortDescription ??= shortenDescription(this.#tool.description));
  }

  get native(): ProviderDefinition {
    return (this.#native ??= functionDefinition({ tool: this.#tool, name: this.#tool.name, deferLoading: this.#tool.deferLoading }));
  }

  get emulated(): ProviderDefinition {
    return (this.#emulated ??= functionDefinition({ tool: this.#tool, name: this.flatName, deferLoading: false }));
  }

  get document(): PreparedBm25Document {
    if (this.#document !== undefined) return this.#document;
    const tool = this.#tool;
    const fields = [
      { terms: tokenizeSearchText(tool.name), weight: NAME_WEIGHT },
      { terms: tokenizeSearchText(tool.description), weight: DESCRIPTION_WEIGHT },
      { terms: tokenizeSearchText(parameterNames(tool.parameters).join(' ')), weight: PARAMETER_WEIGHT },
    ];
    if (tool.namespace !== undefined) fields.push({ terms: tokenizeSearchText(tool.namespace), weight: NAMESPACE_WEIGHT });
    if (tool.namespaceDescription !== undefined) {
      fields.push({ terms: tokenizeSearchText(tool.namespaceDescription), weight: NAMESPACE_DESCRIPTION_WEIGHT });
    }
    this.#document = prepareBm25Document({ fields });
    return this.#document;
  }
}

/**
 * A Responses `function` tool. Key order is fixed (`type`, `name`, `description`,
 * `parameters`, `strict`, then `defer_loading` only when true) and `parameters` is the very
 * object computed at definition time, so the JSON text is what was defined, byte for byte.
 */
export function functionDefinition(options: { readonly tool: WorkerAgentTool; readonly name: string; readonly deferLoading: boolean }): ProviderDefinition {
  const { tool } = options;
  const key = `${options.name}\n${String(tool.strict)}\n${String(options.deferLoading)}\n${tool.description}`;
  let shared = definitionMemo.get(tool.parameters);
  const known = shared?.get(key);
  if (known !== undefined) return known;
  const object: JsonObject = {
    type: 'function',
    name: options.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: tool.strict,
    ...(options.deferLoading ? { defer_loading: true } : {}),
  };
  // Shared by every turn that shows the tool: frozen, so no caller can change another turn's request.
  Object.freeze(object);
  const definition = { object, json: JSON.stringify(object) };
  if (shared === undefined) definitionMemo.set(tool.parameters, (shared = new Map<string, ProviderDefinition>()));
  if (shared.size >= MAX_DEFINITIONS_PER_SCHEMA) shared.clear();
  shared.set(key, definition);
  return definition;
}

/*
 * Definitions by parameters object, then by what else goes into them. The per-tool memo above
 * misses for tools made per turn (the computer tools close over the turn's home), but their
 * `parameters` is the definition's own object (see defineWorkerTool), so the frozen definition
 * and its JSON text are made once per definition and shared by every turn, not rebuilt and held
 * per turn. Weak keys, a few entries each: a schema shared under many names or descriptions
 * only starts its entries over.
 */
const definitionMemo = new WeakMap<JsonObject, Map<string, ProviderDefinition>>();
const MAX_DEFINITIONS_PER_SCHEMA = 16;

/** Property names of a parameters schema, nested objects and array items included, bounded. */
function parameterNames(schema: JsonObject): string[] {
  const names: string[] = [];
  const visit = (node: JsonValue | undefined, depth: number): void => {
    if (!isJsonObject(node) || depth > MAX_PARAMETER_DEPTH || names.length >= MAX_PARAMETER_NAMES) return;
    const properties = node['properties'];
    if (isJsonObject(properties)) {
      for (const [name, child] of Object.entries(properties)) {
        if (names.length >= MAX_PARAMETER_NAMES) return;
        names.push(name);
        visit(child, depth + 1);
      }
    }
    visit(node['items'], depth + 1);
  };
  visit(schema, 0);
  return names;
}

/** The first sentence or line, cut at a word near 100 characters. */
function shortenDescription(description: string): string {
  const flat = description.replace(/\s+/g, ' ').trim();
  const sentence = /^(.+?(?:[.!?](?=\s|$)|[。！？]))/u.exec(flat)?.[1] ?? flat;
  if (sentence.length <= SHORT_DESCRIPTION_LENGTH) return sentence;
  const cut = sentence.slice(0, SHORT_DESCRIPTION_LENGTH);
  const space = cut.lastIndexOf(' ');
  return `${space > SHORT_DESCRIPTION_LENGTH / 2 ? cut.slice(0, space) : cut}…`;
}
