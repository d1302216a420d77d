import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load-config.js';

describe('sandbox configuration', () => {
  it('defaults: commands as nobody when root, 2 GiB per command tree, 1 GiB per home', () => {
    const config = loadConfig({});
    expect(config.sandbox).toMatchObject({ uid: undefined, gid: undefined, memoryMaxBytes: 2 * 1024 ** 3, homeMaxBytes: 1024 ** 3 });
  });

  it('takes SANDBOX_UID, SANDBOX_GID, COMMAND_MEMORY_MAX_BYTES and AGENT_HOME_MAX_BYTES', () => {
    const config = loadConfig({ SANDBOX_UID: '10001', SANDBOX_GID: '10002', COMMAND_MEMORY_MAX_BYTES: '536870912', AGENT_HOME_MAX_BYTES: '10485760' });
    expect(config.sandbox).toMatchObject({ uid: 10001, gid: 10002, memoryMaxBytes: 536_870_912, homeMaxBytes: 10_485_760 });
  });

  it.each([
    ['SANDBOX_UID', '0'],
    ['SANDBOX_GID', '0'],
    ['SANDBOX_UID', 'nobody'],
    ['COMMAND_MEMORY_MAX_BYTES', '1000'],
    ['AGENT_HOME_MAX_BYTES', '-1'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}:`));
  });
});
