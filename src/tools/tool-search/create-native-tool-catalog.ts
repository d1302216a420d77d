import type { JsonObject } from '../../json.js';
import type { ProviderToolList, ToolCatalog } from '../tool-catalog.js';
import { DuplicateToolError } from '../tool-map.js';
import type { WorkerAgentTool } from '../define-worker-tool.js';
import { deferredToolSet, groupNative } from './deferred-tool-set.js';
import { observeNativeToolSearch } from './observe-native-tool-search.js';
import { sharedToolList } from './shared-tool-lists.js';
import { splitDeferred } from './split-deferred.js';
import { toolFacts } from './tool-facts.js';

const TOOL_SEARCH_OBJECT: JsonObject = Object.freeze({ type: 'tool_search' });
const TOOL_SEARCH_JSON = '{"type":"tool_search"}';

/**
 * The catalog for providers with native Tool Search (the OpenAI Responses API): the tools go
 * out in the Responses shapes and the provider does the hiding and the searching.
 *
 * - A namespaced tool is a child of one `{type:'namespace', name, description, tools:[…]}`
 *   per namespace (description from the first `namespaceDescription` its tools give); calls
 *   come back with `namespace` + `name`, which is the tool's identity.
 * - A deferred tool carries `defer_loading: true` on the function itself, never on the
 *   namespace (the guide: deferral applies to a namespace's functions), and the list ends
 *   with `{type:'tool_search'}` when anything is deferred.
 * - The tools shown from the start come first, in assembly order, then the deferred ones
 *   (in theirs): the deferred part is the same text turn after turn, memoised with its set,
 *   and the order keeps the request prefix stable. A namespace holding both kinds of tools
 *   stays one namespace, grouped over all the tools in assembly order.
 * - Every tool is callable from the start: the provider decides what the model has loaded,
 *   and its `tool_search_call` / `tool_search_output` items stay in the conversation (the
 *   loop keeps every output item), so later requests carry what was loaded.
 *
 * The list never changes during the turn. Throws `DuplicateToolError` on a shared identity.
 */
export function createNativeToolCatalog(options: { readonly tools: readonly WorkerAgentTool[] }): ToolCatalog {
  const { tools } = options;
  const { shown, deferred } = splitDeferred(tools);
  const set = deferred.length === 0 ? undefined : deferredToolSet(deferred);
  if (set?.duplicateIdentity !== undefined) throw new DuplicateToolError(set.duplicateIdentity);

  const map = new Map(set?.byIdentity);
  let mixed = false;
  for (const tool of shown) {
    const { identity } = toolFacts(tool);
    if (map.has(identity)) throw new DuplicateToolError(identity);
    map.set(identity, tool);
    if (tool.namespace !== undefined) mixed ||= set?.namespaces.has(tool.namespace) === true;
  }

  let list: ProviderToolList;
  if (set === undefined || mixed) {
    const grouped = set === undefined ? shown : [...shown, ...deferred];
    const entries = groupNative(grouped, namespaceDescriptions(grouped));
    const objects = entries.map((entry) => entry.object);
    const texts = entries.map((entry) => entry.json);
    if (set !== undefined) {
      objects.push(TOOL_SEARCH_OBJECT);
      texts.push(TOOL_SEARCH_JSON);
    }
    list = { ...sharedToolList(objects, `[${texts.join(',')}]`), version: 1 };
  } else {
    const entries = groupNative(shown, namespaceDescriptions(shown));
    const shownJson = entries.map((entry) => `${entry.json},`).join('');
    list = {
      ...sharedToolList([...entries.map((entry) => entry.object), ...set.native.objects, TOOL_SEARCH_OBJECT], `[${shownJson}${set.native.json},${TOOL_SEARCH_JSON}]`),
      version: 1,
    };
  }

  return {
    assembled: tools,
    callable: () => map,
    providerTools: () => list,
    observe: observeNativeToolSearch,
  };
}

/** Each namespace's description: the first non-blank `namespaceDescription` among its tools. */
function namespaceDescriptions(tools: readonly WorkerAgentTool[]): Map<string, { description: string | undefined }> {
  const descriptions = new Map<string, { description: string | undefined }>();
  for (const tool of tools) {
    if (tool.namespace === undefined) continue;
    const description = tool.namespaceDescription === undefined || tool.namespaceDescription.trim() === '' ? undefined : tool.namespaceDescription;
    const known = descriptions.get(tool.namespace);
    if (known === undefined) descriptions.set(tool.namespace, { description });
    else known.description ??= description;
  }
  return descriptions;
}
