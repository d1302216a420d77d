import { expect } from 'vitest';
import { createPostgresSchema, type PostgresSchema } from './postgres-schema.js';
import { startServiceProcess, type ServiceProcess } from './service-process.js';
import { waitUntil } from './wait-until.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type WebhookReceiver } from './webhook-receiver.js';

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

/**
 * What one crash-test file starts, to stop it all in `close`: service processes (by their PIDs,
 * with their data folders), webhook receivers, and the stores' PostgreSQL schemas.
 */
export function crashRig(): {
  readonly stores: CrashStore[];
  /** A webhook receiver, with the environment that lets a service sign and send to it. */
  receiver(): Promise<{ readonly receiver: WebhookReceiver; readonly env: Record<string, string> }>;
  service(options: Parameters<typeof startServiceProcess>[0]): Promise<ServiceProcess>;
  close(): Promise<void>;
} {
  const { stores, dropSchemas } = crashStores();
  const processes: ServiceProcess[] = [];
  const receivers: WebhookReceiver[] = [];
  return {
    stores,
    async receiver() {
      const receiver = await startWebhookReceiver();
      receivers.push(receiver);
      return { receiver, env: { WEBHOOK_SECRET: TEST_WEBHOOK_SECRET, WEB_FETCH_ALLOW_HOSTS: receiver.host } };
    },
    async service(options) {
      const service = await startServiceProcess(options);
      processes.push(service);
      return service;
    },
    async close() {
      for (const service of processes) await service.stop();
      await Promise.all(receivers.map((receiver) => receiver.close()));
      await dropSchemas();
    },
  };
}

/**
 * The one webhook about `id`: waits for it, then for longer than a turn-webhook sweep (5 s), and
 * checks that no second delivery came; answers its body.
 */
export async function onlyWebhookAbout(receiver: WebhookReceiver, id: string, timeoutMs = 30_000): Promise<unknown> {
  const about = () => receiver.received.filter((delivery) => (JSON.parse(delivery.body) as { id: string }).id === id);
  await waitUntil(`the webhook about ${id}`, () => (about().length > 0 ? true : undefined), timeoutMs);
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  expect(about()).toHaveLength(1);
  return JSON.parse(about()[0]?.body ?? '{}') as unknown;
}

/** The environment that arms a crash point in a service process (TEST_CRASH_AT, allowed with NODE_ENV=test). */
export const crashAt = (point: string): Record<string, string> => ({ NODE_ENV: 'test', TEST_CRASH_AT: point });

/** Waits for the process to reach its armed crash point, and checks it died there by SIGKILL. */
export async function diedAt(service: ServiceProcess, point: string): Promise<void> {
  await waitUntil(`the process to die at ${point}`, () => (service.child.exitCode !== null || service.child.signalCode !== null ? true : undefined), 30_000);
  expect(service.child.signalCode).toBe('SIGKILL');
}

/** POSTs JSON to a process that may die before it answers (the answer is not needed). */
export function postAndForget(url: string, body: unknown, headers: Record<string, string> = {}): void {
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...headers }, body: JSON.stringify(body) }).catch(() => undefined);
}
