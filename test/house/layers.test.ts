import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const configFile = path.join(root, '.dependency-cruiser.cjs');
// The CLI as npm links it (its file inside the package was renamed in 18).
const depcruise = path.join(root, 'node_modules/.bin/depcruise');
const { layers } = createRequire(import.meta.url)(configFile) as { layers: readonly { name: string; paths: readonly string[] }[] };

/** Runs the check of `npm run lint:layers` with the project's config on the tree in `folder`. */
async function checkLayers(folder: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout } = await run(process.execPath, [depcruise, 'src', 'routes', '--config', configFile, '--output-type', 'err'], { cwd: folder });
    return { ok: true, output: stdout };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe('the layer check (npm run lint:layers)', () => {
  let folder: string | undefined;
  afterEach(async () => {
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
    folder = undefined;
  });

  /** A small tree of `files` (path → source) with the tsconfig the check reads. */
  async function tree(files: Record<string, string>): Promise<string> {
    folder = await mkdtemp(path.join(tmpdir(), 'turn-runtime-layers-'));
    await writeFile(path.join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
    await mkdir(path.join(folder, 'routes'));
    for (const [file, source] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(folder, file)), { recursive: true });
      await writeFile(path.join(folder, file), source);
    }
    return folder;
  }

  it('passes imports that point down, and fails a type-only import from a lower layer into a higher one', async () => {
    const down = await tree({
      'src/turns/turn-thing.ts': "import type { Loop } from '../loop/loop-thing.js';\nexport type Turn = Loop;\n",
      'src/loop/loop-thing.ts': 'export type Loop = string;\n',
    });
    expect(await checkLayers(down)).toMatchObject({ ok: true });
    await rm(down, { recursive: true });

    const up = await tree({
      'src/loop/loop-thing.ts': "import type { Turn } from '../turns/turn-thing.js';\nexport type Loop = Turn;\n",
      'src/turns/turn-thing.ts': 'export type Turn = string;\n',
    });
    const result = await checkLayers(up);
    expect(result.ok).toBe(false);
    expect(result.output).toContain('layer-loop: src/loop/loop-thing.ts → src/turns/turn-thing.ts');
  });

  it('fails an import circle inside one folder, an import between peers of a layer, and a folder in no layer', async () => {
    const result = await checkLayers(
      await tree({
        'src/turns/a.ts': "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n",
        'src/turns/b.ts': "import { a } from './a.js';\nexport const b = (): number => a() - 1;\n",
        'src/schedules/schedule-thing.ts': "import type { Job } from '../background-jobs/job-thing.js';\nexport type Schedule = Job;\n",
        'src/background-jobs/job-thing.ts': 'export type Job = string;\n',
        'src/gadgets/gadget.ts': "import type { Job } from '../background-jobs/job-thing.js';\nexport type Gadget = Job;\n",
      }),
    );
    expect(result.ok).toBe(false);
    expect(result.output).toContain('no-circular: src/turns/a.ts');
    expect(result.output).toContain('layer-features-peers: src/schedules/schedule-thing.ts → src/background-jobs/job-thing.ts');
    expect(result.output).toContain('layer-unlisted: src/gadgets/gadget.ts');
  });

  it('covers every folder of src/, and CONTRIBUTING.md lists the same layers in the same order', async () => {
    const contributing = await readFile(path.join(root, 'CONTRIBUTING.md'), 'utf8');
    const section = contributing.slice(contributing.indexOf('## Layers'));
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| Layer') && !line.startsWith('|---'))
      .map((line) => line.split('|')[1]?.trim());
    expect(rows).toEqual(layers.map((layer) => layer.name));

    const { stdout } = await run('git', ['ls-files', 'src', 'routes'], { cwd: root });
    const unlisted = stdout
      .split('\n')
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .filter((file) => !layers.some((layer) => layer.paths.some((pattern) => new RegExp(`^(${pattern})`).test(file))));
    expect(unlisted).toEqual([]);
  });
});
