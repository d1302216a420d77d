/**
 * The clients of the disconnect storm (storm-bench.ts), in a process of their own, so that their
 * coming and going does not hold up the event loop that watches the service's processes. Reads
 * one JSON line per wave on stdin:
 *   {"wave": [{"label": "…", "body": "…", "startAfterMs": 20, "leaveAfterMs": 1234}, …]}
 * starts one streaming POST /turns per entry, `startAfterMs` after the line came, and `leaveAfterMs` after its answer's headers came
 * closes its connection (`destroy()`, which closes the socket then and there). Writes one line
 * per client as it goes:
 *   {"label": "…", "turnId": "…", "leftAt": <wall-clock ms>}       it left, at that instant
 *   {"label": "…", "turnId": "…", "endedFirst": true}              the turn's stream ended before
 *   {"label": "…", "error": "…"}                                   the request failed
 * Wall-clock times are performance.timeOrigin + now: comparable across processes.
 */
import { request } from 'node:http';
import { createInterface } from 'node:readline';

interface WaveEntry {
  readonly label: string;
  readonly body: string;
  readonly startAfterMs: number;
  readonly leaveAfterMs: number;
}

const [baseUrl] = process.argv.slice(2) as [string];
const wallClockMs = (): number => performance.timeOrigin + performance.now();
const report = (line: object): void => {
  process.stdout.write(`${JSON.stringify(line)}\n`);
};

function start(entry: WaveEntry): void {
  const client = request(`${baseUrl}/turns`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': Buffer.byteLength(entry.body) },
  });
  let done = false;
  client.on('error', (error) => {
    if (done) return;
    done = true;
    report({ label: entry.label, error: error.message });
  });
  client.once('response', (response) => {
    const turnId = response.headers['turn-id'];
    if (response.statusCode !== 200 || typeof turnId !== 'string') {
      done = true;
      report({ label: entry.label, error: `answered ${String(response.statusCode)}` });
      client.destroy();
      return;
    }
    response.resume();
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      // Noted first: a client descheduled after its destroy() would note its leaving after the service saw it.
      const leftAt = wallClockMs();
      client.destroy();
      report({ label: entry.label, turnId, leftAt });
    }, entry.leaveAfterMs);
    response.once('end', () => {
      clearTimeout(timer);
      if (done) return;
      done = true;
      report({ label: entry.label, turnId, endedFirst: true });
    });
  });
  client.end(entry.body);
}

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { wave?: WaveEntry[] };
  for (const entry of command.wave ?? []) {
    if (entry.startAfterMs <= 0) start(entry);
    else
      setTimeout(() => {
        start(entry);
      }, entry.startAfterMs);
  }
}
process.exit(0);
