import type { ProviderToolList, ToolCatalog } from '../tool-catalog.js';
import { DuplicateToolError } from '../tool-map.js';
import type { WorkerAgentTool } from '../define-worker-tool.js';
import { createToolSearchTool, TOOL_SEARCH_NAME } from './create-tool-search-tool.js';
import { deferredToolSet, type DeferredToolSet } from './deferred-tool-set.js';
import { hashedToolName } from './flatten-tool-name.js';
import { sharedToolList } from './shared-tool-lists.js';
import { functionDefinition, toolFacts, type ProviderDefinition } from './tool-facts.js';
import { splitDeferred } from './split-deferred.js';

/**
 * The catalog for endpoints that know nothing of namespaces or Tool Search (any
 * OpenAI-compatible Responses server), and for the scripted model:
 *
 * - every tool is a plain `function`; a namespaced one is shown as `namespace__name`
 *   (provider-safe, at most 64 characters, unique among the turn's names), and a call to that
 *   name, or to `name` with `namespace`, reaches the same tool;
 * - deferred tools are hidden, neither shown nor callable, until the synthesized
 *   `tool_search` function loads them; from the next model call on they are shown (after the
 *   tools shown from the start, so the prompt prefix stays cacheable) and callable;
 * - the loaded set only grows, for the rest of the turn, and `providerTools().version` moves
 *   each time it does, so the loop records the new list.
 *
 * Per turn, the work is proportional to the tools shown from the start (a handful): the
 * deferred tools' identities, names, JSON text, listing and BM25 index come from the memo of
 * their set, shared by every turn with the same tools. Throws `DuplicateToolError` when two
 * tools share an identity or a provider name.
 */
export function createEmulatedToolCatalog(options: { readonly tools: readonly WorkerAgentTool[] }): ToolCatalog {
  const { tools } = options;
  const { shown, deferred } = splitDeferred(tools);
  const set = deferred.length === 0 ? undefined : deferredToolSet(deferred);
  const names = nameShownTools(shown, set);

  const loaded: WorkerAgentTool[] = [];
  const loadedSet = new Set<WorkerAgentTool>();
  let version = 1;
  const providerName = (tool: WorkerAgentTool): string => names.shownNames.get(tool) ?? names.moved.get(tool) ?? set?.flatNames.get(tool) ?? tool.name;
  const definition = (tool: WorkerAgentTool): ProviderDefinition => {
    const name = providerName(tool);
    return name === toolFacts(tool).flatName ? toolFacts(tool).emulated : functionDefinition({ tool, name, deferLoading: false });
  };

  let search: { readonly tool: WorkerAgentTool; readonly definition: ProviderDefinition } | undefined;
  if (set !== undefined) {
    const tool = createToolSearchTool({
      host: {
        set,
        // Shown tools first: a moved deferred name now belongs to the shown tool that had it.
        lookupName: (name) => names.byName.get(name) ?? set.byIdentity.get(name) ?? names.byMovedName.get(name) ?? set.byFlatName.get(name),
        providerName,
        isLoaded: (candidate) => loadedSet.has(candidate),
        load: (chosen) => {
          const fresh = chosen.filter((candidate) => candidate.deferLoading && !loadedSet.has(candidate));
          if (fresh.length === 0) return;
          for (const candidate of fresh) loadedSet.add(candidate);
          loaded.push(...fresh);
          version += 1;
        },
      },
    }) as WorkerAgentTool;
    search = { tool, definition: functionDefinition({ tool, name: TOOL_SEARCH_NAME, deferLoading: false }) };
  }

  // Both rebuilt only when the loaded set has grown since they were last asked for.
  let callable: { readonly version: number; readonly map: ReadonlyMap<string, WorkerAgentTool> } | undefined;
  let list: ProviderToolList | undefined;
  const visible = (): WorkerAgentTool[] => [...shown, ...(search === undefined ? [] : [search.tool]), ...loaded];

  return {
    assembled: tools,
    callable() {
      if (callable?.version === version) return callable.map;
      const map = new Map<string, WorkerAgentTool>();
      for (const tool of visible()) {
        map.set(toolFacts(tool).identity, tool);
        map.set(providerName(tool), tool);
      }
      callable = { version, map };
      return map;
    },
    providerTools() {
      if (list?.version === version) return list;
      const definitions = visible().map((tool) => (tool === search?.tool ? search.definition : definition(tool)));
      const shared = sharedToolList(
        definitions.map((entry) => entry.object),
        `[${definitions.map((entry) => entry.json).join(',')}]`,
      );
      list = { tools: shared.tools, json: shared.json, version };
      return list;
    },
  };
}

interface ShownNames {
  /** The provider name of each shown tool. */
  readonly shownNames: ReadonlyMap<WorkerAgentTool, string>;
  /** Shown tools by provider name and by identity. */
  readonly byName: ReadonlyMap<string, WorkerAgentTool>;
  /** Deferred tools whose set name a shown tool already had, and their new names. */
  readonly moved: ReadonlyMap<WorkerAgentTool, string>;
  readonly byMovedName: ReadonlyMap<string, WorkerAgentTool>;
}

/**
 * Names the turn's shown tools against the deferred set's names. Top-level names are what
 * they are; a flattened name that is taken gives way to a hashed one. Refuses shared
 * identities, and a top-level tool named `tool_search` when the search is synthesized.
 */
function nameShownTools(shown: readonly WorkerAgentTool[], set: DeferredToolSet | undefined): ShownNames {
  if (set?.duplicateIdentity !== undefined) throw new DuplicateToolError(set.duplicateIdentity);
  const shownNames = new Map<WorkerAgentTool, string>();
  const byName = new Map<string, WorkerAgentTool>();
  const moved = new Map<WorkerAgentTool, string>();
  const byMovedName = new Map<string, WorkerAgentTool>();
  const identities = new Set<string>();
  const taken = (name: string): boolean =>
    byName.has(name) || byMovedName.has(name) || (set !== undefined && (set.topLevel.has(name) || set.byFlatName.has(name) || name === TOOL_SEARCH_NAME));

  for (const tool of shown) {
    const { identity } = toolFacts(tool);
    if (identities.has(identity) || set?.byIdentity.has(identity) === true) throw new DuplicateToolError(identity);
    identities.add(identity);
    if (tool.namespace !== undefined) continue;
    if ((set !== undefined && tool.name === TOOL_SEARCH_NAME) || byMovedName.has(tool.name)) throw new DuplicateToolError(tool.name);
    const displaced = set?.byFlatName.get(tool.name);
    shownNames.set(tool, tool.name);
    byName.set(tool.name, tool);
    if (displaced !== undefined) {
      const name = hashedToolName({ namespace: displaced.namespace ?? '', name: displaced.name });
      if (taken(name)) throw new DuplicateToolError(name);
      moved.set(displaced, name);
      byMovedName.set(name, displaced);
    }
  }
  for (const tool of shown) {
    if (tool.namespace === undefined) continue;
    let name = toolFacts(tool).flatName;
    if (taken(name)) name = hashedToolName({ namespace: tool.namespace, name: tool.name });
    if (taken(name)) throw new DuplicateToolError(name);
    shownNames.set(tool, name);
    byName.set(name, tool);
  }
  for (const tool of shown) byName.set(toolFacts(tool).identity, tool);
  return { shownNames, byName, moved, byMovedName };
}
