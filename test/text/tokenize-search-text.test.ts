import { describe, expect, it } from 'vitest';
import { tokenizeSearchText } from '../../src/text/tokenize-search-text.js';

describe('tokenizeSearchText', () => {
  it('lower-cases ASCII words and drops punctuation and spaces', () => {
    expect(tokenizeSearchText('Send an e-mail, NOW!')).toEqual(['send', 'an', 'e', 'mail', 'now']);
  });

  it('splits snake_case, kebab-case, dotted names and camelCase into their words', () => {
    expect(tokenizeSearchText('list_calendar_events')).toEqual(['list', 'calendar', 'event']);
    expect(tokenizeSearchText('get-user.profile')).toEqual(['get', 'user', 'profile']);
    expect(tokenizeSearchText('createCalendarEvent')).toEqual(['create', 'calendar', 'event']);
    expect(tokenizeSearchText('parseHTTPServerResponse2')).toEqual(['parse', 'http', 'server', 'response', '2']);
    expect(tokenizeSearchText('__proto__ constructor')).toEqual(['proto', 'constructor']);
  });

  it('folds English plurals so a query and a description need not agree on number', () => {
    expect(tokenizeSearchText('events queries invoices')).toEqual(['event', 'query', 'invoice']);
    // Words the S-stemmer must leave alone.
    expect(tokenizeSearchText('status class')).toEqual(['status', 'class']);
    expect(tokenizeSearchText('bus gas')).toEqual(['bus', 'gas']);
  });

  it('turns Chinese, Japanese and Korean runs into character bigrams', () => {
    expect(tokenizeSearchText('创建日程')).toEqual(['创建', '建日', '日程']);
    expect(tokenizeSearchText('カレンダー')).toEqual(['カレ', 'レン', 'ンダ', 'ダー']);
    expect(tokenizeSearchText('일정 추가')).toEqual(['일정', '추가']);
    expect(tokenizeSearchText('日')).toEqual(['日']);
  });

  it('separates CJK runs from Latin words written against them', () => {
    expect(tokenizeSearchText('发送email到频道')).toEqual(['发送', 'email', '到频', '频道']);
  });

  it('treats full-width letters as their ASCII forms (NFKC) and keeps accented words whole', () => {
    expect(tokenizeSearchText('ｃａｌｅｎｄａｒ')).toEqual(['calendar']);
    expect(tokenizeSearchText('créerÉvénement Größe')).toEqual(['créer', 'événement', 'größe']);
  });

  it('returns nothing for text without words, and copes with astral characters', () => {
    expect(tokenizeSearchText('  --- !!! ')).toEqual([]);
    expect(tokenizeSearchText('')).toEqual([]);
    expect(tokenizeSearchText('😀 𠀀 ok')).toEqual(['𠀀', 'ok']);
  });
});
