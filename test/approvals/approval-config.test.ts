import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';

describe('APPROVAL_TIMEOUT_MS', () => {
  it('defaults to 24 hours and takes milliseconds', () => {
    expect(loadConfig({}).approvals.timeoutMs).toBe(86_400_000);
    expect(loadConfig({ APPROVAL_TIMEOUT_MS: '90000' }).approvals.timeoutMs).toBe(90_000);
  });

  it('refuses values that are not a whole number of milliseconds in range, naming the variable', () => {
    for (const value of ['soon', '1.5', '0', '-1', String(31 * 86_400_000)]) {
      expect(() => loadConfig({ APPROVAL_TIMEOUT_MS: value })).toThrow(/APPROVAL_TIMEOUT_MS: /);
    }
  });

  it('stops the process with exit code 78 on a bad value', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { PATH: process.env['PATH'] ?? '', APPROVAL_TIMEOUT_MS: 'a day' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(78);
    expect(stderr).toMatch(/- APPROVAL_TIMEOUT_MS: /);
  }, 30_000);
});
