import { describe, expect, it } from 'vitest';
import { MAX_TOOLS_PER_SEARCH } from '../../src/tools/tool-search/create-tool-search-tool.js';
import { createTurnToolCatalog } from '../../src/turns/create-turn-tool-catalog.js';
import { providerNames, runToolSearch, sampleCatalogTools, sampleTool } from './tool-search-kit.js';

const emulated = (tools = sampleCatalogTools()) => createTurnToolCatalog({ tools, toolSearchMode: 'emulated' });

describe('tool_search by path', () => {
  it('loads every tool of a namespace, shown from the next request on and callable', async () => {
    const catalog = emulated();
    const before = catalog.providerTools();
    const result = await runToolSearch(catalog, { paths: ['calendar'] });
    expect(result.label).toBe('Loading tools: calendar');
    expect(result.completed).toBe('Loaded 3 tools: create_event, list_events, find_free_time');
    expect(result.text).toBe(
      [
        'Loaded 3 tools; call them from your next step on:',
        '- calendar__create_event: Create an event in the calendar.',
        '- calendar__list_events: List events between two dates.',
        '- calendar__find_free_time: Find a free slot for a meeting.',
      ].join('\n'),
    );
    const after = catalog.providerTools();
    expect(after.version).not.toBe(before.version);
    expect(providerNames(after)).toEqual(['tool_search', 'calendar__create_event', 'calendar__list_events', 'calendar__find_free_time']);
    expect(after.json).toBe(JSON.stringify(after.tools));
    expect(catalog.callable().get('calendar__list_events')?.name).toBe('list_events');
    expect(catalog.callable().get('calendar.list_events')?.name).toBe('list_events');
    expect(catalog.callable().has('crm.list_orders')).toBe(false);
  });

  it('loads one tool by namespace.tool, by namespace/tool, by its shown name, or a top-level tool by name', async () => {
    const catalog = emulated();
    await runToolSearch(catalog, { paths: ['crm.send_invoice', 'chat/post_message', 'calendar__list_events', 'send_fax'] });
    expect(providerNames(catalog.providerTools())).toEqual(['tool_search', 'crm__send_invoice', 'chat__post_message', 'calendar__list_events', 'send_fax']);
  });

  it('fails closed on an unknown path: a clear error, and nothing loads, not even the known paths', async () => {
    const catalog = emulated();
    const before = catalog.providerTools();
    const failure = await runToolSearch(catalog, { paths: ['calendar', 'calender.create_event', '__proto__'] }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toContain('unknown tool paths "calender.create_event", "__proto__"; nothing was loaded.');
    expect(failure?.message).toContain('Did you mean: calendar.create_event');
    expect(failure?.message).toContain('Searchable namespaces: calendar, crm, chat.');
    expect(catalog.providerTools()).toBe(before);
    expect(catalog.callable().has('calendar.create_event')).toBe(false);
  });

  it('says a shown tool needs no loading, and a second search for loaded tools loads nothing new', async () => {
    const catalog = emulated([sampleTool({ name: 'read_file', deferLoading: false }), ...sampleCatalogTools()]);
    const first = await runToolSearch(catalog, { paths: ['read_file', 'send_fax'] });
    expect(first.text).toContain('Already available, no need to load: read_file.');
    const version = catalog.providerTools().version;
    const again = await runToolSearch(catalog, { paths: ['send_fax'] });
    expect(again.text).toBe('Already available, no need to load: send_fax.');
    expect(again.completed).toBe('The tools found were already loaded');
    expect(catalog.providerTools().version).toBe(version);
  });

  it(`loads at most ${MAX_TOOLS_PER_SEARCH} tools per search and says how to get the rest`, async () => {
    const big = Array.from({ length: 73 }, (_, index) => sampleTool({ name: `op_${index}`, namespace: 'big' }));
    const catalog = emulated(big);
    const result = await runToolSearch(catalog, { paths: ['big'] });
    expect(result.details?.['loaded']).toHaveLength(MAX_TOOLS_PER_SEARCH);
    expect(result.details?.['notLoaded']).toBe(23);
    expect(result.text).toContain('Not loaded: 23 more tools (at most 50 load per search). Load the ones you need by path (such as "big.op_50") or with a narrower query.');
    expect(result.completed).toBe('Loaded 50 tools: op_0, op_1, op_2, op_3, op_4 and 45 more');
    expect(catalog.providerTools().tools).toHaveLength(1 + MAX_TOOLS_PER_SEARCH);
    // The rest can still be loaded by a later search.
    await runToolSearch(catalog, { paths: ['big'] });
    expect(catalog.providerTools().tools).toHaveLength(1 + 73);
  });
});

describe('tool_search by query', () => {
  it('loads the best matches, labelled for a person', async () => {
    const catalog = emulated();
    const result = await runToolSearch(catalog, { query: 'calendar', limit: 3 });
    expect(result.label).toBe("Searching tools for 'calendar'");
    expect(result.completed).toBe('Loaded 3 tools: create_event, list_events, find_free_time');
    expect(result.text.split('\n')[0]).toBe('Loaded 3 tools for "calendar"; call them from your next step on:');
  });

  it('loads a CJK tool for a CJK query', async () => {
    const catalog = emulated();
    const result = await runToolSearch(catalog, { query: '发送消息', limit: 1 });
    expect(result.details?.['loaded']).toEqual(['chat.post_message']);
  });

  it('answers a query that matches nothing without loading anything and without failing', async () => {
    const catalog = emulated();
    const result = await runToolSearch(catalog, { query: 'teleport' });
    expect(result.completed).toBe("No tools matched 'teleport'");
    expect(result.text).toBe('No tools matched "teleport". Try other words, or load by path. Searchable namespaces: calendar, crm, chat.');
    expect(catalog.providerTools().version).toBe(1);
  });

  it('refuses arguments with neither a query nor paths, and more than 50 paths', () => {
    const search = emulated().callable().get('tool_search')!;
    expect(search.checkArguments({}).ok).toBe(false);
    expect(search.checkArguments({ query: '   ' }).ok).toBe(false);
    expect(search.checkArguments({ paths: Array.from({ length: 51 }, () => 'calendar') }).ok).toBe(false);
    expect(search.checkArguments({ query: 'x', extra: 1 }).ok).toBe(false);
  });
});

describe('the loaded set', () => {
  it('is per turn: another catalog over the same tools starts with nothing loaded', async () => {
    const tools = sampleCatalogTools();
    const first = emulated(tools);
    await runToolSearch(first, { paths: ['calendar'] });
    const second = emulated(tools);
    expect(providerNames(second.providerTools())).toEqual(['tool_search']);
    expect(second.callable().has('calendar.create_event')).toBe(false);
  });
});
