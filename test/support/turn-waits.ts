/** Polls `GET /turns/:id` until the turn has `status`; fails after `timeoutMs` (ample for a loaded machine). */
export async function waitForTurnStatus(runtime: { baseUrl: string; token?: string }, turnId: string, status: string, timeoutMs = 15_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${runtime.baseUrl}/turns/${turnId}`, { headers: authHeaders(runtime) });
    const record = (await response.json()) as Record<string, unknown>;
    if (record['status'] === status) return record;
    if (Date.now() > deadline) throw new Error(`turn ${turnId} is ${String(record['status'])}, not ${status}, after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs a turn to its end as JSON and answers the body (record plus events). */
export async function runJsonTurn(runtime: { baseUrl: string; token?: string }, body: unknown): Promise<{ status: number; headers: Headers; json: any }> {
  const response = await fetch(`${runtime.baseUrl}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...authHeaders(runtime) },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, json: await response.json() };
}

function authHeaders(runtime: { token?: string }): Record<string, string> {
  return runtime.token === undefined ? {} : { authorization: `Bearer ${runtime.token}` };
}

/** One sample of a Prometheus text exposition: `name{labels} value`. */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parses the Prometheus text format (comments skipped) into samples. */
export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] as string] = pair[2] as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with this name and these labels (0 when absent). */
export function sampleValue(samples: readonly MetricSample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
  if (found.length > 1) throw new Error(`${found.length} samples match ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}
