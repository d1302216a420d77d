import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresSchema, TEST_POSTGRES_URL, type PostgresSchema } from '../support/postgres-schema.js';
import { startTestRuntime } from '../support/test-runtime.js';
import { postWorkflow, runEvents, submitting, waitForRun } from './workflow-kit.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** The real service as its own process, ready to take requests. */
async function startService(env: Record<string, string>): Promise<{ child: ChildProcess; baseUrl: string; exited: Promise<unknown> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { PATH: process.env['PATH'] ?? '', PORT: String(port), LOG_LEVEL: 'silent', ...env },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error('the service did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, baseUrl, exited };
}

async function waitForEvents(baseUrl: string, id: string, enough: (events: any[]) => boolean): Promise<any[]> {
  for (;;) {
    const events = await runEvents(baseUrl, id);
    if (enough(events)) return events;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const count = (events: readonly any[], type: string, taskId: string) => events.filter((event) => event.type === type && event.taskId === taskId).length;
const SCRIPT = "const parts = await Promise.all(args.items.map((item) => agent('work on ' + item, { label: 'work' }))); return parts;";

describe('a workflow outlives its service process', () => {
  const folders: string[] = [];
  const children: ChildProcess[] = [];
  const schemas: PostgresSchema[] = [];
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
    await Promise.all(schemas.map((schema) => schema.drop()));
  });

  it('completes after kill -9 and a restart, and no task whose success was stored runs again', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'workflow-restart-'));
    folders.push(dataDir);
    const env = { DATA_DIR: dataDir, INSTANCE_ID: 'wf-restart' };
    const service = await startService(env);
    children.push(service.child);
    const items = ['1', '2', '3', '4', '5', '6', '7', '8'];
    const started = await postWorkflow(service.baseUrl, { script: SCRIPT, args: { items }, concurrency: 2, model: { tasks: { work: submitting('done {{prompt}}', 700) } } });
    expect(started.status).toBe(201);
    const before = await waitForEvents(service.baseUrl, started.body.id, (events) => events.filter((event) => event.type === 'task.completed').length >= 3);
    service.child.kill('SIGKILL');
    await service.exited;
    const storedSuccesses = before.filter((event) => event.type === 'task.completed').map((event) => String(event.taskId));

    const runtime = await startTestRuntime({ dataDir, env: { INSTANCE_ID: 'wf-restart' } });
    try {
      const run = await waitForRun(runtime.baseUrl, started.body.id);
      expect(run.status).toBe('completed');
      expect(run.result).toEqual(items.map((item) => `done work on ${item}`));
      const events = await runEvents(runtime.baseUrl, run.id);
      for (const taskId of storedSuccesses) expect(count(events, 'task.started', taskId), taskId).toBe(1);
      for (let seq = 1; seq <= items.length; seq += 1) expect(count(events, 'task.completed', `${run.id}.${seq}`)).toBe(1);
      expect(events.filter((event) => event.type === 'workflow.completed')).toHaveLength(1);
    } finally {
      await runtime.close({ keepData: true });
    }
  }, 90_000);

  it('runs tasks on two service processes sharing PostgreSQL, and killing one mid-run still completes the run exactly once', async () => {
    const schema = await createPostgresSchema();
    schemas.push(schema);
    const dataDir = await mkdtemp(path.join(tmpdir(), 'workflow-replicas-'));
    folders.push(dataDir);
    const shared = { DATABASE_URL: schema.url, WORKFLOW_TASK_SLOTS: '3', WORKFLOW_TASK_LEASE_SECONDS: '4', DURABLE_SUPERVISE_SECONDS: '1' };
    const first = await schema.whileSchemasAreStable(() => startService({ ...shared, DATA_DIR: path.join(dataDir, 'a'), INSTANCE_ID: 'replica-a' }));
    children.push(first.child);
    const second = await schema.whileSchemasAreStable(() => startService({ ...shared, DATA_DIR: path.join(dataDir, 'b'), INSTANCE_ID: 'replica-b' }));
    children.push(second.child);
    const items = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'];
    const started = await postWorkflow(first.baseUrl, { script: SCRIPT, args: { items }, concurrency: 6, model: { tasks: { work: submitting('done {{prompt}}', 1_500) } } });
    expect(started.status).toBe(201);

    const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    const owners = async (): Promise<Set<string>> => {
      const { rows } = await client.query<{ owner: string }>(`select distinct owner from "${schema.name}".workflow_tasks where run_id = $1 and owner is not null`, [started.body.id]);
      return new Set(rows.map((row) => row.owner));
    };
    try {
      for (;;) {
        if ((await owners()).size === 2) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      second.child.kill('SIGKILL');
      await second.exited;
      const run = await waitForRun(first.baseUrl, started.body.id, undefined, 90_000);
      expect(run.status).toBe('completed');
      expect(run.result).toEqual(items.map((item) => `done work on ${item}`));
      const events = await runEvents(first.baseUrl, run.id);
      for (let seq = 1; seq <= items.length; seq += 1) expect(count(events, 'task.completed', `${run.id}.${seq}`)).toBe(1);
      expect(events.filter((event) => event.type === 'workflow.completed')).toHaveLength(1);
    } finally {
      await client.end();
      first.child.kill('SIGTERM');
      await first.exited;
    }
  }, 120_000);
});
