import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/json.js';
import type { ModelResponse } from '../../src/models/model-client.js';
import { createOpenAIResponsesModel } from '../../src/models/openai-responses-model.js';
import { observeNativeToolSearch } from '../../src/tools/tool-search/observe-native-tool-search.js';
import { createTurnToolCatalog } from '../../src/turns/create-turn-tool-catalog.js';
import type { TurnEventBody } from '../../src/events/turn-events.js';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { runCatalogLoop, sampleCatalogTools, sampleTool, silentLogger } from './tool-search-kit.js';

/** The items a hosted search adds to a response (shapes of openai-node's ResponseToolSearchCall / ResponseToolSearchOutputItem). */
const searchCall = { id: 'tsc_1', type: 'tool_search_call', call_id: 'tsc_call_1', execution: 'server', status: 'completed', arguments: { paths: ['calendar'] } };
const searchOutput = {
  id: 'tso_1',
  type: 'tool_search_output',
  call_id: 'tsc_call_1',
  execution: 'server',
  status: 'completed',
  tools: [
    {
      type: 'namespace',
      name: 'calendar',
      description: 'Calendar tools: events, invitations and free time.',
      tools: [{ type: 'function', name: 'create_event', description: 'Create an event in the calendar.', parameters: { type: 'object', properties: {} }, strict: false, defer_loading: true }],
    },
  ],
};

describe('native Tool Search in a turn (OpenAI Responses client, fake provider over HTTP)', () => {
  let provider: FakeResponsesProvider;
  beforeEach(async () => {
    provider = await startFakeResponsesProvider();
  });
  afterEach(async () => {
    await provider.close();
  });

  it('sends namespaces, defer_loading and tool_search, keeps the search items in the input, and runs the loaded tool', async () => {
    const calls: JsonObject[] = [];
    const tools = [
      sampleTool({ name: 'read_file', deferLoading: false }),
      ...sampleCatalogTools().map((tool) => (tool.name === 'create_event' ? sampleTool({ name: 'create_event', namespace: 'calendar', calls, parameters: { type: 'object', properties: { title: { type: 'string' } } } }) : tool)),
    ];
    const catalog = createTurnToolCatalog({ tools, toolSearchMode: 'native' });
    provider.enqueue(
      { items: [searchCall, searchOutput], calls: [{ name: 'create_event', namespace: 'calendar', arguments: '{"title":"Standup"}', callId: 'call_create' }] },
      { text: 'Booked.' },
    );
    const model = createOpenAIResponsesModel({ apiKey: 'sk-test-native-search', baseUrl: provider.baseUrl, model: 'gpt-5.4', maxRetries: 0, requestTimeoutMs: 10_000, logger: silentLogger });

    const { outcome, events, changes } = await runCatalogLoop({ model, catalog });

    expect(outcome).toMatchObject({ kind: 'answered', text: 'Booked.' });
    expect(calls).toEqual([{ title: 'Standup' }]);
    const [first, second] = provider.requests;
    // The tool list goes out byte for byte as the catalog built it, the same in both requests.
    expect(first!.rawBody).toContain(`"tools":${catalog.providerTools().json}`);
    expect(second!.rawBody).toContain(`"tools":${catalog.providerTools().json}`);
    const sent = first!.body.tools as JsonObject[];
    expect(sent.map((tool) => [tool['type'], tool['name']])).toEqual([
      ['function', 'read_file'],
      ['namespace', 'calendar'],
      ['namespace', 'crm'],
      ['namespace', 'chat'],
      ['function', 'send_fax'],
      ['tool_search', undefined],
    ]);
    expect(sent[1]).toMatchObject({ description: 'Calendar tools: events, invitations and free time.' });
    expect(sent[1]).not.toHaveProperty('defer_loading');
    for (const child of sent[1]!['tools'] as JsonObject[]) expect(child).toMatchObject({ type: 'function', defer_loading: true });
    expect(sent[0]).not.toHaveProperty('defer_loading');
    expect(sent[4]).toMatchObject({ defer_loading: true });
    expect(sent[5]).toEqual({ type: 'tool_search' });

    // The provider's search items come back in the next request's input, unchanged, before the call and its output.
    const input = second!.body.input as JsonObject[];
    const from = input.findIndex((item) => item['type'] === 'tool_search_call');
    expect(input.slice(from)).toEqual([
      searchCall,
      searchOutput,
      { type: 'function_call', call_id: 'call_create', name: 'create_event', arguments: '{"title":"Standup"}', namespace: 'calendar' },
      { type: 'function_call_output', call_id: 'call_create', output: 'calendar.create_event ran' },
    ]);

    // The person sees the provider's search like an emulated one, before the loaded tool runs.
    const activity = events.filter((event) => event.type === 'tool.started' || event.type === 'tool.completed');
    expect(activity.map((event) => [event.type, event.callId, event.name, event.label])).toEqual([
      ['tool.started', 'tsc_call_1', 'tool_search', 'Loading tools: calendar'],
      ['tool.completed', 'tsc_call_1', 'tool_search', 'Loaded 1 tool: create_event'],
      ['tool.started', 'call_create', 'create_event', 'Running create_event'],
      ['tool.completed', 'call_create', 'create_event', 'Running create_event'],
    ]);
    expect(activity[1]).toMatchObject({ output: 'Loaded: calendar.create_event', details: { execution: 'provider', loaded: ['calendar.create_event'] } });
    expect(changes).toEqual([]);
  });
});

describe('observing native tool search items', () => {
  const observe = (items: JsonObject[]): TurnEventBody[] => {
    const events: TurnEventBody[] = [];
    const response: ModelResponse = { text: '', calls: [], outputItems: items.map((item) => ({ type: 'opaque', item })), usage: { inputTokens: 0, outputTokens: 0 } };
    observeNativeToolSearch({ response, iteration: 2, emit: (event) => events.push(event) });
    return events;
  };

  it('pairs outputs with calls that have no call_id by order, and reads JSON-text arguments with a query', () => {
    const events = observe([
      { type: 'tool_search_call', id: 'tsc_a', call_id: null, arguments: '{"query":"calendar"}' },
      { type: 'tool_search_output', id: 'tso_a', call_id: null, tools: [{ type: 'function', name: 'send_fax' }, { type: 'namespace', name: 'crm', tools: [{ name: 'list_orders' }, { name: 'send_invoice' }] }] },
    ]);
    expect(events.map((event) => [event.type, 'callId' in event ? event.callId : '', 'label' in event ? event.label : ''])).toEqual([
      ['tool.started', 'tsc_a', "Searching tools for 'calendar'"],
      ['tool.completed', 'tsc_a', 'Loaded 3 tools: send_fax, list_orders, send_invoice'],
    ]);
    expect(events[1]).toMatchObject({ iteration: 2, output: 'Loaded: send_fax, crm.list_orders, crm.send_invoice', durationMs: 0 });
  });

  it('still completes a search whose output did not come, and ignores everything else', () => {
    const events = observe([{ type: 'reasoning', id: 'rs_1' }, { type: 'tool_search_call', arguments: { query: 'invoices' } }, { type: 'web_search_call', id: 'ws_1' }]);
    expect(events.map((event) => [event.type, 'callId' in event ? event.callId : '', 'label' in event ? event.label : ''])).toEqual([
      ['tool.started', 'tool_search_2_1', "Searching tools for 'invoices'"],
      ['tool.completed', 'tool_search_2_1', "Searched tools for 'invoices'"],
    ]);
    expect(observe([{ type: 'message', role: 'assistant' }])).toEqual([]);
  });
});
