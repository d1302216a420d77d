import { chmod, mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import type { HostLookup } from '../../src/net/guarded-lookup.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';

export interface TestRuntime extends Runtime {
  readonly baseUrl: string;
  readonly dataDir: string;
  /** Closes the app (draining turns) and, unless `keepData`, removes the data folder. */
  close(options?: { keepData?: boolean }): Promise<void>;
}

/**
 * The real service, listening on 127.0.0.1 on a free port, with its data in a fresh temp
 * folder (a real SQLite file). `env` overrides the embedded defaults, as the process would.
 */
export async function startTestRuntime(
  options: { env?: Record<string, string>; dataDir?: string; lookup?: HostLookup; newTurnId?: () => string; spanProcessors?: SpanProcessor[] } = {},
): Promise<TestRuntime> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'turn-runtime-test-')));
  // mkdtemp makes it 0700; the sandbox user that runs commands must pass through it to the homes.
  if (options.dataDir === undefined) await chmod(dataDir, 0o711);
  const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, SSE_PING_MS: '15000', ...options.env });
  const runtime = await createRuntime({
    config,
    logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
    ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    ...(options.newTurnId === undefined ? {} : { newTurnId: options.newTurnId }),
    ...(options.spanProcessors === undefined ? {} : { spanProcessors: options.spanProcessors }),
  });
  await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = runtime.app.server.address() as AddressInfo;
  return {
    ...runtime,
    baseUrl: `http://127.0.0.1:${port}`,
    dataDir,
    async close(closeOptions = {}) {
      await runtime.app.close();
      if (closeOptions.keepData !== true) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A JSON answer, loosely typed for assertions. */
export async function readJson(response: Response): Promise<any> {
  return response.json();
}
