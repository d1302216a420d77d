import { isJsonObject, type JsonObject, type JsonValue } from '../../json.js';
import type { ObservedResponse } from '../tool-catalog.js';
import { TOOL_SEARCH_NAME } from './create-tool-search-tool.js';
import { describeFinishedToolSearch, describeToolSearch, describeToolSearchResult } from './tool-search-labels.js';

interface SearchRecord {
  readonly call: JsonObject;
  output: JsonObject | undefined;
}

/**
 * Native Tool Search runs inside the provider, so the person would see nothing of it. This
 * turns each `tool_search_call` of a response into `tool.started` and, with its
 * `tool_search_output`, `tool.completed`, with the labels an emulated search shows. An output
 * is paired with its call by `call_id`, or, when the provider leaves `call_id` null (hosted
 * search may), with the earliest call still waiting for one. The items themselves are not
 * touched: they stay in the conversation as the provider sent them.
 */
export function observeNativeToolSearch({ response, iteration, emit }: ObservedResponse): void {
  const records: SearchRecord[] = [];
  for (const entry of response.outputItems) {
    if (entry.type !== 'opaque') continue;
    const { item } = entry;
    if (item['type'] === 'tool_search_call') {
      records.push({ call: item, output: undefined });
    } else if (item['type'] === 'tool_search_output') {
      const callId = stringField(item, 'call_id');
      const record =
        (callId === undefined ? undefined : records.find((candidate) => candidate.output === undefined && stringField(candidate.call, 'call_id') === callId)) ??
        records.find((candidate) => candidate.output === undefined);
      if (record !== undefined) record.output = item;
    }
  }
  records.forEach((record, index) => {
    const callId = stringField(record.call, 'call_id') ?? stringField(record.call, 'id') ?? `tool_search_${iteration}_${index + 1}`;
    const request = searchArguments(record.call['arguments']);
    emit({ type: 'tool.started', callId, name: TOOL_SEARCH_NAME, label: describeToolSearch(request), iteration, executionMode: 'parallel', repair: 'none' });
    const loaded = record.output === undefined ? [] : loadedTools(record.output['tools']);
    const label =
      record.output === undefined
        ? describeFinishedToolSearch(request)
        : describeToolSearchResult({ loaded: loaded.map((tool) => tool.name), query: request.query });
    emit({
      type: 'tool.completed',
      callId,
      name: TOOL_SEARCH_NAME,
      label,
      output: loaded.length === 0 ? 'No tools loaded.' : `Loaded: ${loaded.map((tool) => tool.identity).join(', ')}`,
      details: { execution: 'provider', loaded: loaded.map((tool) => tool.identity) },
      durationMs: 0,
      iteration,
      repair: 'none',
    });
  });
}

/** Hosted search sends `{paths, query}` (an object, or its JSON text); anything else is shown as a plain search. */
function searchArguments(value: JsonValue | undefined): { query?: string; paths?: string[] } {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      return { query: value };
    }
  }
  if (!isJsonObject(parsed)) return {};
  const query = typeof parsed['query'] === 'string' ? parsed['query'] : undefined;
  const paths = Array.isArray(parsed['paths']) ? parsed['paths'].filter((path): path is string => typeof path === 'string') : undefined;
  return { ...(query === undefined ? {} : { query }), ...(paths === undefined ? {} : { paths }) };
}

/** The functions a `tool_search_output` loaded: a namespace's children, plain functions, MCP servers by label. */
function loadedTools(value: JsonValue | undefined): { name: string; identity: string }[] {
  if (!Array.isArray(value)) return [];
  const tools: { name: string; identity: string }[] = [];
  for (const tool of value.filter(isJsonObject)) {
    const name = stringField(tool, 'name') ?? stringField(tool, 'server_label');
    if (name === undefined) continue;
    const children = tool['type'] === 'namespace' && Array.isArray(tool['tools']) ? tool['tools'].filter(isJsonObject) : undefined;
    if (children === undefined) {
      tools.push({ name, identity: name });
      continue;
    }
    for (const child of children) {
      const childName = stringField(child, 'name');
      if (childName !== undefined) tools.push({ name: childName, identity: `${name}.${childName}` });
    }
  }
  return tools;
}

function stringField(item: JsonObject, field: string): string | undefined {
  const value = item[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
