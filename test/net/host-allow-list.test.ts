import { describe, expect, it } from 'vitest';
import { isHostAllowed } from '../../src/net/host-allow-list.js';

describe('isHostAllowed', () => {
  it('matches a listed name on any port, case-insensitively', () => {
    expect(isHostAllowed(new URL('http://Intranet.Example:8080/x'), ['intranet.example'])).toBe(true);
    expect(isHostAllowed(new URL('https://intranet.example/'), ['INTRANET.EXAMPLE'])).toBe(true);
  });

  it('matches a name:port entry only on that port, counting default ports', () => {
    expect(isHostAllowed(new URL('http://intranet.example/'), ['intranet.example:80'])).toBe(true);
    expect(isHostAllowed(new URL('https://intranet.example/'), ['intranet.example:443'])).toBe(true);
    expect(isHostAllowed(new URL('http://intranet.example:8080/'), ['intranet.example:80'])).toBe(false);
    expect(isHostAllowed(new URL('http://[::1]:8080/'), ['[::1]:8080'])).toBe(true);
  });

  it('never matches by suffix, prefix or wildcard', () => {
    expect(isHostAllowed(new URL('http://evil.intranet.example/'), ['intranet.example'])).toBe(false);
    expect(isHostAllowed(new URL('http://intranet.example.evil.com/'), ['intranet.example'])).toBe(false);
    expect(isHostAllowed(new URL('http://anything.example/'), ['*.example', '*'])).toBe(false);
    expect(isHostAllowed(new URL('http://intranet.example./'), ['intranet.example'])).toBe(false);
  });
});
