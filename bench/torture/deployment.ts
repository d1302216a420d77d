import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { createPostgresSchema, type PostgresSchema } from '../../test/support/postgres-schema.js';
import { startTortureService, type TortureService } from './service-process.js';

export type StoreKind = 'sqlite' | 'postgres';

export type Row = Readonly<Record<string, unknown>>;

/** Read access to the store the service writes, for the checks (never written to). */
export interface StoreReader {
  readonly dialect: StoreKind;
  all(query: string): Promise<Row[]>;
  /** Runs `work`'s reads in one read-only transaction: one consistent view of the store. */
  consistently<T>(work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The lease and supervise settings the torture runs the service with (short, so take-overs happen within a round or two). */
export const TORTURE_SERVICE_SETTINGS = {
  DURABLE_LEASE_SECONDS: '10',
  DURABLE_SUPERVISE_SECONDS: '2',
  WORKFLOW_TASK_LEASE_SECONDS: '10',
} as const;

/**
 * The service processes of one store: on SQLite one process on its data folder; on PostgreSQL
 * two replicas on one fresh schema, sharing one data folder (the agent homes). Each process
 * leads a process group of its own; a restart gets a new INSTANCE_ID (on SQLite, as the round
 * says, sometimes the killed one's, which takes back its own work at start).
 */
export interface Deployment {
  readonly store: StoreKind;
  readonly slots: number;
  readonly runDir: string;
  readonly dataDir: string;
  /** PostgreSQL: the schema pg-boss keeps its tables in. */
  readonly pgBossSchema: string | undefined;
  baseUrl(slot: number): string | undefined;
  liveInstanceIds(): ReadonlySet<string>;
  kill(slot: number): Promise<string>;
  restart(slot: number, options: { readonly sameInstanceId: boolean }): Promise<string>;
  reader(): Promise<StoreReader>;
  /** Stops every process (SIGTERM, then SIGKILL), drops the schema, removes the folders unless `keep`. */
  close(options: { readonly keep: boolean }): Promise<void>;
}

export async function startDeployment(options: { readonly store: StoreKind; readonly env: Readonly<Record<string, string>>; readonly entry?: string }): Promise<Deployment> {
  const runDir = await mkdtemp(path.join(tmpdir(), `turn-runtime-torture-${options.store}-`));
  const dataDir = path.join(runDir, 'data');
  const logDir = path.join(runDir, 'logs');
  await mkdir(dataDir);
  await mkdir(logDir);
  // Commands run as the sandbox's unprivileged user, who must pass through to the agent homes.
  await chmod(runDir, 0o711);
  await chmod(dataDir, 0o711);
  const schema: PostgresSchema | undefined = options.store === 'postgres' ? await createPostgresSchema() : undefined;
  const slots = options.store === 'postgres' ? 2 : 1;
  const env: Record<string, string> = {
    LOG_LEVEL: 'warn',
    DURABLE_LEASE_SECONDS: TORTURE_SERVICE_SETTINGS.DURABLE_LEASE_SECONDS,
    WORKFLOW_TASK_LEASE_SECONDS: TORTURE_SERVICE_SETTINGS.WORKFLOW_TASK_LEASE_SECONDS,
    ...(schema === undefined ? {} : { DATABASE_URL: schema.url, DURABLE_SUPERVISE_SECONDS: TORTURE_SERVICE_SETTINGS.DURABLE_SUPERVISE_SECONDS }),
    ...options.env,
  };
  const processes: (TortureService | undefined)[] = Array.from({ length: slots }, () => undefined);
  const generations = Array.from({ length: slots }, () => 0);
  const slotName = (slot: number) => (options.store === 'postgres' ? `pg-${String.fromCharCode(97 + slot)}` : 'sqlite');

  const launch = async (slot: number, instanceId: string): Promise<void> => {
    const start = () => startTortureService({ instanceId, dataDir, env, logFile: path.join(logDir, `${instanceId}.log`), ...(options.entry === undefined ? {} : { entry: options.entry }) });
    // Opening the store migrates it; no other run may drop a schema meanwhile (see postgres-schema.ts).
    processes[slot] = schema === undefined ? await start() : await schema.whileSchemasAreStable(start);
  };
  const nextInstanceId = (slot: number) => {
    generations[slot] = (generations[slot] ?? 0) + 1;
    return `${slotName(slot)}-${generations[slot] ?? 0}`;
  };

  try {
    // One at a time: the first migrates the store, the second finds it migrated.
    for (let slot = 0; slot < slots; slot += 1) await launch(slot, nextInstanceId(slot));
  } catch (error) {
    await Promise.all(processes.map((service) => (service === undefined ? Promise.resolve() : service.kill())));
    await schema?.drop();
    await rm(runDir, { recursive: true, force: true });
    throw error;
  }

  return {
    store: options.store,
    slots,
    runDir,
    dataDir,
    pgBossSchema: schema === undefined ? undefined : `${schema.name}_pgboss_v12`,
    baseUrl: (slot) => {
      const service = processes[slot];
      return service === undefined || service.exited() ? undefined : service.baseUrl;
    },
    liveInstanceIds: () => new Set(processes.flatMap((service) => (service === undefined || service.exited() ? [] : [service.instanceId]))),
    async kill(slot) {
      const service = processes[slot];
      if (service === undefined) throw new Error(`no process in slot ${slot}`);
      await service.kill();
      return service.instanceId;
    },
    async restart(slot, { sameInstanceId }) {
      const previous = processes[slot];
      if (previous !== undefined && !previous.exited()) throw new Error(`slot ${slot} still runs ${previous.instanceId}`);
      const instanceId = sameInstanceId && previous !== undefined && schema === undefined ? previous.instanceId : nextInstanceId(slot);
      await launch(slot, instanceId);
      return instanceId;
    },
    async reader() {
      if (schema === undefined) return sqliteReader(path.join(dataDir, 'turns.sqlite'));
      const client = new pg.Client({ connectionString: schema.url });
      await client.connect();
      return {
        dialect: 'postgres',
        all: async (query) => (await client.query<Row>(query)).rows,
        consistently: async (work) => {
          await client.query('begin transaction isolation level repeatable read read only');
          try {
            return await work();
          } finally {
            await client.query('commit');
          }
        },
        close: () => client.end(),
      };
    },
    async close({ keep }) {
      await Promise.all(processes.map((service) => (service === undefined ? Promise.resolve() : service.stop())));
      if (schema !== undefined && !keep) await schema.drop();
      if (!keep) await rm(runDir, { recursive: true, force: true });
    },
  };
}

function sqliteReader(file: string): StoreReader {
  const database = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  database.pragma('busy_timeout = 5000');
  return {
    dialect: 'sqlite',
    all: (query) => Promise.resolve(database.prepare(query).all() as Row[]),
    // A deferred transaction in WAL mode reads one snapshot from its first read to its end.
    consistently: async (work) => {
      database.exec('begin');
      try {
        return await work();
      } finally {
        database.exec('commit');
      }
    },
    close: () => {
      database.close();
      return Promise.resolve();
    },
  };
}
