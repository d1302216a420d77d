import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/json.js';
import { createScriptedModel } from '../../src/models/scripted-model.js';
import { createTurnToolCatalog } from '../../src/turns/create-turn-tool-catalog.js';
import { providerNames, recordingModel, runCatalogLoop, sampleCatalogTools, sampleTool } from './tool-search-kit.js';

describe('emulated Tool Search in a turn (scripted model, real loop)', () => {
  it('searches by query, shows the loaded tools from the next request on, and runs one of them', async () => {
    const calls: JsonObject[] = [];
    const tools = [
      sampleTool({ name: 'read_file', deferLoading: false }),
      ...sampleCatalogTools().filter((tool) => tool.name !== 'create_event'),
      sampleTool({ name: 'create_event', namespace: 'calendar', description: 'Create an event in the calendar.', calls, parameters: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] } }),
    ];
    const catalog = createTurnToolCatalog({ tools, toolSearchMode: 'emulated' });
    const recorded = recordingModel(
      createScriptedModel({
        script: [
          { calls: [{ name: 'tool_search', arguments: { query: 'calendar', limit: 3 }, callId: 'search' }] },
          { calls: [{ name: 'calendar__create_event', arguments: { title: 'Standup' }, callId: 'create' }] },
          { text: 'Booked.' },
        ],
      }),
    );

    const { outcome, events, changes } = await runCatalogLoop({ model: recorded.model, catalog });

    expect(outcome).toMatchObject({ kind: 'answered', text: 'Booked.', iterations: 3 });
    expect(calls).toEqual([{ title: 'Standup' }]);
    const search = events.filter((event) => 'callId' in event && event.callId === 'search');
    expect(search.map((event) => [event.type, 'label' in event ? event.label : undefined])).toEqual([
      ['tool.started', "Searching tools for 'calendar'"],
      ['tool.completed', 'Loaded 3 tools: create_event, list_events, find_free_time'],
    ]);
    expect(events.find((event) => event.type === 'tool.completed' && event.callId === 'create')).toMatchObject({ name: 'create_event', output: 'calendar.create_event ran' });

    // What the model was shown: the search first, then the loaded tools appended, best match first.
    expect(recorded.requests.map((request) => request.tools.map((tool) => tool['name']))).toEqual([
      ['read_file', 'tool_search'],
      ['read_file', 'tool_search', 'calendar__create_event', 'calendar__list_events', 'calendar__find_free_time'],
      ['read_file', 'tool_search', 'calendar__create_event', 'calendar__list_events', 'calendar__find_free_time'],
    ]);
    // The loop is told once, for the iteration in which the list changed.
    expect(changes.map((change) => [change.iteration, providerNames(change.list)])).toEqual([
      [2, ['read_file', 'tool_search', 'calendar__create_event', 'calendar__list_events', 'calendar__find_free_time']],
    ]);
  });

  it('answers a call to a deferred tool that was never loaded as an unknown tool, running nothing', async () => {
    const calls: JsonObject[] = [];
    const catalog = createTurnToolCatalog({ tools: [sampleTool({ name: 'create_event', namespace: 'calendar', calls })], toolSearchMode: 'emulated' });
    const model = createScriptedModel({
      script: [
        {
          calls: [
            { name: 'calendar__create_event', arguments: {}, callId: 'flat' },
            { name: 'create_event', namespace: 'calendar', arguments: {}, callId: 'namespaced' },
          ],
        },
        { text: 'I could not.' },
      ],
    });
    const { events, changes } = await runCatalogLoop({ model, catalog });
    const failed = events.filter((event) => event.type === 'tool.failed');
    expect(failed.map((event) => [event.callId, event.error.code])).toEqual([
      ['flat', 'unknown_tool'],
      ['namespaced', 'unknown_tool'],
    ]);
    // Called by its identity, the model is told how to load it.
    expect(failed[1]?.type === 'tool.failed' && failed[1].output).toContain('call tool_search with paths ["calendar.create_event"] first');
    expect(calls).toEqual([]);
    expect(changes).toEqual([]);
  });

  it('keeps a search that named an unknown path from loading anything; the model reads why', async () => {
    const catalog = createTurnToolCatalog({ tools: sampleCatalogTools(), toolSearchMode: 'emulated' });
    const recorded = recordingModel(
      createScriptedModel({ script: [{ calls: [{ name: 'tool_search', arguments: { paths: ['calendar', 'nope'] }, callId: 'bad' }] }, { text: 'ok' }] }),
    );
    const { events, changes } = await runCatalogLoop({ model: recorded.model, catalog });
    expect(events.find((event) => event.type === 'tool.failed')).toMatchObject({ callId: 'bad', label: 'Loading tools: calendar, nope', error: { code: 'tool_error' } });
    const output = recorded.requests[1]?.input.find((item) => item.type === 'function_call_output');
    expect(output).toMatchObject({ output: expect.stringContaining('Error: unknown tool path "nope"; nothing was loaded.') });
    expect(changes).toEqual([]);
    expect(recorded.requests[1]?.tools.map((tool) => tool['name'])).toEqual(['tool_search']);
  });

  it('makes a tool loaded in one response callable only from the next response on', async () => {
    const calls: JsonObject[] = [];
    const catalog = createTurnToolCatalog({ tools: [sampleTool({ name: 'send_fax', calls })], toolSearchMode: 'emulated' });
    const model = createScriptedModel({
      script: [
        { calls: [{ name: 'tool_search', arguments: { paths: ['send_fax'] }, callId: 'search' }, { name: 'send_fax', arguments: {}, callId: 'early' }] },
        { calls: [{ name: 'send_fax', arguments: {}, callId: 'later' }] },
        { text: 'Sent.' },
      ],
    });
    const { events } = await runCatalogLoop({ model, catalog });
    expect(events.find((event) => event.type === 'tool.failed')).toMatchObject({ callId: 'early', error: { code: 'unknown_tool' } });
    expect(events.find((event) => event.type === 'tool.completed' && event.callId === 'later')).toMatchObject({ name: 'send_fax' });
    expect(calls).toHaveLength(1);
  });
});
