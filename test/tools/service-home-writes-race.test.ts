import type { ChildProcess } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EMPTY_MCP_CONFIG } from '../../src/tools/mcp/mcp-config.js';
import { createUseSkillTool } from '../../src/tools/skills/create-use-skill-tool.js';
import { loadSkillCatalog } from '../../src/tools/skills/load-skill-catalog.js';
import type { Skill } from '../../src/tools/skills/skill-catalog.js';
import { resultText } from '../../src/tools/tool-result.js';
import { createWebFetchTool } from '../../src/tools/web/fetch/create-web-fetch-tool.js';
import { WebFetchCache } from '../../src/tools/web/fetch/web-fetch-cache.js';
import { startLoopbackServer, type LoopbackServer } from '../net/loopback-server.js';
import { createSandbox, type Sandbox } from './computer/file-tool-harness.js';
import { recordingLogger } from './mcp/mcp-test-kit.js';
import { callTool, idleSandbox, skillMarkdown, stdioServer, writeSkill } from './skills/skill-test-kit.js';
import { fakeClock, toolContext, webSettings } from './web-fetch/fixtures.js';
import { startFolderSwapper, stopFolderSwapper } from './computer/folder-swapper.js';

/**
 * The service's own writes into a home (web_fetch's saved pages, use_skill's copies and
 * mcporter config) raced by a host process swapping the folder they write into for a link
 * to a folder outside the home, as fast as it can: nothing may appear or change outside.
 */
const OUTSIDE = 'OUTSIDE SECRET';

let sandbox: Sandbox;
let swapper: ChildProcess | undefined;
beforeEach(async () => {
  sandbox = await createSandbox();
  await writeFile(path.join(sandbox.outside, 'notes.txt'), `${OUTSIDE}\n`);
});
afterEach(async () => {
  await stopSwapper();
  await sandbox.remove();
});

/** Stops the swapper of the running test, if any. */
async function stopSwapper(): Promise<void> {
  const running = swapper;
  swapper = undefined;
  await stopFolderSwapper(running);
}

/** Another process on the host swapping home/<folder> for a link to the outside folder, in a loop. */
function startOutsideSwapper(folder: string): ChildProcess {
  return startFolderSwapper({ home: sandbox.home, folder, outside: sandbox.outside });
}

/** Undoes a swap the killed swapper left half done: the link goes, the real folder comes back. */
async function restoreFolder(folder: string): Promise<void> {
  const at = path.join(sandbox.home, folder);
  if ((await lstat(at).catch(() => undefined))?.isSymbolicLink() === true) await unlink(at);
  if ((await lstat(at).catch(() => undefined)) === undefined && (await lstat(`${at}.real`).catch(() => undefined)) !== undefined) await rename(`${at}.real`, at);
}

/** Every name below the outside folder, with each file's content. */
async function outsideState(): Promise<string> {
  const names = (await readdir(sandbox.outside, { recursive: true })).sort();
  const contents = await Promise.all(names.map((name) => readFile(path.join(sandbox.outside, name), 'utf8').catch(() => '(folder)')));
  return JSON.stringify([names, contents]);
}

/** Temporary files or staging folders the service left anywhere in the home (a failed write cleans up after itself). */
async function temporaryLeftovers(): Promise<string[]> {
  const names = await readdir(sandbox.home, { recursive: true });
  return names.filter((name) => /(^|\/)\.turn-runtime-[^/]*\.tmp$|(^|\/)\.report\.[^/]*\.tmp$/.test(name));
}

/** Runs `count` calls, started 3 ms apart so they meet every state of the swap; counts those that succeeded. */
async function race(count: number, call: (index: number) => Promise<boolean>): Promise<number> {
  const results = await Promise.allSettled(
    Array.from({ length: count }, async (_unused, index) => {
      await new Promise((resolve) => setTimeout(resolve, index * 3));
      return call(index);
    }),
  );
  return results.filter((result) => result.status === 'fulfilled' && result.value).length;
}

describe('web_fetch saving long pages while .web is swapped for a link out of the home', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer((request, response) => {
      const lines = Array.from({ length: 200 }, (_unused, line) => `${request.url ?? '/'} line ${String(line)} of a long page`);
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`${lines.join('\n')}\n`);
    });
  });
  afterEach(async () => {
    await server.close();
  });

  it('40 long pages saved: 0 files outside, 0 changes outside, no temporary files left', async () => {
    await mkdir(path.join(sandbox.home, '.web'));
    const before = await outsideState();
    const clock = fakeClock();
    const webFetch = createWebFetchTool({ agentId: 'agent_1', home: sandbox.home, settings: webSettings({ allowHosts: [server.host], outputChars: 2_000 }), cache: new WebFetchCache({ clock }), clock });
    swapper = startOutsideSwapper('.web');
    await race(40, async (index) => {
      // Each page has its own name, so every call writes a new file (or is refused).
      await webFetch.execute({ urls: [server.url(`/page-${String(index)}`)] }, toolContext());
      return true;
    });
    await stopSwapper();
    expect(await outsideState()).toBe(before);
    expect(await temporaryLeftovers()).toEqual([]);
    await restoreFolder('.web');
    // Once the swapping stops, a long page is saved whole in the home.
    const text = resultText((await webFetch.execute({ urls: [server.url('/after')] }, toolContext())).content);
    const name = /saved in the agent home as (\.web\/[^ ]+\.txt)\./.exec(text)?.[1] ?? 'not saved';
    expect(await readFile(path.join(sandbox.home, name), 'utf8')).toMatch(/^\/after line 0 of a long page\n[^]*line 199 of a long page\n$/);
  }, 60_000);
});

describe('use_skill installing while .skills (or .mcporter) is swapped for a link out of the home', () => {
  let skills: string;
  beforeEach(async () => {
    skills = path.join(sandbox.root, 'skills');
    await writeSkill(skills, 'report', skillMarkdown('name: report\ndescription: Reports.\nmetadata:\n  mcp-servers: acme'), {
      'scripts/make.sh': '#!/bin/sh\necho made\n',
      'references/deep/guide.md': '# Guide\n',
      'data.txt': 'data\n',
    });
  });

  async function reportSkill(): Promise<Skill> {
    const catalog = await loadSkillCatalog({ folder: skills, mcpConfig: { ...EMPTY_MCP_CONFIG, servers: new Map([['acme', stdioServer()]]) }, logger: recordingLogger().logger });
    const skill = catalog.find('report');
    if (skill === undefined) throw new Error('the report skill did not load');
    return skill;
  }

  it.each(['.skills', '.mcporter'])('30 installs while %s is swapped: 0 files outside, 0 changes outside', async (folder) => {
    await mkdir(path.join(sandbox.home, folder));
    const skill = await reportSkill();
    const before = await outsideState();
    swapper = startOutsideSwapper(folder);
    await race(30, async () => {
      // A new tool each time: one tool installs a skill once per turn.
      const tool = createUseSkillTool({ skills: [skill], home: sandbox.home, computer: { sandbox: idleSandbox(), mcporterCommand: 'mcporter' } });
      const result = await callTool(tool, { name: 'report' });
      return result.details?.['filesFolder'] === '.skills/report';
    });
    await stopSwapper();
    expect(await outsideState()).toBe(before);
    expect(await temporaryLeftovers()).toEqual([]);
    await restoreFolder(folder);
    // Once the swapping stops, the skill installs whole into the home.
    const tool = createUseSkillTool({ skills: [skill], home: sandbox.home, computer: { sandbox: idleSandbox(), mcporterCommand: 'mcporter' } });
    expect((await callTool(tool, { name: 'report' })).details).toMatchObject({ filesFolder: '.skills/report', mcporterConfig: '/home/agent/.mcporter/skill-report.json' });
    expect(await readFile(path.join(sandbox.home, '.skills/report/references/deep/guide.md'), 'utf8')).toBe('# Guide\n');
    expect((await stat(path.join(sandbox.home, '.skills/report/scripts/make.sh'))).mode & 0o777).toBe(0o555);
    expect(JSON.parse(await readFile(path.join(sandbox.home, '.mcporter/skill-report.json'), 'utf8'))).toMatchObject({ imports: [] });
  }, 60_000);
});
