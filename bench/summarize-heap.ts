/**
 * What a waiting turn holds on the heap: `tsx bench/summarize-heap.ts <folder> <turns> [to] [from]`
 * reads two of the heap snapshots the load bench writes with BENCH_HEAP_SNAPSHOT_DIR (by default
 * `waiting`, every turn waiting on its last model call, against `after`, once they have all
 * ended; `after baseline` shows what the turns' agents keep once their turns are over), groups
 * each snapshot's objects by their kind and constructor (strings by length), and prints the
 * groups that grew the most (HEAP_GROUPS of them, 60 by default), as objects and bytes per turn.
 * Self sizes, so the groups add up to what grew.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: readonly string[]; readonly node_types: readonly [readonly string[], ...unknown[]] } };
  readonly nodes: readonly number[];
  readonly strings: readonly string[];
}

interface Group {
  count: number;
  bytes: number;
}

async function groups(file: string): Promise<Map<string, Group>> {
  const parsed = JSON.parse(await readFile(file, 'utf8')) as Snapshot;
  const fields = parsed.snapshot.meta.node_fields;
  const kinds = parsed.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field)) as [number, number, number];
  const found = new Map<string, Group>();
  for (let at = 0; at < parsed.nodes.length; at += width) {
    const kind = kinds[parsed.nodes[at + typeAt]!] ?? '?';
    const bytes = parsed.nodes[at + sizeAt]!;
    const name = parsed.strings[parsed.nodes[at + nameAt]!] ?? '';
    const key = kind === 'string' || kind === 'concatenated string' || kind === 'sliced string' ? `${kind} (${lengthBucket(name.length)})` : kind === 'code' || kind === 'hidden' || kind === 'array' ? `${kind} ${name.slice(0, 60)}` : `${kind} ${name.slice(0, 80)}`;
    const group = found.get(key) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += bytes;
    found.set(key, group);
  }
  return found;
}

function lengthBucket(length: number): string {
  if (length < 64) return '< 64 chars';
  if (length < 1024) return '64-1023 chars';
  if (length < 8192) return '1-8 K chars';
  return '≥ 8 K chars';
}

const [folder, turnsText, to = 'waiting', from = 'after'] = process.argv.slice(2);
if (folder === undefined || turnsText === undefined) throw new Error('usage: tsx bench/summarize-heap.ts <folder of the load bench\'s snapshots> <turns> [to: waiting] [from: after]');
const turns = Number(turnsText);
const waiting = await groups(path.join(folder, `${to}.heapsnapshot`));
const after = await groups(path.join(folder, `${from}.heapsnapshot`));
const grown = [...waiting].map(([key, group]) => {
  const before = after.get(key) ?? { count: 0, bytes: 0 };
  return { key, count: (group.count - before.count) / turns, bytes: (group.bytes - before.bytes) / turns };
});
grown.sort((a, b) => b.bytes - a.bytes);
const total = grown.reduce((sum, group) => sum + group.bytes, 0);
console.log(`heap grown from ${from} to ${to}, per turn: ${(total / 1024).toFixed(1)} KB (self sizes, ${turns} turns)`);
for (const group of grown.slice(0, Number(process.env['HEAP_GROUPS'] ?? 60))) {
  console.log(`${(group.bytes / 1024).toFixed(2).padStart(8)} KB ${group.count.toFixed(1).padStart(7)} × ${group.key}`);
}
