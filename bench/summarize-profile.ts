/**
 * Where a turn's CPU goes: `tsx bench/summarize-profile.ts <folder of .cpuprofile> [turns]`
 * sorts every sample's own time into the parts of a turn (HTTP in, assembly, model request
 * and stream, argument validation, tool work, event serialisation, store writes, SSE writes,
 * logging, metrics, GC …) by the file and function it was spent in, and prints each part's
 * share, and its milliseconds per turn when the number of turns profiled is given.
 *
 * Take the profile with `BENCH_PROFILE=/tmp/prof npm run bench:turns` (the service runs
 * with `--cpu-prof`). The profile also holds the start-up; its module loading is its own part.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** First match wins: [part, test on "url functionName"]. */
const PARTS: readonly (readonly [string, RegExp])[] = [
  ['start-up (module loading)', /node:internal\/modules|compileSourceTextModule|wrapSafe|internalModuleStat|compileForInternalLoader/],
  ['garbage collection', /^ \(garbage collector\)$/],
  ['store writes (Kysely, SQLite, pg)', /node_modules\/(kysely|better-sqlite3|pg|pg-protocol|pg-boss)\/|\/src\/store\/|\/src\/durable\/|\/coordination\//],
  ['logging (pino)', /node_modules\/(pino|sonic-boom|thread-stream)\//],
  ['metrics and traces', /node_modules\/(prom-client|@opentelemetry)\/|\/src\/observability\//],
  ['HTTP in: parse and validate (Fastify, Zod)', /node_modules\/(fastify|find-my-way|light-my-request|avvio|@fastify|zod|fast-json-stringify|secure-json-parse)\/|node:_http_server|node:_http_common|node:_http_incoming|\/src\/http\/(authenticate|drain-guard|negotiate|error)|\/src\/turns\/turn-request/],
  ['SSE and JSON out', /\/src\/http\/(event-stream|stream-turn|replay|ui-message)|node:_http_outgoing|writev|writeUtf8String|writeBuffer|node:internal\/stream_base_commons/],
  ['model request and stream (openai, undici)', /node_modules\/openai\/|node:internal\/deps\/undici|node:internal\/webstreams|\/src\/models\/|wasm:\/\/|node:internal\/encoding|encodeUtf8String|node:internal\/url/],
  ['argument validation and repair', /\/src\/arguments\/|node_modules\/(ajv|jsonrepair)\/|\/src\/loop\/prepare-tool-call/],
  ['tool work (file tools, fs calls)', /\/src\/tools\/computer\/|openFileHandle|^ (close|lstat|fstat|stat|read|realpath|readlink|open|mkdir|readdir)$|node:internal\/fs\//],
  ['assembly and schemas (tools, Tool Search)', /\/src\/tools\/|\/src\/turns\/(plan-turn|provider-tools|create-model-client)|\/src\/loop\/tool-catalog/],
  ['event numbering and serialisation', /\/src\/turns\/(turn-run|delta-coalescer|event-window|turn-events|follow-turn-events)|^ (stringify|parse)$/],
  ['turn loop and tool dispatch', /\/src\/loop\/|\/src\/turns\//],
  ['Node internals (promises, timers, events, streams, abort signals)', /node:|runMicrotasks|processTicksAndRejections/],
];

export async function summarizeProfile(folder: string, turns: number | undefined): Promise<string[]> {
  const totals = new Map<string, number>();
  let busy = 0;
  for (const file of (await readdir(folder)).filter((name) => name.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(await readFile(path.join(folder, file), 'utf8')) as Profile;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    for (const [index, id] of profile.samples.entries()) {
      const node = nodes.get(id);
      const micros = profile.timeDeltas[index] ?? 0;
      if (node === undefined || node.callFrame.functionName === '(idle)') continue;
      const key = `${node.callFrame.url} ${node.callFrame.functionName}`;
      const part = PARTS.find(([, test]) => test.test(key))?.[0] ?? 'other';
      totals.set(part, (totals.get(part) ?? 0) + micros);
      busy += micros;
    }
  }
  const lines = [...totals].sort((left, right) => right[1] - left[1]).map(([part, micros]) => {
    const perTurn = turns === undefined ? '' : ` ${(micros / 1000 / turns).toFixed(2).padStart(6)} ms/turn`;
    return `${((100 * micros) / busy).toFixed(1).padStart(5)}%${perTurn}  ${part}`;
  });
  return [`busy ${(busy / 1000).toFixed(0)} ms in ${folder}`, ...lines];
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const [folder, turns] = process.argv.slice(2);
  if (folder === undefined) throw new Error('usage: tsx bench/summarize-profile.ts <folder of .cpuprofile files> [turns]');
  for (const line of await summarizeProfile(folder, turns === undefined ? undefined : Number(turns))) console.log(line);
}
