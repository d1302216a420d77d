import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, workerData, type WorkerOptions } from 'node:worker_threads';

/** What a module worker is started with: its module (from source only) and the caller's data. */
interface ModuleWorkerData {
  readonly entry?: string;
  readonly data: unknown;
}

/**
 * Starts a `worker_threads` worker on the module `name` beside `base` (an `import.meta.url`),
 * giving it `data` (read there with `moduleWorkerData()`). The built service runs `<name>.js`;
 * from source (tests, `npm run dev`) the worker registers tsx first so it can load `<name>.ts`.
 */
export function spawnModuleWorker(base: string, name: string, options: Omit<WorkerOptions, 'eval' | 'workerData'> & { readonly data?: unknown } = {}): Worker {
  const { data, ...workerOptions } = options;
  const compiled = new URL(`./${name}.js`, base);
  if (existsSync(fileURLToPath(compiled))) return new Worker(compiled, { ...workerOptions, workerData: { data } satisfies ModuleWorkerData });
  const source = new URL(`./${name}.ts`, base);
  const bootstrap =
    "const { workerData } = require('node:worker_threads'); import('tsx/esm/api').then((api) => { api.register(); return import(workerData.entry); });";
  return new Worker(bootstrap, { ...workerOptions, eval: true, workerData: { entry: source.href, data } satisfies ModuleWorkerData });
}

/** Inside a worker started by spawnModuleWorker: the data it was given. */
export function moduleWorkerData(): unknown {
  return (workerData as ModuleWorkerData | null)?.data;
}
