import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config/load-config.js';
import { createRuntime } from '../src/runtime.js';

export const OPENAPI_PATH = path.resolve(import.meta.dirname, '../openapi/openapi.json');

/** The OpenAPI document the route schemas generate, as the committed file is written. */
export async function renderOpenApiDocument(): Promise<string> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-openapi-'));
  try {
    const runtime = await createRuntime({ config: loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), logger: pino({ level: 'silent' }) });
    try {
      await runtime.app.ready();
      return `${JSON.stringify(runtime.app.swagger(), null, 2)}\n`;
    } finally {
      await runtime.app.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
