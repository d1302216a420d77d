/**
 * The baseline: the same turns as the service runs, as a plain loop on the `openai` SDK with
 * no service around it — stream each response, read the requested files in parallel, send
 * everything back, three model calls per turn. Waits for "go <count> <concurrency>" on stdin
 * (so the parent can read this process's CPU time around the run), answers "done".
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import type { ResponseInputItem, Tool } from 'openai/resources/responses/responses';
import { runConcurrently } from './bench-support.js';

const [baseUrl, home, toolsFile] = process.argv.slice(2) as [string, string, string];
const tools = JSON.parse(await readFile(toolsFile, 'utf8')) as Tool[];
const client = new OpenAI({ apiKey: 'sk-bench', baseURL: baseUrl, maxRetries: 0 });

async function turn(): Promise<void> {
  const input: ResponseInputItem[] = [{ role: 'user', content: 'Read the four files twice.' }];
  for (;;) {
    const stream = await client.responses.create({ model: 'gpt-5.1', input, tools, store: false, stream: true, parallel_tool_calls: true });
    const calls: { call_id: string; name: string; arguments: string }[] = [];
    let text = '';
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.output_item.done' && event.item.type === 'function_call') {
        calls.push({ call_id: event.item.call_id, name: event.item.name, arguments: event.item.arguments });
      }
    }
    if (calls.length === 0) return;
    if (text !== '') input.push({ role: 'assistant', content: text });
    const outputs = await Promise.all(
      calls.map(async (call) => {
        const { path: file } = JSON.parse(call.arguments) as { path: string };
        return { type: 'function_call_output' as const, call_id: call.call_id, output: await readFile(path.join(home, file), 'utf8') };
      }),
    );
    for (const call of calls) input.push({ type: 'function_call', ...call });
    input.push(...outputs);
  }
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const [command, count, concurrency] = line.split(' ');
  if (command === 'go') {
    await runConcurrently(Number(count), Number(concurrency), turn);
    process.stdout.write('done\n');
  }
  if (command === 'exit') break;
}
process.exit(0);
