import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/json.js';
import { DuplicateToolError } from '../../src/tools/tool-map.js';
import { createTurnToolCatalog, resolveToolSearchMode } from '../../src/turns/create-turn-tool-catalog.js';
import { toProviderTools } from '../../src/turns/provider-tools.js';
import { providerNames, runToolSearch, sampleCatalogTools, sampleTool } from './tool-search-kit.js';

const readFile = () => sampleTool({ name: 'read_file', description: 'Read a file.', deferLoading: false });

describe('native mode: the Responses shapes', () => {
  it('groups namespaced tools into one namespace tool each, defers their functions, and adds tool_search', () => {
    const catalog = createTurnToolCatalog({ tools: [readFile(), ...sampleCatalogTools()], toolSearchMode: 'native' });
    const list = catalog.providerTools();
    expect(providerNames(list)).toEqual([
      'read_file',
      'calendar.{create_event,list_events,find_free_time}',
      'crm.{list_orders,send_invoice}',
      'chat.{post_message,list_channels}',
      'send_fax',
      '{tool_search}',
    ]);
    const calendar = list.tools[1] as JsonObject;
    expect(calendar).toEqual({
      type: 'namespace',
      name: 'calendar',
      description: 'Calendar tools: events, invitations and free time.',
      tools: expect.any(Array),
    });
    expect(calendar).not.toHaveProperty('defer_loading');
    expect((calendar['tools'] as JsonObject[])[0]).toEqual({
      type: 'function',
      name: 'create_event',
      description: 'Create an event in the calendar.',
      parameters: { type: 'object', properties: { title: { type: 'string' }, start_time: { type: 'string' } } },
      strict: false,
      defer_loading: true,
    });
    expect(list.tools[4]).toMatchObject({ type: 'function', name: 'send_fax', defer_loading: true });
    expect(list.tools[0]).not.toHaveProperty('defer_loading');
    expect(list.tools.at(-1)).toEqual({ type: 'tool_search' });
    expect(list.json).toBe(JSON.stringify(list.tools));
  });

  it('makes every tool callable by namespace and name from the start, and never changes the list', () => {
    const catalog = createTurnToolCatalog({ tools: [readFile(), ...sampleCatalogTools()], toolSearchMode: 'native' });
    expect([...catalog.callable().keys()]).toEqual(expect.arrayContaining(['read_file', 'calendar.create_event', 'chat.list_channels', 'send_fax']));
    expect(catalog.callable().has('tool_search')).toBe(false);
    expect(catalog.providerTools().version).toBe(catalog.providerTools().version);
  });

  it('keeps a namespace with shown and deferred tools as one namespace, and needs no tool_search without deferred tools', () => {
    const mixed = createTurnToolCatalog({
      tools: [
        sampleTool({ name: 'today', namespace: 'calendar', deferLoading: false }),
        readFile(),
        sampleTool({ name: 'create_event', namespace: 'calendar', namespaceDescription: 'Calendar tools.' }),
      ],
      toolSearchMode: 'native',
    }).providerTools();
    expect(providerNames(mixed)).toEqual(['calendar.{today,create_event}', 'read_file', '{tool_search}']);
    expect(mixed.tools[0]).toMatchObject({ description: 'Calendar tools.' });
    expect(mixed.json).toBe(JSON.stringify(mixed.tools));

    const plain = createTurnToolCatalog({ tools: [readFile(), sampleTool({ name: 'today', namespace: 'calendar', deferLoading: false })], toolSearchMode: 'native' }).providerTools();
    expect(plain.tools).toEqual([
      expect.objectContaining({ type: 'function', name: 'read_file' }),
      { type: 'namespace', name: 'calendar', description: 'Tools of calendar', tools: [expect.objectContaining({ name: 'today' })] },
    ]);
  });
});

describe('emulated mode: plain functions only', () => {
  it('hides deferred tools behind a synthesized tool_search that lists what can be searched', () => {
    const catalog = createTurnToolCatalog({ tools: [readFile(), ...sampleCatalogTools()], toolSearchMode: 'emulated' });
    const list = catalog.providerTools();
    expect(providerNames(list)).toEqual(['read_file', 'tool_search']);
    const search = list.tools[1] as JsonObject;
    expect(search).toMatchObject({ type: 'function', name: 'tool_search', strict: false });
    expect(search['parameters']).toMatchObject({ type: 'object', properties: { query: { type: 'string' }, paths: { type: 'array', maxItems: 50 } } });
    const description = search['description'] as string;
    expect(description).toContain('- calendar (3 tools: create_event, list_events, find_free_time): Calendar tools: events, invitations and free time.');
    expect(description).toContain('- chat (2 tools: post_message, list_channels): 团队聊天：频道和消息。');
    expect(description).toContain('- send_fax: Send a fax to a phone number.');
    expect(JSON.stringify(list.tools)).not.toContain('defer_loading');
    expect(JSON.stringify(list.tools)).not.toContain('"namespace"');
    expect(list.json).toBe(JSON.stringify(list.tools));
    expect([...catalog.callable().keys()].sort()).toEqual(['read_file', 'tool_search']);
  });

  it('shows a namespaced tool as namespace__name and reaches it by that name or by namespace and name', () => {
    const today = sampleTool({ name: 'today', namespace: 'calendar', deferLoading: false });
    const catalog = createTurnToolCatalog({ tools: [today], toolSearchMode: 'emulated' });
    expect(catalog.providerTools().tools).toEqual([expect.objectContaining({ type: 'function', name: 'calendar__today' })]);
    expect(catalog.callable().get('calendar__today')).toBe(today);
    expect(catalog.callable().get('calendar.today')).toBe(today);
    expect(catalog.callable().get('today')).toBeUndefined();
  });

  it('keeps flattened names within 64 characters and unique, giving way to a top-level tool that has the name', () => {
    const long = sampleTool({ name: 'n'.repeat(60), namespace: 's'.repeat(30), deferLoading: false });
    const squatter = sampleTool({ name: 'calendar__today', deferLoading: false });
    const today = sampleTool({ name: 'today', namespace: 'calendar', deferLoading: false });
    const catalog = createTurnToolCatalog({ tools: [long, today, squatter], toolSearchMode: 'emulated' });
    const names = catalog.providerTools().tools.map((tool) => tool['name'] as string);
    expect(names).toHaveLength(3);
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(names[2]).toBe('calendar__today');
    expect(names[1]).toMatch(/^calendar__today_[0-9a-f]{8}$/);
    expect(catalog.callable().get('calendar__today')).toBe(squatter);
    expect(catalog.callable().get(names[1]!)).toBe(today);
    expect(catalog.callable().get('calendar.today')).toBe(today);
  });

  it('renames a deferred tool whose flattened name a shown tool already has', async () => {
    const squatter = sampleTool({ name: 'calendar__create_event', deferLoading: false });
    const deferred = sampleTool({ name: 'create_event', namespace: 'calendar' });
    const catalog = createTurnToolCatalog({ tools: [squatter, deferred], toolSearchMode: 'emulated' });
    await runToolSearch(catalog, { paths: ['calendar.create_event'] });
    const names = catalog.providerTools().tools.map((tool) => tool['name'] as string);
    expect(names[0]).toBe('calendar__create_event');
    expect(names[2]).toMatch(/^calendar__create_event_[0-9a-f]{8}$/);
    expect(catalog.callable().get(names[2]!)).toBe(deferred);
    expect(catalog.callable().get('calendar__create_event')).toBe(squatter);
  });
});

describe('tool identities', () => {
  for (const mode of ['native', 'emulated'] as const) {
    it(`allows the same name in two namespaces and refuses it twice in one (${mode})`, () => {
      const twoNamespaces = [sampleTool({ name: 'lookup', namespace: 'acme' }), sampleTool({ name: 'lookup', namespace: 'remote' }), sampleTool({ name: 'lookup', deferLoading: false })];
      expect(() => createTurnToolCatalog({ tools: twoNamespaces, toolSearchMode: mode })).not.toThrow();
      const twice = [sampleTool({ name: 'lookup', namespace: 'acme' }), sampleTool({ name: 'lookup', namespace: 'acme' })];
      expect(() => createTurnToolCatalog({ tools: twice, toolSearchMode: mode })).toThrow(DuplicateToolError);
      expect(() => createTurnToolCatalog({ tools: twice, toolSearchMode: mode })).toThrow('"acme.lookup"');
      const shownAndDeferred = [sampleTool({ name: 'lookup', namespace: 'acme', deferLoading: false }), sampleTool({ name: 'lookup', namespace: 'acme' })];
      expect(() => createTurnToolCatalog({ tools: shownAndDeferred, toolSearchMode: mode })).toThrow(DuplicateToolError);
      const topLevel = [readFile(), readFile()];
      expect(() => createTurnToolCatalog({ tools: topLevel, toolSearchMode: mode })).toThrow(DuplicateToolError);
    });
  }

  it('refuses a tool of its own named tool_search when emulated mode synthesizes one', () => {
    const own = sampleTool({ name: 'tool_search', deferLoading: false });
    expect(() => createTurnToolCatalog({ tools: [own, sampleTool({ name: 'x', namespace: 'n' })], toolSearchMode: 'emulated' })).toThrow(DuplicateToolError);
    expect(() => createTurnToolCatalog({ tools: [own], toolSearchMode: 'emulated' })).not.toThrow();
  });

  it('refuses the same duplicate again on a later turn with the same (memoised) tools', () => {
    const twice = [sampleTool({ name: 'lookup', namespace: 'acme' }), sampleTool({ name: 'lookup', namespace: 'acme' })];
    for (let turn = 0; turn < 2; turn += 1) {
      expect(() => createTurnToolCatalog({ tools: twice, toolSearchMode: 'emulated' })).toThrow(DuplicateToolError);
      expect(() => createTurnToolCatalog({ tools: twice, toolSearchMode: 'native' })).toThrow(DuplicateToolError);
    }
  });
});

describe('the mode of a turn', () => {
  it('is always emulated for the scripted model, and the configured mode for a provider', () => {
    expect(resolveToolSearchMode({ model: { script: [] }, configured: 'native' })).toBe('emulated');
    expect(resolveToolSearchMode({ model: { name: 'gpt-5.4' }, configured: 'native' })).toBe('native');
    expect(resolveToolSearchMode({ model: {}, configured: 'emulated' })).toBe('emulated');
  });

  it('gives tools without namespaces or deferral the same plain list in both modes', () => {
    const tools = [readFile(), sampleTool({ name: 'write_file', deferLoading: false })];
    expect(toProviderTools(tools, 'native')).toEqual(toProviderTools(tools, 'emulated'));
    expect(toProviderTools(tools)).toEqual([
      { type: 'function', name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: {}, additionalProperties: false }, strict: false },
      expect.objectContaining({ name: 'write_file' }),
    ]);
  });
});
