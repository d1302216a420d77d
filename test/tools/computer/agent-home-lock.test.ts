import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireHomeLock, type HomeLockMode } from '../../../src/tools/computer/agent-home-lock.js';

let root: string;
let home: string;
const children: ChildProcess[] = [];
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'home-lock-'));
  home = path.join(root, 'agents', 'a', 'home');
  await mkdir(home, { recursive: true });
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

const never = new AbortController().signal;
const lock = (mode: HomeLockMode, signal: AbortSignal = never) => acquireHomeLock({ home, mode, signal });

/** Resolves to 'pending' when `promise` has not settled within `ms`. */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => { resolve('pending'); }, ms))]);
}

/** Another process holding the lock, as another service process on the host would. */
async function holdElsewhere(mode: HomeLockMode): Promise<{ child: ChildProcess; release: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/hold-home-lock.ts', home, mode], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const [first] = (await once(child.stdout, 'data')) as [Buffer];
  expect(first.toString()).toBe('locked\n');
  return {
    child,
    release: async () => {
      child.stdin.end();
      await once(child, 'exit');
    },
  };
}

describe('the agent home lock in one process', () => {
  it('lets shared holders overlap, makes an exclusive one wait for them, and holds later shared ones behind it', async () => {
    const first = await lock('shared');
    const second = await lock('shared');
    const order: string[] = [];
    const exclusive = lock('exclusive').then((release) => {
      order.push('exclusive');
      return release;
    });
    const third = lock('shared').then((release) => {
      order.push('third shared');
      return release;
    });
    expect(await settledWithin(exclusive, 50)).toBe('pending');
    first();
    expect(await settledWithin(exclusive, 50)).toBe('pending');
    second();
    const releaseExclusive = await exclusive;
    expect(await settledWithin(third, 50)).toBe('pending');
    releaseExclusive();
    (await third)();
    expect(order).toEqual(['exclusive', 'third shared']);
  });

  it('gives up waiting when the signal fires, and lets the waiters behind it in', async () => {
    const shared = await lock('shared');
    const controller = new AbortController();
    const exclusive = lock('exclusive', controller.signal);
    const behind = lock('shared');
    expect(await settledWithin(behind, 30)).toBe('pending');
    controller.abort(new Error('turn cancelled'));
    await expect(exclusive).rejects.toThrow('turn cancelled');
    const releaseBehind = await behind;
    shared();
    releaseBehind();
    // Nothing is left held: an exclusive lock is granted (within a wait no loaded machine needs).
    expect(typeof (await settledWithin(lock('exclusive'), 10_000))).toBe('function');
  });

  it('releases once, however often release is called', async () => {
    const first = await lock('shared');
    const second = await lock('shared');
    first();
    first();
    const exclusive = lock('exclusive');
    expect(await settledWithin(exclusive, 50)).toBe('pending');
    second();
    (await exclusive)();
  });
});

describe('the agent home lock between processes', () => {
  it('waits for another process\'s exclusive lock, and is cancellable while it waits', async () => {
    const other = await holdElsewhere('exclusive');
    const controller = new AbortController();
    const cancelled = lock('shared', controller.signal);
    expect(await settledWithin(cancelled, 100)).toBe('pending');
    controller.abort(new Error('gone'));
    await expect(cancelled).rejects.toThrow('gone');

    const waiting = lock('shared');
    expect(await settledWithin(waiting, 100)).toBe('pending');
    await other.release();
    (await waiting)();
  });

  it('holds another process\'s exclusive lock back while this process has shared holders', async () => {
    const first = await lock('shared');
    const second = await lock('shared');
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/hold-home-lock.ts', home, 'exclusive'], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(child);
    const locked = once(child.stdout, 'data');
    expect(await settledWithin(locked, 1500)).toBe('pending');
    first();
    expect(await settledWithin(locked, 200)).toBe('pending');
    second();
    const [line] = (await locked) as [Buffer];
    expect(line.toString()).toBe('locked\n');
    child.stdin.end();
    await once(child, 'exit');
  });

  it('is freed by the kernel when the holding process dies', async () => {
    const other = await holdElsewhere('exclusive');
    const waiting = lock('exclusive');
    expect(await settledWithin(waiting, 100)).toBe('pending');
    other.child.kill('SIGKILL');
    (await waiting)();
  });

  it('lets shared holders of two processes overlap', async () => {
    const other = await holdElsewhere('shared');
    const release = await settledWithin(lock('shared'), 10_000);
    expect(typeof release).toBe('function');
    if (typeof release === 'function') release();
    await other.release();
  });
});
