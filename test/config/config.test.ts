import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';

describe('loadConfig', () => {
  it('runs on its embedded defaults with an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8080, databaseUrl: undefined, toolSearchMode: 'emulated' });
    expect(config.dataDir).toBe(path.resolve('./data'));
    expect(config.limits).toMatchObject({ defaultMaxIterations: 16, parallelToolLimit: 4 });
    expect(config.web.search).toBeUndefined();
  });

  it('names every wrong variable and what is wrong with it', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', PARALLEL_TOOL_LIMIT: '0', UNSAFE_COMMANDS_WITHOUT_SANDBOX: 'maybe' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['PORT', 'DATABASE_URL', 'PARALLEL_TOOL_LIMIT', 'UNSAFE_COMMANDS_WITHOUT_SANDBOX']) expect(message).toContain(`${name}:`);
  });

  it('requires the settings a chosen search provider needs', () => {
    expect(() => loadConfig({ WEB_SEARCH_PROVIDER: 'brave' })).toThrow(/BRAVE_API_KEY: required/);
    expect(loadConfig({ WEB_SEARCH_PROVIDER: 'tavily', TAVILY_API_KEY: 'tvly-x' }).web.search).toMatchObject({ provider: 'tavily' });
  });

  it('refuses limits whose defaults exceed their maximums', () => {
    expect(() => loadConfig({ DEFAULT_MAX_ITERATIONS: '50', MAX_ITERATIONS_LIMIT: '10' })).toThrow(/MAX_ITERATIONS_LIMIT/);
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ OPENAI_API_KEY: '', PORT: '' }).port).toBe(8080);
  });
});

describe('the process with a wrong setting', () => {
  it('stops with exit code 78 and a message naming the variable', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { PATH: process.env['PATH'] ?? '', PORT: 'not-a-port' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(78);
    expect(stderr).toMatch(/turn-runtime cannot start: invalid configuration:\n\s+- PORT: /);
  }, 30_000);
});
