/**
 * The bench's view into a service process it started: its resident memory, and, through the
 * service's inspector (started by SIGUSR1, so the load before ran without one), a full garbage
 * collection, a heap snapshot and a CPU profile. Shared by the load and storm benches.
 */
import { createWriteStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { WebSocket } from 'undici';

export async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
}

/**
 * Has the service run a full garbage collection, through its inspector (`HeapProfiler.collectGarbage`),
 * then detaches: what is left on the heap is what the turns hold. The inspector is started here, by
 * SIGUSR1, so that the load before it ran without one. With `snapshotTo`, it then writes a heap
 * snapshot of the service there (`HeapProfiler.takeHeapSnapshot`).
 */
export async function collectGarbage(pid: number, inspectPort: number, snapshotTo?: string): Promise<void> {
  const session = await openInspector(pid, inspectPort);
  const snapshot = snapshotTo === undefined ? undefined : createWriteStream(snapshotTo);
  session.onEvent = (method, params) => {
    if (method === 'HeapProfiler.addHeapSnapshotChunk') snapshot?.write(params['chunk'] ?? '');
  };
  try {
    await session.send('HeapProfiler.collectGarbage');
    if (snapshot !== undefined) await session.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  } finally {
    session.close();
    if (snapshot !== undefined) await new Promise((resolve) => snapshot.end(resolve));
  }
}

/**
 * Runs `work` under the service's CPU profiler (`Profiler.start`, one sample every 100 µs) and
 * writes the profile to `profileTo` (a `.cpuprofile`, for Chrome's DevTools or
 * `bench/summarize-profile.ts`). Without `profileTo`, only runs `work`.
 */
export async function profiled<T>(pid: number, inspectPort: number, profileTo: string | undefined, work: () => Promise<T>): Promise<T> {
  if (profileTo === undefined) return work();
  const session = await openInspector(pid, inspectPort);
  try {
    await session.send('Profiler.enable');
    await session.send('Profiler.setSamplingInterval', { interval: 100 });
    await session.send('Profiler.start');
    const result = await work();
    const stopped = (await session.send('Profiler.stop')) as { profile?: unknown };
    await writeFile(profileTo, JSON.stringify(stopped.profile));
    return result;
  } finally {
    session.close();
  }
}

interface InspectorSession {
  send(method: string, params?: Record<string, unknown>): Promise<unknown>;
  onEvent: (method: string, params: Record<string, string | undefined>) => void;
  close(): void;
}

/** A session with the service's inspector, started by SIGUSR1 (so the load before ran without one). */
async function openInspector(pid: number, inspectPort: number): Promise<InspectorSession> {
  process.kill(pid, 'SIGUSR1');
  let targets: { webSocketDebuggerUrl?: string }[] = [];
  for (let tries = 0; targets.length === 0; tries += 1) {
    if (tries > 100) throw new Error('the service\'s inspector never answered');
    await new Promise((resolve) => setTimeout(resolve, 50));
    targets = await fetch(`http://127.0.0.1:${inspectPort}/json/list`)
      .then(async (answer) => (await answer.json()) as { webSocketDebuggerUrl?: string }[])
      .catch(() => []);
  }
  const url = targets[0]?.webSocketDebuggerUrl;
  if (url === undefined) throw new Error('the service has no inspector target');
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => { resolve(); });
    socket.addEventListener('error', () => { reject(new Error('the inspector connection failed')); });
  });
  const pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  let lastId = 0;
  const session: InspectorSession = {
    send: (method, params) =>
      new Promise((resolve, reject) => {
        lastId += 1;
        pending.set(lastId, { resolve, reject });
        socket.send(JSON.stringify({ id: lastId, method, ...(params === undefined ? {} : { params }) }));
      }),
    onEvent: () => undefined,
    close: () => { socket.close(); },
  };
  socket.addEventListener('message', (message) => {
    const answer = JSON.parse(String(message.data)) as { id?: number; method?: string; params?: Record<string, string | undefined>; result?: unknown; error?: { message: string } };
    if (answer.id === undefined) {
      if (answer.method !== undefined) session.onEvent(answer.method, answer.params ?? {});
      return;
    }
    const waiter = pending.get(answer.id);
    pending.delete(answer.id);
    if (answer.error !== undefined) waiter?.reject(new Error(`the inspector refused: ${answer.error.message}`));
    else waiter?.resolve(answer.result);
  });
  return session;
}
