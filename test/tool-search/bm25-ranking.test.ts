import { describe, expect, it } from 'vitest';
import { createBm25Index } from '../../src/tools/tool-search/bm25-index.js';
import { deferredToolSet } from '../../src/tools/tool-search/deferred-tool-set.js';
import { toolFacts } from '../../src/tools/tool-search/tool-facts.js';
import { tokenizeSearchText } from '../../src/text/tokenize-search-text.js';
import { sampleCatalogTools, sampleTool } from './tool-search-kit.js';

const field = (text: string, weight = 1) => ({ terms: tokenizeSearchText(text), weight });
const search = (query: string, tools = sampleCatalogTools(), limit = 5) => deferredToolSet(tools).search(query, limit).map((tool) => toolFacts(tool).identity);

describe('the BM25 scorer', () => {
  it('ranks a rare matching term above a common one, and finds only documents that match', () => {
    const index = createBm25Index({
      documents: [
        { fields: [field('list the files')] },
        { fields: [field('list the invoices')] },
        { fields: [field('list the users')] },
        { fields: [field('delete a user')] },
      ],
    });
    expect(index.search({ terms: tokenizeSearchText('list invoices'), limit: 10 }).map((hit) => hit.document)).toEqual([1, 0, 2]);
    expect(index.search({ terms: tokenizeSearchText('nothing here'), limit: 10 })).toEqual([]);
    expect(index.search({ terms: tokenizeSearchText('list'), limit: 0 })).toEqual([]);
  });

  it('counts a match in a heavier field for more, and does not let a long document win by length', () => {
    const index = createBm25Index({
      documents: [
        { fields: [field('report', 1), field('build the weekly report for the team and send it around to everyone who asked', 1)] },
        { fields: [field('report', 3), field('weekly', 1)] },
      ],
    });
    const hits = index.search({ terms: ['report'], limit: 2 });
    expect(hits.map((hit) => hit.document)).toEqual([1, 0]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('keeps assembly order between equal scores, and an empty index finds nothing', () => {
    const index = createBm25Index({ documents: [{ fields: [field('same text')] }, { fields: [field('same text')] }] });
    expect(index.search({ terms: ['same'], limit: 2 }).map((hit) => hit.document)).toEqual([0, 1]);
    expect(createBm25Index({ documents: [] }).search({ terms: ['x'], limit: 3 })).toEqual([]);
  });
});

describe('ranking deferred tools', () => {
  it('puts a tool named for the query above one whose description merely mentions it', () => {
    const tools = [
      sampleTool({ name: 'notify_team', description: 'Tell the team; can also send an invoice reminder.' }),
      sampleTool({ name: 'send_invoice', description: 'Mail a bill to a customer.' }),
    ];
    expect(search('send invoice', tools)[0]).toBe('send_invoice');
    expect(search('send_invoice', tools)[0]).toBe('send_invoice');
  });

  it('finds tools through their namespace description alone', () => {
    // "billing" appears nowhere but in the namespace description.
    const tools = [
      sampleTool({ name: 'charge', description: 'Charge a card.', namespace: 'payments', namespaceDescription: 'Billing and payments.' }),
      sampleTool({ name: 'notes', description: 'Keep notes.' }),
    ];
    expect(search('billing', tools)).toEqual(['payments.charge']);
  });

  it('finds tools through their parameter names', () => {
    expect(search('customer_id')[0]).toBe('crm.list_orders');
    expect(search('start time')[0]).toBe('calendar.create_event');
  });

  it('finds a CJK tool with a CJK query, by its description or its namespace description', () => {
    expect(search('发送消息')[0]).toBe('chat.post_message');
    expect(search('频道')).toEqual(expect.arrayContaining(['chat.post_message', 'chat.list_channels']));
    expect(search('团队聊天')).toEqual(expect.arrayContaining(['chat.post_message', 'chat.list_channels']));
  });

  it('matches plural and singular, and camelCase queries against snake_case names', () => {
    expect(search('calendar event')[0]).toBe('calendar.create_event');
    expect(search('listEvents')[0]).toBe('calendar.list_events');
    expect(search('invoices')[0]).toBe('crm.send_invoice');
  });

  it('returns nothing for a query without words or without matches', () => {
    expect(search('!!!')).toEqual([]);
    expect(search('teleport')).toEqual([]);
    expect(search('__proto__')).toEqual([]);
  });
});
