import { describe, expect, it } from 'vitest';
import { assignProviderToolNames } from '../../../src/tools/mcp/assign-provider-tool-names.js';

const SAFE = /^[A-Za-z0-9_-]{1,64}$/;

describe('assignProviderToolNames', () => {
  it('keeps names providers accept', () => {
    expect([...assignProviderToolNames(['lookup', 'delete-item', 'A_1']).entries()]).toEqual([
      ['lookup', 'lookup'],
      ['delete-item', 'delete-item'],
      ['A_1', 'A_1'],
    ]);
  });

  it('replaces characters providers reject', () => {
    const names = assignProviderToolNames(['get.user', 'files/read', 'résumé', 'a b']);
    expect(names.get('get.user')).toBe('get_user');
    expect(names.get('files/read')).toBe('files_read');
    expect(names.get('résumé')).toBe('r_sum_');
    expect(names.get('a b')).toBe('a_b');
  });

  it('never displaces a valid name: the renamed tool gets a hash instead', () => {
    const names = assignProviderToolNames(['get.user', 'get_user']);
    expect(names.get('get_user')).toBe('get_user');
    expect(names.get('get.user')).toMatch(/^get_user_[0-9a-f]{8}$/);
  });

  it('keeps two renamed tools apart when they sanitize to the same name', () => {
    const names = assignProviderToolNames(['a.b', 'a/b', 'a b']);
    const assigned = [...names.values()];
    expect(new Set(assigned).size).toBe(3);
    for (const name of assigned) expect(name).toMatch(SAFE);
  });

  it('shortens names over 64 characters with a hash, keeping them distinct', () => {
    const long = 'x'.repeat(80);
    const names = assignProviderToolNames([long, `${long}y`, '']);
    const first = names.get(long) ?? '';
    const second = names.get(`${long}y`) ?? '';
    expect(first).toMatch(SAFE);
    expect(second).toMatch(SAFE);
    expect(first).toHaveLength(64);
    expect(first).not.toBe(second);
    expect(names.get('')).toMatch(SAFE);
  });

  it('gives the same names for the same listing, so tools keep their names across relistings', () => {
    const listing = ['get.user', 'get_user', 'z'.repeat(70), '__proto__'];
    expect([...assignProviderToolNames(listing)]).toEqual([...assignProviderToolNames(listing)]);
    expect(assignProviderToolNames(listing).get('__proto__')).toBe('__proto__');
  });
});
