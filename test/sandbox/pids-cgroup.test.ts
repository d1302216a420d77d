import { describe, expect, it } from 'vitest';
import { locatePidsCgroup } from '../../src/sandbox/pids-cgroup.js';

const v1MountInfo = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');

describe('locatePidsCgroup', () => {
  it('finds the v1 pids hierarchy and this process’s place in it', () => {
    const membership = '8:pids:/service.slice/app\n4:memory:/x\n0::/\n';
    expect(locatePidsCgroup(membership, v1MountInfo)).toEqual({ directory: '/sys/fs/cgroup/pids/service.slice/app', version: 1 });
  });

  it('uses the unified hierarchy when pids is not on a v1 mount', () => {
    const mountInfo = '30 23 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate';
    expect(locatePidsCgroup('0::/user.slice/user-1000.slice/app.scope\n', mountInfo)).toEqual({
      directory: '/sys/fs/cgroup/user.slice/user-1000.slice/app.scope',
      version: 2,
    });
  });

  it('maps a cgroup namespace root mounted at a sub-path (containers) and escaped mount points', () => {
    const mountInfo = '30 23 0:27 /kubepods/pod1 /sys/fs/cgroup\\040x rw - cgroup2 cgroup2 rw';
    expect(locatePidsCgroup('0::/kubepods/pod1/ctr\n', mountInfo)).toEqual({ directory: '/sys/fs/cgroup x/ctr', version: 2 });
  });

  it('gives up when the cgroup lies outside what is mounted', () => {
    const mountInfo = '30 23 0:27 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw';
    expect(locatePidsCgroup('0::/elsewhere\n', mountInfo)).toBeUndefined();
    expect(locatePidsCgroup('', '')).toBeUndefined();
  });
});
