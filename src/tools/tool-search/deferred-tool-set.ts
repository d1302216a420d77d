import type { JsonObject } from '../../json.js';
import type { WorkerAgentTool } from '../define-worker-tool.js';
import { createBm25Index, type Bm25Index } from './bm25-index.js';
import { hashedToolName } from './flatten-tool-name.js';
import { toolFacts, type ProviderDefinition } from './tool-facts.js';
import { tokenizeSearchText } from '../../text/tokenize-search-text.js';

/** A namespace with deferred tools in it, as the search shows it. */
export interface SearchableNamespace {
  readonly name: string;
  readonly description: string | undefined;
  /** Its deferred tools, in assembly order. */
  readonly members: readonly WorkerAgentTool[];
}

/** A turn's deferred tools and everything derived from them alone: built once, reused by every turn with the same tools. */
export interface DeferredToolSet {
  /** In assembly order. */
  readonly tools: readonly WorkerAgentTool[];
  readonly namespaces: ReadonlyMap<string, SearchableNamespace>;
  /** Deferred tools outside any namespace, by name. */
  readonly topLevel: ReadonlyMap<string, WorkerAgentTool>;
  /** Deferred tools by identity (`namespace.name` or `name`). */
  readonly byIdentity: ReadonlyMap<string, WorkerAgentTool>;
  /** An identity two of these tools share, if any: the turn must refuse them. */
  readonly duplicateIdentity: string | undefined;
  /**
   * Emulated mode's plain-function names of the namespaced tools (`calendar__create_event`),
   * unique within the set and never equal to a top-level deferred tool's name. A turn moves a
   * name only when one of its shown tools already has it.
   */
  readonly flatNames: ReadonlyMap<WorkerAgentTool, string>;
  readonly byFlatName: ReadonlyMap<string, WorkerAgentTool>;
  /**
   * Native mode's definitions of these tools, in order of first appearance: one `namespace`
   * per namespace, plain deferred functions as they are; and their JSON text, comma-joined
   * (no brackets), ready to splice into a turn's list without copying it.
   */
  readonly native: { readonly objects: readonly JsonObject[]; readonly json: string };
  /** The best matches for a free-text query, best first (BM25 over the tools' documents). */
  search(query: string, limit: number): WorkerAgentTool[];
  /** The searchable namespaces and tools as lines for the search tool's description, capped. */
  readonly listing: string;
}

const MAX_LISTING_CHARACTERS = 6_000;
const MAX_LISTED_MEMBERS = 6;
/** Distinct deferred sets remembered per first tool (a few agents sharing a source). */
const SETS_PER_KEY = 4;

/*
 * Keyed weakly by the set's first tool and confirmed element by element (2,000 pointer
 * comparisons cost microseconds): the tools array is new every turn, but a source that caches
 * its tools (an MCP server's list) hands out the same objects, in the same order, so the same
 * set is found again and its BM25 index and listing are not rebuilt. When the source drops
 * its tools, the key goes and the entry with it. A pure cache: nothing reads it but
 * `deferredToolSet`.
 */
const setMemo = new WeakMap<WorkerAgentTool, DeferredToolSet[]>();

/** The set for these deferred tools (in assembly order), from the memo when the same tools were seen before. */
export function deferredToolSet(tools: readonly WorkerAgentTool[]): DeferredToolSet {
  const first = tools[0];
  if (first === undefined) return buildDeferredToolSet(tools);
  const known = setMemo.get(first) ?? [];
  const found = known.find((set) => sameTools(set.tools, tools));
  if (found !== undefined) return found;
  const built = buildDeferredToolSet(tools);
  setMemo.set(first, [built, ...known].slice(0, SETS_PER_KEY));
  return built;
}

function sameTools(left: readonly WorkerAgentTool[], right: readonly WorkerAgentTool[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index += 1) if (left[index] !== right[index]) return false;
  return true;
}

function buildDeferredToolSet(input: readonly WorkerAgentTool[]): DeferredToolSet {
  const tools = [...input];
  const namespaces = new Map<string, { name: string; description: string | undefined; members: WorkerAgentTool[] }>();
  const topLevel = new Map<string, WorkerAgentTool>();
  const byIdentity = new Map<string, WorkerAgentTool>();
  let duplicateIdentity: string | undefined;
  for (const tool of tools) {
    const { identity } = toolFacts(tool);
    if (byIdentity.has(identity)) duplicateIdentity ??= identity;
    byIdentity.set(identity, tool);
    if (tool.namespace === undefined) {
      topLevel.set(tool.name, tool);
      continue;
    }
    let namespace = namespaces.get(tool.namespace);
    if (namespace === undefined) {
      namespace = { name: tool.namespace, description: undefined, members: [] };
      namespaces.set(tool.namespace, namespace);
    }
    namespace.description ??= nonEmpty(tool.namespaceDescription);
    namespace.members.push(tool);
  }

  const flatNames = new Map<WorkerAgentTool, string>();
  const byFlatName = new Map<string, WorkerAgentTool>();
  for (const namespace of namespaces.values()) {
    for (const tool of namespace.members) {
      let name = toolFacts(tool).flatName;
      if (topLevel.has(name) || byFlatName.has(name)) name = hashedToolName({ namespace: namespace.name, name: tool.name });
      // A second clash would need a SHA-256 prefix collision between two identities of one set.
      if (topLevel.has(name) || byFlatName.has(name)) duplicateIdentity ??= name;
      flatNames.set(tool, name);
      byFlatName.set(name, tool);
    }
  }

  // Built on first use: a turn that never searches never pays for them.
  let index: Bm25Index | undefined;
  let listing: string | undefined;
  let native: DeferredToolSet['native'] | undefined;
  return {
    tools,
    namespaces,
    topLevel,
    byIdentity,
    duplicateIdentity,
    flatNames,
    byFlatName,
    search(query, limit) {
      index ??= createBm25Index({ documents: tools.map((tool) => toolFacts(tool).document) });
      return index.search({ terms: tokenizeSearchText(query), limit }).map((hit) => tools[hit.document] as WorkerAgentTool);
    },
    get listing() {
      return (listing ??= buildListing(tools, namespaces));
    },
    get native() {
      if (native !== undefined) return native;
      const entries = groupNative(tools, namespaces);
      native = { objects: entries.map((entry) => entry.object), json: entries.map((entry) => entry.json).join(',') };
      return native;
    },
  };
}

/** The native definitions of some tools, a namespace where its first tool is; descriptions from `namespaceDescription`. */
export function groupNative(tools: readonly WorkerAgentTool[], namespaces: ReadonlyMap<string, { readonly description: string | undefined }>): ProviderDefinition[] {
  const entries: ProviderDefinition[] = [];
  const groups = new Map<string, ProviderDefinition[]>();
  const order: (ProviderDefinition | string)[] = [];
  for (const tool of tools) {
    const definition = toolFacts(tool).native;
    if (tool.namespace === undefined) {
      order.push(definition);
      continue;
    }
    let members = groups.get(tool.namespace);
    if (members === undefined) {
      members = [];
      groups.set(tool.namespace, members);
      order.push(tool.namespace);
    }
    members.push(definition);
  }
  for (const entry of order) {
    if (typeof entry !== 'string') {
      entries.push(entry);
      continue;
    }
    // `description` is required on a namespace; one its tools did not give is named plainly.
    const description = namespaces.get(entry)?.description ?? `Tools of ${entry}`;
    const members = groups.get(entry) ?? [];
    const object: JsonObject = { type: 'namespace', name: entry, description, tools: Object.freeze(members.map((member) => member.object)) as JsonObject[] };
    Object.freeze(object);
    // The same text `JSON.stringify(object)` gives, joined from the members' memoised JSON.
    const json = `{"type":"namespace","name":${JSON.stringify(entry)},"description":${JSON.stringify(description)},"tools":[${members.map((member) => member.json).join(',')}]}`;
    entries.push({ object, json });
  }
  return entries;
}

/**
 * One line per namespace (its tools' names, a few of them, and its description) or per
 * top-level deferred tool (its short description), in assembly order, until the cap; then a
 * count of what was left out. The model sees what exists without paying for every schema.
 */
function buildListing(tools: readonly WorkerAgentTool[], namespaces: ReadonlyMap<string, SearchableNamespace>): string {
  const lines: string[] = [];
  const listed = new Set<string>();
  let length = 0;
  let omittedTools = 0;
  for (const tool of tools) {
    const key = tool.namespace ?? `\u0000${tool.name}`;
    if (listed.has(key)) continue;
    listed.add(key);
    const namespace = tool.namespace === undefined ? undefined : namespaces.get(tool.namespace);
    const line = namespace === undefined ? toolLine(tool) : namespaceLine(namespace);
    if (length + line.length + 1 > MAX_LISTING_CHARACTERS) {
      omittedTools += namespace === undefined ? 1 : namespace.members.length;
      continue;
    }
    lines.push(line);
    length += line.length + 1;
  }
  if (omittedTools > 0) lines.push(`- … and ${omittedTools} more tools not listed here; search by query to find them.`);
  return lines.join('\n');
}

function namespaceLine(namespace: SearchableNamespace): string {
  const names = namespace.members.slice(0, MAX_LISTED_MEMBERS).map((tool) => tool.name);
  const more = namespace.members.length > MAX_LISTED_MEMBERS ? ', …' : '';
  const count = namespace.members.length === 1 ? '1 tool' : `${namespace.members.length} tools`;
  const description = namespace.description === undefined ? '' : `: ${shorten(namespace.description)}`;
  return `- ${namespace.name} (${count}: ${names.join(', ')}${more})${description}`;
}

function toolLine(tool: WorkerAgentTool): string {
  return `- ${tool.name}: ${toolFacts(tool).shortDescription}`;
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= 100 ? flat : `${flat.slice(0, 99)}…`;
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text.trim() === '' ? undefined : text;
}
