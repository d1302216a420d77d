import { readJson } from '../support/test-runtime.js';

/** The scripted task model: every task submits `value` (placeholders filled), after `delayMs`. */
export const submitting = (value: string, delayMs = 0) => [{ ...(delayMs > 0 ? { delayMs } : {}), calls: [{ name: 'submit_result', arguments: { result: { value } } }] }];

export async function postWorkflow(baseUrl: string, body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}/workflows`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: { id: 'wf-agent' }, title: 'Test run', ...body }) });
  return { status: response.status, body: await readJson(response) };
}

export async function waitForRun(baseUrl: string, id: string, until: (run: any) => boolean = (run) => run.status !== 'running', timeoutMs = 60_000): Promise<any> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const run = await readJson(await fetch(`${baseUrl}/workflows/${id}`));
    if (until(run)) return run;
    if (performance.now() > deadline) throw new Error(`run ${id} did not get there: ${JSON.stringify(run)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function runEvents(baseUrl: string, id: string): Promise<any[]> {
  const body = (await readJson(await fetch(`${baseUrl}/workflows/${id}/events`, { headers: { accept: 'application/json' } }))) as { events: any[] };
  return body.events;
}

/** The most task turns that ran at the same time, from their task.started / task.completed|failed events. */
export function peakOverlap(events: readonly any[]): number {
  const marks: [number, number][] = [];
  for (const event of events) {
    if (event.type === 'task.started') marks.push([Date.parse(event.at), 1]);
    if (event.type === 'task.completed' || (event.type === 'task.failed' && event.attempt > 0)) marks.push([Date.parse(event.at), -1]);
  }
  marks.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, delta] of marks) {
    now += delta;
    peak = Math.max(peak, now);
  }
  return peak;
}

export const FAN_OUT_SCRIPT = `
const parts = await Promise.all(args.items.map((item) => agent('find ' + item, { label: item })));
const first = await agent('first pass over ' + parts.join('|'), { label: 'tail1' });
const second = await agent('second pass after ' + first, { label: 'tail2' });
return { parts, first, second };`;
