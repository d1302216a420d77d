import { describe, expect, it } from 'vitest';
import { classifyAddress } from '../../src/net/address-policy.js';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade-nat'],
    ['100.100.100.200', 'carrier-grade-nat'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.192', 'reserved'],
    ['198.18.0.1', 'benchmarking'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fec0::1', 'site-local'],
    ['fc00::1', 'unique-local'],
    ['fd00:ec2::254', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2001::1', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    ['::8.8.8.8', 'reserved'],
    ['5f00::1', 'reserved'],
  ])('refuses %s as %s', (address, reason) => {
    const verdict = classifyAddress(address);
    expect(verdict).toMatchObject({ allowed: false, reason });
    if (!verdict.allowed) expect(verdict.explanation).toContain(address);
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback', '127.0.0.1'],
    ['::ffff:7f00:1', 'loopback', '127.0.0.1'],
    ['::ffff:10.1.2.3', 'private', '10.1.2.3'],
    ['::ffff:169.254.169.254', 'link-local', '169.254.169.254'],
    ['::ffff:0:a00:1', 'private', '10.0.0.1'],
    ['64:ff9b::10.0.0.1', 'private', '10.0.0.1'],
    ['64:ff9b::7f00:1', 'loopback', '127.0.0.1'],
    ['2002:c0a8:0101::1', 'private', '192.168.1.1'],
    ['2002:a9fe:a9fe::', 'link-local', '169.254.169.254'],
  ])('sees through %s to the %s address it carries', (address, reason, embedded) => {
    expect(classifyAddress(address)).toMatchObject({ allowed: false, reason, embeddedIpv4: embedded });
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:0808:0808::1'])(
    'allows the public address %s',
    (address) => {
      expect(classifyAddress(address)).toMatchObject({ allowed: true });
    },
  );

  it.each(['0177.0.0.1', '2130706433', '0x7f.1', '127.1', 'localhost', '', '1.2.3.4.5', '[::1', '::ffff:999.0.0.1'])(
    'refuses %j, which is not a canonical IP literal, instead of guessing',
    (text) => {
      expect(classifyAddress(text)).toMatchObject({ allowed: false, reason: 'invalid' });
    },
  );
});
