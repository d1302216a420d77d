import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolExecutionContext } from '../../../src/tools/define-worker-tool.js';
import { createApplyPatchTool } from '../../../src/tools/computer/apply-patch/apply-patch-tool.js';

let home: string;

beforeEach(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'apply-patch-tool-'));
});

afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

function contextWith(signal: AbortSignal = new AbortController().signal): ToolExecutionContext {
  return { signal, callId: 'call_1', logger: pino({ level: 'silent' }), present: () => undefined, reportStopped: () => undefined };
}

const patch = [
  '*** Begin Patch',
  '*** Update File: src/app.ts',
  '@@ export function greet() {',
  "-  return 'Hi';",
  "+  const name = 'world';",
  '+  return `Hello, ${name}!`;',
  '*** Add File: docs/new.md',
  '+# New',
  '+',
  '+Text.',
  '*** Delete File: old.txt',
  '*** End Patch',
].join('\n');

describe('createApplyPatchTool', () => {
  it('is a sequential, destructive tool named apply_patch whose patch parameter explains the format', () => {
    const tool = createApplyPatchTool({ home });
    expect(tool.name).toBe('apply_patch');
    expect(tool.executionMode).toBe('sequential');
    expect(tool.isReadOnly).toBe(false);
    expect(tool.isDestructive).toBe(true);
    const properties = tool.parameters['properties'] as Record<string, { type: string; description: string }>;
    expect(properties['patch']?.type).toBe('string');
    for (const marker of ['*** Begin Patch', '*** Add File: ', '*** Update File: ', '*** Move to: ', '*** Delete File: ', '*** End of File', '*** End Patch', '@@']) {
      expect(properties['patch']?.description).toContain(marker);
    }
    expect(tool.parameters['required']).toEqual(['patch']);
  });

  it('applies its own documented example, word for word', async () => {
    await mkdir(path.join(home, 'src'));
    await writeFile(path.join(home, 'src/app.ts'), "function greet(name: string) {\n  const greeting = 'Hello';\n  console.log('Hi');\n}\n");
    await writeFile(path.join(home, 'old.txt'), 'old\n');
    const tool = createApplyPatchTool({ home });
    const description = (tool.parameters['properties'] as Record<string, { description: string }>)['patch']?.description ?? '';
    const example = description.slice(description.indexOf('Example:\n') + 'Example:\n'.length);
    expect(tool.describeActivity({ patch: example })).toBe('Applying a patch to 3 files');
    const result = await tool.execute({ patch: example }, contextWith());
    expect(result.content).toBe('Updated src/app.ts (+1 −1), added docs/notes.md (+3), deleted old.txt (−1)');
    expect(await readFile(path.join(home, 'src/app.ts'), 'utf8')).toBe(
      "function greet(name: string) {\n  const greeting = 'Hello';\n  console.log(`${greeting}, ${name}!`);\n}\n",
    );
  });

  it('applies a patch and reports it in one sentence, with labels and per-file details', async () => {
    await mkdir(path.join(home, 'src'));
    await writeFile(path.join(home, 'src/app.ts'), "export function greet() {\n  return 'Hi';\n}\n");
    await writeFile(path.join(home, 'old.txt'), 'a\nb\n');
    const tool = createApplyPatchTool({ home });
    const params = { patch };
    expect(tool.checkArguments(params)).toEqual({ ok: true, params });
    expect(tool.describeActivity(params)).toBe('Applying a patch to 3 files');

    const result = await tool.execute(params, contextWith());
    expect(result.content).toBe('Updated src/app.ts (+2 −1), added docs/new.md (+3), deleted old.txt (−2)');
    expect(result.details).toEqual({
      files: [
        { operation: 'update', path: 'src/app.ts', added: 2, removed: 1 },
        { operation: 'add', path: 'docs/new.md', added: 3, removed: 0 },
        { operation: 'delete', path: 'old.txt', added: 0, removed: 2 },
      ],
      linesAdded: 5,
      linesRemoved: 3,
    });
    expect(tool.describeCompletedActivity?.(params, result)).toBe('Patched 3 files (+5 −3)');
    expect(await readFile(path.join(home, 'src/app.ts'), 'utf8')).toBe(
      "export function greet() {\n  const name = 'world';\n  return `Hello, ${name}!`;\n}\n",
    );
  });

  it('labels a one-file patch by its file, a renamed one by its new name', async () => {
    await writeFile(path.join(home, 'a.txt'), 'x\n');
    const tool = createApplyPatchTool({ home });
    const params = { patch: '*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+y\n*** End Patch' };
    expect(tool.describeActivity(params)).toBe('Applying a patch to b.txt');
    const result = await tool.execute(params, contextWith());
    expect(result.content).toBe('Moved a.txt to b.txt (+1 −1)');
    expect(tool.describeCompletedActivity?.(params, result)).toBe('Patched b.txt (+1 −1)');
    expect(tool.describeActivity({ patch: 'not a patch' })).toBe('Applying a patch');
  });

  it('throws an error the model can act on, and writes nothing, when a hunk does not match', async () => {
    await mkdir(path.join(home, 'src'));
    await writeFile(path.join(home, 'src/app.ts'), "export function greet() {\n  return 'Hello';\n}\n");
    await writeFile(path.join(home, 'old.txt'), 'a\n');
    const tool = createApplyPatchTool({ home });
    await expect(tool.execute({ patch }, contextWith())).rejects.toThrow(/src\/app\.ts: hunk 1 of 1 \(patch line 3\) does not match the file/);
    await expect(stat(path.join(home, 'docs'))).rejects.toThrow();
    expect(await readFile(path.join(home, 'old.txt'), 'utf8')).toBe('a\n');
  });

  it('writes nothing once the turn is cancelled', async () => {
    await mkdir(path.join(home, 'src'));
    await writeFile(path.join(home, 'src/app.ts'), "export function greet() {\n  return 'Hi';\n}\n");
    await writeFile(path.join(home, 'old.txt'), 'a\n');
    const controller = new AbortController();
    controller.abort();
    await expect(createApplyPatchTool({ home }).execute({ patch }, contextWith(controller.signal))).rejects.toThrow(/abort/i);
    expect(await readFile(path.join(home, 'src/app.ts'), 'utf8')).toContain("return 'Hi'");
    expect(await readFile(path.join(home, 'old.txt'), 'utf8')).toBe('a\n');
  });
});
