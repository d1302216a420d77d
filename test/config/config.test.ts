import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load-config.js';

describe('loadConfig', () => {
  it('runs on its embedded defaults with an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8080, databaseUrl: undefined, toolSearchMode: 'emulated' });
    expect(config.dataDir).toBe(path.resolve('./data'));
    expect(config.limits).toMatchObject({ defaultMaxIterations: 16, parallelToolLimit: 4 });
    expect(config.web.search).toBeUndefined();
    expect(config.heapCompactOnFullGc).toBe(true);
  });

  it('leaves heap compaction to V8 with HEAP_COMPACT_ON_FULL_GC=false, and refuses a value that is not a flag', () => {
    expect(loadConfig({ HEAP_COMPACT_ON_FULL_GC: 'false' }).heapCompactOnFullGc).toBe(false);
    expect(() => loadConfig({ HEAP_COMPACT_ON_FULL_GC: 'sometimes' })).toThrow(/HEAP_COMPACT_ON_FULL_GC:/);
  });

  it('checks malloc\'s free memory every 2 s by default, never with NATIVE_HEAP_TRIM_MS=0, and refuses what is not a number of ms', () => {
    expect(loadConfig({}).nativeHeapTrimMs).toBe(2_000);
    expect(loadConfig({ NATIVE_HEAP_TRIM_MS: '0' }).nativeHeapTrimMs).toBe(0);
    expect(() => loadConfig({ NATIVE_HEAP_TRIM_MS: 'often' })).toThrow(/NATIVE_HEAP_TRIM_MS:/);
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

  it('treats empty variables as unset, except where the service listens and keeps its data', () => {
    expect(loadConfig({ OPENAI_API_KEY: '', SSE_PING_MS: '' })).toMatchObject({ model: { apiKey: undefined }, http: { ssePingMs: 15_000 } });
    for (const name of ['PORT', 'HOST', 'DATA_DIR']) expect(() => loadConfig({ [name]: '' })).toThrow(new RegExp(`${name}: is set but empty`));
  });

  it('reads numbers in decimal digits only', () => {
    expect(loadConfig({ PORT: '18080' }).port).toBe(18_080);
    for (const port of ['0x46A0', '1e3', '80.0', ' 80', '+80', '-1', '0b1', '8080abc']) {
      expect(() => loadConfig({ PORT: port }), port).toThrow(/PORT: /);
    }
    expect(() => loadConfig({ MAX_CONCURRENT_TURNS: '0x10' })).toThrow(/MAX_CONCURRENT_TURNS: must be a whole number in decimal digits/);
  });

  it('arms crash points only in a test process, refuses a lease shorter than pg-boss\'s heartbeat, and the runtime refuses an unknown point', async () => {
    expect(() => loadConfig({ TEST_CRASH_AT: 'workflow.created' })).toThrow(/TEST_CRASH_AT: .*refused unless NODE_ENV=test/);
    expect(loadConfig({ TEST_CRASH_AT: 'workflow.created, workflow.task-settled', NODE_ENV: 'test' }).durable.testCrashAt).toEqual(['workflow.created', 'workflow.task-settled']);
    expect(loadConfig({}).durable).toMatchObject({ testCrashAt: [], leaseSeconds: 15 });
    expect(() => loadConfig({ DURABLE_LEASE_SECONDS: '5' })).toThrow(/DURABLE_LEASE_SECONDS:/);
    const { armCrashPoints } = await import('../../src/durable/crash-points.js');
    expect(() => {
      armCrashPoints(['workflow.nowhere']);
    }).toThrow(/no crash point named workflow.nowhere; there are workflow.created, /);
  });

  it('refuses a request timeout shorter than the headers timeout', () => {
    expect(loadConfig({}).http).toMatchObject({ requestTimeoutMs: 10_000, headersTimeoutMs: 5_000 });
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '2000', HEADERS_TIMEOUT_MS: '3000' })).toThrow(/REQUEST_TIMEOUT_MS: must be at least HEADERS_TIMEOUT_MS/);
  });
});

/** Starts the real process with `env` and resolves with its exit code and stderr. */
async function startProcess(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // A process that starts after all (the bug this guards against) is stopped, not left listening.
  const stop = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(stop);
  return { code, stderr };
}

describe('the process with a wrong setting', () => {
  it('stops with exit code 78 and a message naming the variable', async () => {
    const { code, stderr } = await startProcess({ PORT: 'not-a-port' });
    expect(code).toBe(78);
    expect(stderr).toMatch(/turn-runtime cannot start: invalid configuration:\n\s+- PORT: /);
  }, 30_000);

  it('refuses PORT=0x46A0 and PORT= with exit code 78', async () => {
    for (const port of ['0x46A0', '']) {
      const { code, stderr } = await startProcess({ PORT: port });
      expect(code, port).toBe(78);
      expect(stderr).toMatch(/- PORT: /);
    }
  }, 60_000);

  it('stops with exit code 78 naming DATA_DIR when the data folder cannot be created, not with a stack', async () => {
    for (const dataDir of ['/etc/passwd', '/etc/passwd/data']) {
      const { code, stderr } = await startProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
      expect(code, dataDir).toBe(78);
      expect(stderr).toMatch(/turn-runtime cannot start: invalid configuration:\n\s+- DATA_DIR: cannot create or write the data folder/);
      expect(stderr).not.toMatch(/\n\s+at /);
    }
  }, 60_000);
});

describe('the process and where it listens', () => {
  const start = (env: Record<string, string>, options: { uid?: number } = {}) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
      ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    return new Promise<{ code: number | null; stderr: string }>((resolve) => child.once('exit', (code) => { resolve({ code, stderr }); }));
  };

  it('refuses HOST=0.0.0.0 without API_TOKEN (exit 78), unless ALLOW_UNAUTHENTICATED=true', () => {
    expect(() => loadConfig({ HOST: '0.0.0.0' })).toThrow(/HOST: 0\.0\.0\.0 listens beyond this machine, and API_TOKEN is not set/);
    expect(() => loadConfig({ HOST: '::' })).toThrow(ConfigError);
    expect(loadConfig({ HOST: '0.0.0.0', ALLOW_UNAUTHENTICATED: 'true' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0', API_TOKEN: 'a-token-of-sixteen-chars' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '127.0.0.2' }).host).toBe('127.0.0.2');
    expect(loadConfig({ HOST: 'localhost' }).host).toBe('localhost');
  });

  it('stops with exit 78 naming HOST when it would listen openly without a token', async () => {
    const { code, stderr } = await start({ HOST: '0.0.0.0', PORT: '0' });
    expect(code).toBe(78);
    expect(stderr).toMatch(/- HOST: 0\.0\.0\.0 listens beyond this machine, and API_TOKEN is not set; set API_TOKEN, or ALLOW_UNAUTHENTICATED=true/);
  }, 30_000);

  it('stops with exit 78 naming DATA_DIR when the data folder is not writable', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'unwritable-'));
    try {
      await chmod(parent, 0o755);
      const dataDir = path.join(parent, 'data');
      await mkdir(dataDir, { mode: 0o700 });
      // A user that is not the folder's owner, as in a container whose volume belongs to root.
      const { code, stderr } = await start({ DATA_DIR: dataDir, PORT: '0', HOME: parent }, { uid: 65534 });
      expect(code).toBe(78);
      expect(stderr).toContain(`- DATA_DIR: cannot create or write the data folder: ${dataDir} cannot be created or written by this process (uid 65534) (EACCES)`);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  }, 30_000);
});
