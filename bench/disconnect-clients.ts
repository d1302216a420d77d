/**
 * The clients of the load bench's disconnect run, in a process of their own, so that their
 * leaving (hundreds of connections closed at once) does not hold up the event loop that times
 * the other end. Reads JSON lines on stdin:
 *   {"start": [{"label": "…", "body": "…"}, …]}  starts one streaming POST /turns per entry
 *                                                (or a GET of the entry's `url`, when it has one)
 *   {"leave": true}                              closes them all, one after the other
 * and answers {"started": n} once every turn's stream has its headers, then
 * {"left": {"<label>": <wall-clock ms>, …}} (performance.timeOrigin + now, comparable across
 * processes) once all are closed.
 *
 * The clients are `node:http` requests on sockets of their own, and leaving is `destroy()`,
 * which closes the socket then and there: the time noted is the moment the connection closed.
 * A `fetch` aborted while its body streams closes its socket only later, after its own
 * unwinding: 200 of them at once closed up to ~100 ms after their abort() was called, and a
 * bench timing from the abort() call measured that delay of the client as the service's.
 */
import { request, type ClientRequest } from 'node:http';
import { createInterface } from 'node:readline';

const [baseUrl] = process.argv.slice(2) as [string];
let clients: { label: string; request: ClientRequest }[] = [];

const wallClockMs = (): number => performance.timeOrigin + performance.now();

function open(entry: { label: string; body?: string; url?: string }): { request: ClientRequest; headers: Promise<void> } {
  const streaming = entry.url === undefined;
  const body = entry.body ?? '';
  const client = request(streaming ? `${baseUrl}/turns` : entry.url!, {
    method: streaming ? 'POST' : 'GET',
    agent: false,
    headers: streaming ? { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': Buffer.byteLength(body) } : {},
  });
  const headers = new Promise<void>((resolve, reject) => {
    client.once('response', (response) => {
      response.resume();
      resolve();
    });
    client.once('error', reject);
  });
  // Leaving destroys the request, and its error says so; nothing to report.
  headers.catch(() => undefined);
  client.on('error', () => undefined);
  client.end(streaming ? body : undefined);
  return { request: client, headers };
}

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { start?: { label: string; body?: string; url?: string }[]; leave?: boolean };
  if (command.start !== undefined) {
    const headers: Promise<void>[] = [];
    clients = command.start.map((entry) => {
      const opened = open(entry);
      // A held request never gets its headers: the caller watches the server for its arrival.
      if (entry.url === undefined) headers.push(opened.headers);
      return { label: entry.label, request: opened.request };
    });
    await Promise.all(headers);
    process.stdout.write(`${JSON.stringify({ started: clients.length })}\n`);
  }
  if (command.leave === true) {
    const left: Record<string, number> = {};
    for (const client of clients) {
      // Noted first: a client descheduled after its destroy() would otherwise note its leaving
      // after the service had already seen it.
      left[client.label] = wallClockMs();
      client.request.destroy();
    }
    process.stdout.write(`${JSON.stringify({ left })}\n`);
  }
}
process.exit(0);
