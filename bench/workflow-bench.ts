/**
 * Issue #9's benchmark: a workflow of 200 trivial tasks (the scripted model submits at once)
 * against the compiled service in its own process. Prints runs/s and tasks/s, the service's
 * CPU per task turn next to its CPU per plain scripted turn, and the time from the last task
 * result to the run's stored completion (both read from the run's stored events).
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { processCpuMs, runConcurrently, spawnService, waitForHealth } from './bench-support.js';

const TASKS = Number(process.env['BENCH_WORKFLOW_TASKS'] ?? 200);
const RUNS = Number(process.env['BENCH_WORKFLOW_RUNS'] ?? 3);
const PLAIN_TURNS = 200;

interface StoredEvent {
  readonly type: string;
  readonly at: string;
}

export async function runWorkflowBench(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-workflow-bench-'));
  const { service, baseUrl } = await spawnService({ dataDir, env: { WORKFLOW_TASKS_PER_AGENT: '32', WORKFLOW_TASK_SLOTS: '32' } });

  try {
    await waitForHealth(baseUrl);
    const plainBody = JSON.stringify({ agent: { id: 'plain' }, input: 'hi', model: { script: [{ text: 'hello' }] } });
    const plainTurn = async (): Promise<void> => {
      const response = await fetch(`${baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: plainBody });
      await response.text();
    };
    await runConcurrently(20, 4, plainTurn);
    const plainCpu0 = await processCpuMs(service.pid ?? 0);
    await runConcurrently(PLAIN_TURNS, 8, plainTurn);
    const plainCpu = ((await processCpuMs(service.pid ?? 0)) - plainCpu0) / PLAIN_TURNS;

    const workflowBody = JSON.stringify({
      agent: { id: 'bench-workflow' },
      title: 'Bench',
      script: 'return Promise.all(args.items.map((item) => agent("echo " + item, { label: "t" })));',
      args: { items: Array.from({ length: TASKS }, (_unused, index) => index) },
      concurrency: 32,
      maxAgentCalls: 1024,
      model: { tasks: { t: [{ calls: [{ name: 'submit_result', arguments: { result: { value: '{{prompt}}' } } }] }] } },
    });
    const finishLags: number[] = [];
    const cpu0 = await processCpuMs(service.pid ?? 0);
    const start = performance.now();
    for (let run = 0; run < RUNS; run += 1) {
      const created = (await (await fetch(`${baseUrl}/workflows`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: workflowBody })).json()) as { id: string };
      for (;;) {
        const record = (await (await fetch(`${baseUrl}/workflows/${created.id}`)).json()) as { status: string };
        if (record.status !== 'running') {
          if (record.status !== 'completed') throw new Error(`a benchmark workflow ended ${record.status}`);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const { events } = (await (await fetch(`${baseUrl}/workflows/${created.id}/events`, { headers: { accept: 'application/json' } })).json()) as { events: StoredEvent[] };
      const lastTask = events.filter((event) => event.type === 'task.completed').at(-1);
      const completed = events.find((event) => event.type === 'workflow.completed');
      if (lastTask !== undefined && completed !== undefined) finishLags.push(Date.parse(completed.at) - Date.parse(lastTask.at));
    }
    const seconds = (performance.now() - start) / 1000;
    const taskCpu = ((await processCpuMs(service.pid ?? 0)) - cpu0) / (RUNS * TASKS);
    console.log(`\nworkflows: ${RUNS} runs of ${TASKS} trivial tasks (concurrency 32, scripted model), SQLite`);
    console.log(`runs/s ${(RUNS / seconds).toFixed(2)} | tasks/s ${((RUNS * TASKS) / seconds).toFixed(1)} | service CPU ms per task turn ${taskCpu.toFixed(2)} (engine, replays, store included) | per plain turn ${plainCpu.toFixed(2)}`);
    console.log(`last task result → stored completion: ${finishLags.map((lag) => `${lag} ms`).join(', ')}`);
  } finally {
    service.kill('SIGTERM');
    await once(service, 'exit');
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) await runWorkflowBench();
