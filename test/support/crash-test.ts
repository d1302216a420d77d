import { expect } from 'vitest';
import { createPostgresSchema, type PostgresSchema } from './postgres-schema.js';
import type { ServiceProcess } from './service-process.js';
import { waitUntil } from './wait-until.js';

/** A store a crash test runs on: its name, and the environment for a service on it (a fresh PostgreSQL schema per call). */
export type CrashStore = [name: string, env: () => Promise<Record<string, string>>];

/**
 * The two stores crash tests run on: SQLite (the service's own file, kept across the restart)
 * and PostgreSQL (a new schema for each test, with the lease check every second). `dropSchemas`
 * removes the schemas made so far.
 */
export function crashStores(): { readonly stores: CrashStore[]; readonly dropSchemas: () => Promise<void> } {
  const schemas: PostgresSchema[] = [];
  return {
    stores: [
      ['SQLite', () => Promise.resolve({})],
      [
        'PostgreSQL',
        async () => {
          const schema = await createPostgresSchema();
          schemas.push(schema);
          return { DATABASE_URL: schema.url, DURABLE_SUPERVISE_SECONDS: '1' };
        },
      ],
    ],
    dropSchemas: async () => {
      await Promise.all(schemas.splice(0).map((schema) => schema.drop()));
    },
  };
}

/** The environment that arms a crash point in a service process (TEST_CRASH_AT, allowed with NODE_ENV=test). */
export const crashAt = (point: string): Record<string, string> => ({ NODE_ENV: 'test', TEST_CRASH_AT: point });

/** Waits for the process to reach its armed crash point, and checks it died there by SIGKILL. */
export async function diedAt(service: ServiceProcess, point: string): Promise<void> {
  await waitUntil(`the process to die at ${point}`, () => (service.child.exitCode !== null || service.child.signalCode !== null ? true : undefined), 30_000);
  expect(service.child.signalCode).toBe('SIGKILL');
}

/** POSTs JSON to a process that may die before it answers (the answer is not needed). */
export function postAndForget(url: string, body: unknown): void {
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) }).catch(() => undefined);
}
