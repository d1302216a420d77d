import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { loadMcpConfig, McpConfigError } from '../../../src/tools/mcp/load-mcp-config.js';

let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'mcp-config-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function configFile(name: string, content: string): Promise<string> {
  const file = path.join(folder, name);
  await writeFile(file, content);
  return file;
}

async function loadError(file: string): Promise<McpConfigError> {
  const error: unknown = await loadMcpConfig(file).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(McpConfigError);
  return error as McpConfigError;
}

describe('loadMcpConfig', () => {
  it('reads stdio and http servers, with defaults, and resolves a relative cwd against the file', async () => {
    const file = await configFile(
      'good.json',
      JSON.stringify({
        servers: {
          files: { transport: 'stdio', command: 'node', args: ['server.js'], env: { TOKEN: 'x' }, cwd: 'servers/files' },
          'git-hub_2': { transport: 'http', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer t' } },
          bare: { transport: 'stdio', command: 'mcp-bare' },
        },
      }),
    );
    const config = await loadMcpConfig(file);
    expect([...config.servers.keys()]).toEqual(['files', 'git-hub_2', 'bare']);
    expect(config.servers.get('files')).toEqual({
      transport: 'stdio',
      command: 'node',
      args: ['server.js'],
      env: { TOKEN: 'x' },
      cwd: path.join(folder, 'servers', 'files'),
    });
    expect(config.servers.get('git-hub_2')).toEqual({ transport: 'http', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer t' } });
    expect(config.servers.get('bare')).toEqual({ transport: 'stdio', command: 'mcp-bare', args: [], env: {} });
  });

  it('accepts a file with no servers', async () => {
    const config = await loadMcpConfig(await configFile('empty.json', '{"servers":{}}'));
    expect(config.servers.size).toBe(0);
  });

  it('is a ConfigError naming the file when the file does not exist', async () => {
    const missing = path.join(folder, 'nope.json');
    const error = await loadError(missing);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(`MCP_CONFIG_FILE ${missing}: the file does not exist`);
  });

  it('names the file when it is not JSON', async () => {
    const file = await configFile('broken.json', '{"servers": {');
    expect((await loadError(file)).message).toMatch(new RegExp(`MCP_CONFIG_FILE ${file.replaceAll('/', '\\/')}: not valid JSON`));
  });

  it('refuses a server name that is not a valid provider namespace, naming it', async () => {
    const tooLong = 'x'.repeat(65);
    const file = await configFile(
      'names.json',
      JSON.stringify({ servers: { 'bad name': { transport: 'stdio', command: 'a' }, 'dot.ted': { transport: 'stdio', command: 'a' }, [tooLong]: { transport: 'stdio', command: 'a' } } }),
    );
    const { message } = await loadError(file);
    expect(message).toContain('servers["bad name"]: a server name must match ^[A-Za-z0-9_-]{1,64}$');
    expect(message).toContain('servers["dot.ted"]: a server name must match');
    expect(message).toContain(`servers.${tooLong}: a server name must match`);
  });

  it('refuses a server named __proto__ instead of losing it', async () => {
    const file = await configFile('proto.json', '{"servers":{"__proto__":{"transport":"stdio","command":"evil"}}}');
    expect((await loadError(file)).message).toContain('servers.__proto__: not a usable server name');
  });

  it('names the bad path inside a server: transport, url, command, unknown keys, types', async () => {
    const file = await configFile(
      'fields.json',
      JSON.stringify({
        servers: {
          ftp: { transport: 'ftp', url: 'ftp://x' },
          plain: { transport: 'http', url: 'ftp://example.com' },
          nocmd: { transport: 'stdio' },
          extra: { transport: 'stdio', command: 'a', shell: true },
          args: { transport: 'stdio', command: 'a', args: 'one two' },
          headers: { transport: 'http', url: 'https://example.com', headers: { 'x-n': 1 } },
        },
      }),
    );
    const { message } = await loadError(file);
    expect(message).toContain('servers.ftp.transport:');
    expect(message).toContain('servers.plain.url: must be an http:// or https:// URL');
    expect(message).toContain('servers.nocmd.command: expected string');
    expect(message).toContain('servers.extra: Unrecognized key: "shell"');
    expect(message).toContain('servers.args.args: expected array');
    expect(message).toContain('servers.headers.headers["x-n"]: expected string');
  });

  it('refuses a file without a servers object, or with other top-level keys', async () => {
    expect((await loadError(await configFile('list.json', '[]'))).message).toContain('(root): expected object');
    expect((await loadError(await configFile('nokey.json', '{}'))).message).toContain('servers: expected record');
    expect((await loadError(await configFile('typo.json', '{"servers":{},"server":{}}'))).message).toContain('Unrecognized key: "server"');
  });
});
