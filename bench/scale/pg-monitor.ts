/**
 * The benchmark's view of PostgreSQL: a throwaway database for the run (so pg_stat_database
 * counts this run only), counters read from it, the WAL its own records took (pg_walinspect,
 * which can tell one database's records from the others'), which server process works for whom,
 * and short probes of what the server can do: commits per second with and without NOTIFY, WAL
 * megabytes per second, WAL per heartbeat row.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface BenchDatabase {
  readonly name: string;
  /** The run's database on the same server. */
  readonly url: string;
  /** The same database through another host and port (the counting proxy). */
  urlVia(port: number): string;
  drop(): Promise<void>;
}

export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `bench_scale_${randomBytes(6).toString('hex')}`;
  await withClient(serverUrl, (client) => client.query(`create database "${name}"`));
  const at = (host: string): string => {
    const url = new URL(serverUrl);
    url.host = host;
    url.pathname = `/${name}`;
    return url.toString();
  };
  const server = new URL(serverUrl);
  return {
    name,
    url: at(server.host),
    urlVia: (port) => at(`127.0.0.1:${port}`),
    drop: () => withClient(serverUrl, (client) => client.query(`drop database if exists "${name}" with (force)`)),
  };
}

async function withClient(url: string, use: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await use(client);
  } finally {
    await client.end();
  }
}

/** pg_stat_database's counters for one database, and where the WAL stood. */
export interface PgSnapshot {
  readonly commits: number;
  readonly rollbacks: number;
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  readonly flushLsn: string;
}

export interface WalUse {
  /** Bytes of WAL records touching this database's relations, plus its transactions' commit records. */
  readonly bytes: number;
  readonly records: number;
  /** Full-page images inside `bytes`. */
  readonly fpiBytes: number;
  /** Every WAL byte the server wrote meanwhile, any database's. */
  readonly serverBytes: number;
}

export type ProcessRole = 'ours' | 'aux' | 'other';

export interface StoreTotals {
  readonly turns: number;
  readonly events: number;
  readonly eventBytes: number;
  readonly databaseBytes: number;
}

export class PgMonitor {
  readonly #client: pg.Client;
  readonly #databaseOid: number;
  /** Transactions this monitor itself committed in the database (each query is one). */
  #queries = 0;

  private constructor(client: pg.Client, databaseOid: number) {
    this.#client = client;
    this.#databaseOid = databaseOid;
  }

  static async connect(url: string): Promise<PgMonitor> {
    const client = new pg.Client({ connectionString: url, application_name: 'bench-scale monitor' });
    await client.connect();
    await client.query('create schema if not exists bench_probe');
    await client.query('create extension if not exists pg_walinspect schema bench_probe');
    const { rows } = await client.query<{ oid: number }>('select oid::int as oid from pg_database where datname = current_database()');
    return new PgMonitor(client, rows[0]!.oid);
  }

  /** This monitor's own commits so far, to subtract from the database's. */
  get ownCommits(): number {
    return this.#queries;
  }

  async #query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    this.#queries += 1;
    return (await this.#client.query<R>(text, values)).rows;
  }

  async snapshot(): Promise<PgSnapshot> {
    const [row] = await this.#query<{ commits: string; rollbacks: string; inserted: string; updated: string; deleted: string; lsn: string }>(
      `select xact_commit as commits, xact_rollback as rollbacks, tup_inserted as inserted, tup_updated as updated, tup_deleted as deleted,
              pg_current_wal_flush_lsn()::text as lsn
         from pg_stat_database where datname = current_database()`,
    );
    return {
      commits: Number(row!.commits),
      rollbacks: Number(row!.rollbacks),
      inserted: Number(row!.inserted),
      updated: Number(row!.updated),
      deleted: Number(row!.deleted),
      flushLsn: row!.lsn,
    };
  }

  /** The WAL this database's work took between two flushed positions. */
  async walBetween(startLsn: string, endLsn: string): Promise<WalUse> {
    const pattern = `% rel 1663/${this.#databaseOid}/%`;
    const [row] = await this.#query<{ bytes: string | null; records: string; fpi: string | null; server: string }>(
      `with r as (select xid, resource_manager, record_length, fpi_length, block_ref from bench_probe.pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)),
            ours as (select distinct xid from r where block_ref like $3 and xid::text <> '0')
       select sum(record_length) as bytes, count(*) as records, sum(fpi_length) as fpi,
              pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn)::bigint as server
         from r
        where block_ref like $3 or (resource_manager = 'Transaction' and xid in (select xid from ours))`,
      [startLsn, endLsn, pattern],
    );
    return { bytes: Number(row!.bytes ?? 0), records: Number(row!.records), fpiBytes: Number(row!.fpi ?? 0), serverBytes: Number(row!.server) };
  }

  /** Who each server process works for: this database ('ours'), another one, or the server itself (walwriter, checkpointer …). */
  async processRoles(): Promise<Map<number, ProcessRole>> {
    const rows = await this.#query<{ pid: number; datname: string | null; mine: boolean; own: boolean }>(
      'select pid, datname, datname = current_database() as mine, pid = pg_backend_pid() as own from pg_stat_activity',
    );
    const roles = new Map<number, ProcessRole>();
    // The monitor's own backend is the benchmark's, not the service's: it counts as another's.
    for (const row of rows) roles.set(row.pid, row.own ? 'other' : row.datname === null ? 'aux' : row.mine ? 'ours' : 'other');
    return roles;
  }

  /** Server processes of this database right now (not counting the monitor), and how many run a query. */
  async connections(): Promise<{ open: number; active: number }> {
    const [row] = await this.#query<{ open: number; active: number }>(
      `select count(*)::int as open, (count(*) filter (where state = 'active'))::int as active
         from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
    );
    return row!;
  }

  async storeTotals(): Promise<StoreTotals> {
    const [row] = await this.#query<{ turns: string; events: string; bytes: string | null; size: string }>(
      `select (select count(*) from public.turns) as turns, count(*) as events, sum(octet_length(body)) as bytes,
              pg_database_size(current_database()) as size
         from public.turn_events`,
    );
    return { turns: Number(row!.turns), events: Number(row!.events), eventBytes: Number(row!.bytes ?? 0), databaseBytes: Number(row!.size) };
  }

  /** Turns the store still holds as running or queued. */
  async liveTurns(): Promise<number> {
    const [row] = await this.#query<{ live: number }>("select count(*)::int as live from public.turns where status in ('running', 'queued')");
    return row!.live;
  }

  async setting(name: string): Promise<string> {
    const [row] = await this.#query<{ value: string }>('select current_setting($1) as value', [name]);
    return row!.value;
  }

  /**
   * WAL per heartbeat row: the service's heartbeat is one UPDATE of `heartbeat_at` on every
   * live turn (an indexed column, so not a HOT update). Rewrites that column on `rows` stored turns
   * three times and returns the mean bytes per row, full-page images included as they come.
   */
  async walPerHeartbeatRow(rows: number): Promise<number> {
    let bytes = 0;
    let updated = 0;
    for (let round = 0; round < 3; round += 1) {
      const before = (await this.snapshot()).flushLsn;
      const result = await this.#query<{ id: string }>(
        `update public.turns set heartbeat_at = $1 where id in (select id from public.turns order by random() limit $2) returning id`,
        [new Date().toISOString(), rows],
      );
      const after = (await this.snapshot()).flushLsn;
      bytes += (await this.walBetween(before, after)).bytes;
      updated += result.length;
    }
    return updated === 0 ? Number.NaN : bytes / updated;
  }

  async close(): Promise<void> {
    await this.#client.end();
  }
}

export interface CommitProbe {
  readonly commitsPerSecond: number;
  readonly connections: number;
}

/**
 * Commits per second `connections` clients reach for `ms`, each committing one small
 * transaction after another: a plain INSERT, or the same with a NOTIFY. PostgreSQL serialises
 * every committing transaction that has sent a NOTIFY (the lock on "database 0" in async.c's
 * PreCommit_Notify is held until the commit is flushed), so the second cannot group-commit.
 */
export async function probeCommits(url: string, options: { readonly notify: boolean; readonly connections: number; readonly ms: number }): Promise<CommitProbe> {
  const clients = await Promise.all(
    Array.from({ length: options.connections }, async () => {
      const client = new pg.Client({ connectionString: url, application_name: 'bench-scale probe' });
      await client.connect();
      return client;
    }),
  );
  try {
    await clients[0]!.query('create table if not exists bench_probe.commits (id bigserial primary key, at timestamptz not null default now(), note text)');
    const statement = options.notify
      ? "with row as (insert into bench_probe.commits (note) values ('n') returning id) select pg_notify('bench_scale_probe', id::text) from row"
      : "insert into bench_probe.commits (note) values ('p')";
    let commits = 0;
    const deadline = performance.now() + options.ms;
    const started = performance.now();
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < deadline) {
          await client.query(statement);
          commits += 1;
        }
      }),
    );
    return { commitsPerSecond: commits / ((performance.now() - started) / 1000), connections: options.connections };
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}

/** WAL megabytes per second that a few clients inserting wide rows in bulk make the server write. */
export async function probeWalThroughput(url: string, options: { readonly connections: number; readonly ms: number }): Promise<number> {
  const clients = await Promise.all(
    Array.from({ length: options.connections }, async () => {
      const client = new pg.Client({ connectionString: url, application_name: 'bench-scale probe' });
      await client.connect();
      return client;
    }),
  );
  try {
    await clients[0]!.query('create table if not exists bench_probe.bulk (id bigint, body text)');
    const lsn = async (): Promise<string> => (await clients[0]!.query<{ lsn: string }>('select pg_current_wal_flush_lsn()::text as lsn')).rows[0]!.lsn;
    const start = await lsn();
    const started = performance.now();
    const deadline = started + options.ms;
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < deadline) await client.query("insert into bench_probe.bulk select g, repeat('x', 1000) from generate_series(1, 2000) g");
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const end = await lsn();
    const { rows } = await clients[0]!.query<{ bytes: string }>('select pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint as bytes', [end, start]);
    await clients[0]!.query('truncate bench_probe.bulk');
    return Number(rows[0]!.bytes) / seconds / 1e6;
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}
