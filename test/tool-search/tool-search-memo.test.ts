import { describe, expect, it } from 'vitest';
import { deferredToolSet } from '../../src/tools/tool-search/deferred-tool-set.js';
import { createTurnToolCatalog } from '../../src/turns/create-turn-tool-catalog.js';
import { providerNames, runToolSearch, sampleCatalogTools, sampleTool } from './tool-search-kit.js';

describe('what is computed once for the same tools', () => {
  it('finds the same deferred set for a new array of the same tools, and a new one when a tool changes', () => {
    const tools = sampleCatalogTools();
    const set = deferredToolSet(tools);
    expect(deferredToolSet([...tools])).toBe(set);
    const changed = [...tools.slice(0, -1), sampleTool({ name: 'send_fax', description: 'Fax, version two.' })];
    const other = deferredToolSet(changed);
    expect(other).not.toBe(set);
    expect(other.search('version two', 1).map((tool) => tool.description)).toEqual(['Fax, version two.']);
    expect(deferredToolSet([...tools])).toBe(set);
    expect(deferredToolSet(tools.slice(1))).not.toBe(set);
  });

  it('reuses the deferred part of the native list turn after turn, with per-turn tools in front', () => {
    const deferred = sampleCatalogTools();
    const turn = () => createTurnToolCatalog({ tools: [sampleTool({ name: 'todo', deferLoading: false }), ...deferred], toolSearchMode: 'native' }).providerTools();
    const first = turn();
    const second = turn();
    expect(second.json).toBe(first.json);
    expect(second.tools[1]).toBe(first.tools[1]);
    // A per-turn tool is a new object each turn, but its definition is the same: shown as one shared object.
    expect(second.tools[0]).toBe(first.tools[0]);
    expect(second.tools).toBe(first.tools);
    expect(Object.isFrozen(second.tools)).toBe(true);
  });

  it('shares a per-turn tool\'s definition only with tools of the same name, description and schema', () => {
    const list = (tool: Parameters<typeof sampleTool>[0]) => createTurnToolCatalog({ tools: [sampleTool(tool)], toolSearchMode: 'emulated' }).providerTools();
    const first = list({ name: 'todo', deferLoading: false });
    expect(list({ name: 'todo', deferLoading: false }).tools[0]).toBe(first.tools[0]);
    const described = list({ name: 'todo', deferLoading: false, description: 'Another description.' });
    expect(described.tools[0]).not.toBe(first.tools[0]);
    expect(described.tools[0]).toMatchObject({ name: 'todo', description: 'Another description.' });
    expect(list({ name: 'todo2', deferLoading: false }).tools[0]).toMatchObject({ name: 'todo2' });
  });

  it('keeps what one turn loaded out of the next turn over the same memoised set', async () => {
    const deferred = sampleCatalogTools();
    const first = createTurnToolCatalog({ tools: deferred, toolSearchMode: 'emulated' });
    await runToolSearch(first, { query: 'invoice' });
    expect(providerNames(first.providerTools())).toContain('crm__send_invoice');
    const second = createTurnToolCatalog({ tools: deferred, toolSearchMode: 'emulated' });
    expect(providerNames(second.providerTools())).toEqual(['tool_search']);
  });
});
