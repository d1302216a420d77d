import { describe, expect, it } from 'vitest';
import { buildBwrapArguments, parseBwrapFeatures, type BwrapLayout } from '../../src/sandbox/bwrap-arguments.js';

const layout: BwrapLayout = {
  systemFolders: [{ path: '/usr' }, { path: '/bin', symlinkTarget: 'usr/bin' }],
  etcEntries: ['hosts', 'ssl/certs'],
  features: { disableUserns: true, tmpfsSize: true },
};
const base = { layout, home: '/srv/homes/a b', cwd: '', allowNetwork: false, tmpSizeBytes: 1024, env: { HOME: '/home/agent', PATH: '/usr/bin' } };

function pairsAfter(args: readonly string[], flag: string): string[] {
  return args.flatMap((arg, index) => (arg === flag ? [args[index + 1] ?? ''] : []));
}

describe('buildBwrapArguments', () => {
  it('isolates every namespace, keeps the network off and clears the environment', () => {
    const args = buildBwrapArguments(base);
    for (const flag of ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--clearenv']) expect(args).toContain(flag);
    expect(args).not.toContain('--share-net');
    expect(buildBwrapArguments({ ...base, allowNetwork: true })).toContain('--share-net');
    expect(args.indexOf('--clearenv')).toBeLessThan(args.indexOf('--setenv'));
  });

  it('binds only the home writable, at /home/agent, and starts there or in the cwd below it', () => {
    const args = buildBwrapArguments(base);
    const bindAt = args.indexOf('--bind');
    expect(args.slice(bindAt, bindAt + 3)).toEqual(['--bind', '/srv/homes/a b', '/home/agent']);
    expect(args.filter((arg) => arg === '--bind')).toHaveLength(1);
    expect(pairsAfter(args, '--ro-bind')).toEqual(['/usr', '/etc/hosts', '/etc/ssl/certs']);
    expect(args.slice(args.indexOf('--symlink'), args.indexOf('--symlink') + 3)).toEqual(['--symlink', 'usr/bin', '/bin']);
    expect(pairsAfter(args, '--remount-ro')).toEqual(['/dev', '/proc', '/']);
    expect(pairsAfter(args, '--chdir')).toEqual(['/home/agent']);
    expect(pairsAfter(buildBwrapArguments({ ...base, cwd: 'src/lib' }), '--chdir')).toEqual(['/home/agent/src/lib']);
  });

  it('limits the size of /tmp and /dev/shm, and leaves out what an old bwrap lacks', () => {
    expect(pairsAfter(buildBwrapArguments(base), '--tmpfs')).toEqual(['/tmp', '/dev/shm']);
    expect(pairsAfter(buildBwrapArguments(base), '--size')).toEqual(['1024', '1024']);
    const old = buildBwrapArguments({ ...base, layout: { ...layout, features: parseBwrapFeatures('usage: bwrap [OPTIONS...]\n --tmpfs DEST') } });
    expect(old).not.toContain('--size');
    expect(old).not.toContain('--disable-userns');
    expect(pairsAfter(old, '--tmpfs')).toEqual(['/tmp', '/dev/shm']);
  });
});
