/**
 * The clients of the load bench's disconnect run, in a process of their own, so that their
 * leaving (hundreds of aborted fetches at once) does not hold up the event loop that times
 * the other end. Reads JSON lines on stdin:
 *   {"start": [{"label": "…", "body": "…"}, …]}  starts one streaming POST /turns per entry
 *                                                (or a GET of the entry's `url`, when it has one)
 *   {"leave": true}                              aborts them all, one after the other
 * and answers {"started": n} once every turn's stream has its headers, then
 * {"left": {"<label>": <wall-clock ms>, …}} (performance.timeOrigin + now, comparable across
 * processes) once all are aborted.
 */
import { createInterface } from 'node:readline';

const [baseUrl] = process.argv.slice(2) as [string];
let turns: { label: string; controller: AbortController; settled: Promise<unknown> }[] = [];

const wallClockMs = (): number => performance.timeOrigin + performance.now();

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { start?: { label: string; body?: string; url?: string }[]; leave?: boolean };
  if (command.start !== undefined) {
    const headers: Promise<void>[] = [];
    turns = command.start.map(({ label, body, url }) => {
      const controller = new AbortController();
      const response =
        url === undefined
          ? fetch(`${baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: body ?? '', signal: controller.signal })
          : fetch(url, { signal: controller.signal });
      // A held request never gets its headers: the caller watches the server for its arrival.
      if (url === undefined) headers.push(response.then(() => undefined));
      const settled = response
        .then(async (answer) => {
          const reader = answer.body!.getReader();
          for (;;) if ((await reader.read()).done) return;
        })
        .catch(() => undefined);
      return { label, controller, settled };
    });
    await Promise.all(headers);
    process.stdout.write(`${JSON.stringify({ started: turns.length })}\n`);
  }
  if (command.leave === true) {
    const left: Record<string, number> = {};
    for (const turn of turns) {
      left[turn.label] = wallClockMs();
      turn.controller.abort();
    }
    process.stdout.write(`${JSON.stringify({ left })}\n`);
    await Promise.all(turns.map((turn) => turn.settled));
  }
}
process.exit(0);
