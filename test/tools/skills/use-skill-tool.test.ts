import { lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toProviderTools } from '../../../src/turns/provider-tools.js';
import { createUseSkillTool, SKILL_LIST_BUDGET_CHARS, useSkillDescription } from '../../../src/tools/skills/create-use-skill-tool.js';
import { EMPTY_MCP_CONFIG } from '../../../src/tools/mcp/mcp-config.js';
import { loadSkillCatalog } from '../../../src/tools/skills/load-skill-catalog.js';
import { recordingLogger } from '../mcp/mcp-test-kit.js';
import { callTool, idleSandbox, skillFixture, skillMarkdown, stdioServer, tempFolder, writeSkill } from './skill-test-kit.js';

describe('use_skill definition', () => {
  const skills = [skillFixture({ name: 'release-notes', description: 'Writes release notes\nfrom merged PRs.' }), skillFixture({ name: 'code-review' })];
  const tool = createUseSkillTool({ skills, home: '/nonexistent', computer: undefined });

  it('shows the model an enum of the enabled skills, and lists each with its description', () => {
    expect(tool).toMatchObject({ name: 'use_skill', strict: true, executionMode: 'parallel', isReadOnly: true, isDestructive: false, schemaSource: 'zod' });
    expect(tool.parameters).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string', enum: ['release-notes', 'code-review'] } },
      required: ['name'],
      additionalProperties: false,
    });
    expect(tool.description).toContain('\nSkills:\n- release-notes: Writes release notes from merged PRs.\n- code-review: Does code-review work.');
    const [provider] = toProviderTools([tool]);
    expect(provider).toMatchObject({ type: 'function', name: 'use_skill', strict: true, parameters: tool.parameters });
  });

  it('refuses a skill that is not enabled, an empty name and __proto__ before execute', () => {
    for (const name of ['ghost', '', '__proto__', 'constructor']) expect(tool.checkArguments({ name }).ok).toBe(false);
    expect(tool.checkArguments({}).ok).toBe(false);
    expect(tool.checkArguments({ name: 'code-review' }).ok).toBe(true);
  });

  it('labels the activity with the skill name', () => {
    expect(tool.describeActivity({ name: 'release-notes' })).toBe('Opening skill release-notes');
    expect(tool.describeCompletedActivity?.({ name: 'release-notes' }, { content: '' })).toBe('Opened skill release-notes');
  });

  it('cuts descriptions to an equal share when the list would be too long, keeping every skill listed', () => {
    const many = Array.from({ length: 50 }, (_, index) => skillFixture({ name: `skill-${String(index)}`, description: 'x'.repeat(1024) }));
    const description = useSkillDescription(many);
    for (const skill of many) expect(description).toContain(`- ${skill.name}: xxx`);
    const list = description.slice(description.indexOf('Skills:'));
    expect(list.length).toBeLessThanOrEqual(SKILL_LIST_BUDGET_CHARS + 'Skills:\n'.length);
    expect(description).toMatch(/x…\n/);
    expect(useSkillDescription([skillFixture({ name: 'one', description: 'y'.repeat(1024) })])).toContain(`- one: ${'y'.repeat(1024)}`);
  });
});

describe('use_skill returns the skill', () => {
  let root: string;
  let home: string;
  const cleanups: (() => Promise<void>)[] = [];
  beforeEach(async () => {
    const skillsFolder = await tempFolder('skills-');
    const homeFolder = await tempFolder('skills-home-');
    cleanups.push(skillsFolder.remove, homeFolder.remove);
    root = skillsFolder.folder;
    home = homeFolder.folder;
  });
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });

  async function catalogOf(mcpConfig = EMPTY_MCP_CONFIG) {
    return loadSkillCatalog({ folder: root, mcpConfig, logger: recordingLogger().logger });
  }

  it('returns the body alone for a skill with no files and no MCP servers', async () => {
    await writeSkill(root, 'release-notes', skillMarkdown('name: release-notes\ndescription: Writes release notes.', '# Release notes\n\n1. Read the merged PRs.\n'));
    const skill = (await catalogOf()).find('release-notes');
    const tool = createUseSkillTool({ skills: [skill ?? skillFixture({ name: 'x' })], home, computer: { sandbox: idleSandbox(), mcporterCommand: 'mcporter' } });
    const result = await callTool(tool, { name: 'release-notes' });
    expect(result.text).toBe('# Release notes\n\n1. Read the merged PRs.');
    expect(result.activity).toBe('Opening skill release-notes');
    expect(result.completed).toBe('Opened skill release-notes');
    expect(result.details).toEqual({ skill: 'release-notes', files: 0, mcpServers: [] });
  });

  it('copies the files into .skills/<name>/ of the home, read-only, and says where they are', async () => {
    await writeSkill(root, 'report', skillMarkdown('name: report\ndescription: Reports.', 'Run scripts/make.sh, see references/guide.md.\n'), {
      'scripts/make.sh': '#!/bin/sh\necho made\n',
      'references/guide.md': '# Guide\n',
    });
    const [skill] = [(await catalogOf()).find('report')];
    const tool = createUseSkillTool({ skills: [skill ?? skillFixture({ name: 'x' })], home, computer: { sandbox: idleSandbox(), mcporterCommand: 'mcporter' } });
    const result = await callTool(tool, { name: 'report' });
    expect(result.text).toContain(
      'The files of this skill are in `.skills/report/` of your home folder (`/home/agent/.skills/report` in run_command); paths in the instructions above are relative to that folder.',
    );
    expect(result.text).toContain('- .skills/report/references/guide.md (8 B)\n- .skills/report/scripts/make.sh (20 B)');
    expect(await readFile(path.join(home, '.skills/report/references/guide.md'), 'utf8')).toBe('# Guide\n');
    expect((await stat(path.join(home, '.skills/report/references/guide.md'))).mode & 0o777).toBe(0o444);
    expect((await stat(path.join(home, '.skills/report/scripts/make.sh'))).mode & 0o777).toBe(0o555);
    expect(result.details).toMatchObject({ filesFolder: '.skills/report', files: 2 });

    // What the agent changed is replaced on the next use (in a later turn), and no staging folder is left.
    await writeFile(path.join(home, '.skills/report/extra.txt'), 'agent scribbles');
    const later = createUseSkillTool({ skills: [skill ?? skillFixture({ name: 'x' })], home, computer: { sandbox: idleSandbox(), mcporterCommand: 'mcporter' } });
    await callTool(later, { name: 'report' });
    await expect(lstat(path.join(home, '.skills/report/extra.txt'))).rejects.toThrow(/ENOENT/);
    expect(await readdir(path.join(home, '.skills'))).toEqual(['report']);
  });

  it('gives the copied files, their folders and the mcporter config to the sandbox user, as the file tools do', async () => {
    await writeSkill(root, 'report', skillMarkdown('name: report\ndescription: Reports.\nmetadata:\n  mcp-servers: acme'), { 'scripts/make.sh': '#!/bin/sh\n' });
    const skill = (await catalogOf({ servers: new Map([['acme', stdioServer()]]) })).find('report') ?? skillFixture({ name: 'x' });
    const homeOwner = { uid: 4321, gid: 4322 };
    await callTool(createUseSkillTool({ skills: [skill], home, computer: { sandbox: idleSandbox({ homeOwner }), mcporterCommand: 'mcporter' } }), { name: 'report' });
    for (const entry of ['.skills', '.skills/report', '.skills/report/scripts', '.skills/report/scripts/make.sh', '.mcporter', '.mcporter/skill-report.json']) {
      expect(await stat(path.join(home, entry))).toMatchObject({ uid: homeOwner.uid, gid: homeOwner.gid });
    }
  });

  it('refuses to install through a .skills that is a symbolic link out of the home', async () => {
    await writeSkill(root, 'report', skillMarkdown('name: report\ndescription: Reports.'), { 'data.txt': 'x' });
    const outside = await tempFolder('skills-outside-');
    cleanups.push(outside.remove);
    await symlink(outside.folder, path.join(home, '.skills'));
    const skill = (await catalogOf()).find('report') ?? skillFixture({ name: 'x' });
    const tool = createUseSkillTool({ skills: [skill], home, computer: { sandbox: idleSandbox(), mcporterCommand: 'mcporter' } });
    await expect(callTool(tool, { name: 'report' })).rejects.toThrow('".skills" in the home folder is not a plain folder (a symbolic link or a file); remove it and use the skill again');
    expect(await readdir(outside.folder)).toEqual([]);
  });

  it('says the files are not available when the agent has no computer tools, and writes nothing', async () => {
    await writeSkill(root, 'report', skillMarkdown('name: report\ndescription: Reports.'), { 'a.md': 'a', 'b.md': 'b' });
    const skill = (await catalogOf()).find('report') ?? skillFixture({ name: 'x' });
    const result = await callTool(createUseSkillTool({ skills: [skill], home, computer: undefined }), { name: 'report' });
    expect(result.text).toContain('This skill comes with 2 files (a.md, b.md), but they are not available in this turn: it has no computer tools.');
    await expect(lstat(path.join(home, '.skills'))).rejects.toThrow(/ENOENT/);
  });

  it('writes a 0600 mcporter config with only the skill\'s servers and tells the model how to call them', async () => {
    const servers = new Map([
      ['acme', stdioServer('/usr/bin/node', { cwd: '/srv/acme', env: { ACME_TOKEN: 'from-the-mcp-config' } })],
      ['remote', { transport: 'http' as const, url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer configured' } }],
      ['unrelated', stdioServer('/usr/bin/other')],
    ]);
    await writeSkill(root, 'inventory', skillMarkdown('name: inventory\ndescription: Stock.\nmetadata:\n  mcp-servers: acme remote'));
    const skill = (await catalogOf({ servers })).find('inventory') ?? skillFixture({ name: 'x' });

    const offline = await callTool(createUseSkillTool({ skills: [skill], home, computer: { sandbox: idleSandbox(), mcporterCommand: 'mcporter' } }), { name: 'inventory' });
    const configFile = path.join(home, '.mcporter', 'skill-inventory.json');
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(home, '.mcporter'))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(configFile, 'utf8'))).toEqual({
      mcpServers: {
        acme: {
          command: ['/bin/sh', '-c', 'cd "$1" && shift && exec "$@"', 'sh', '/srv/acme', '/usr/bin/node', 'server.js'],
          env: { ACME_TOKEN: 'from-the-mcp-config' },
          lifecycle: 'ephemeral',
        },
      },
      imports: [],
    });
    expect(offline.text).toContain('mcporter list --config /home/agent/.mcporter/skill-inventory.json acme --schema');
    expect(offline.text).toContain('mcporter call --config /home/agent/.mcporter/skill-inventory.json acme.<tool> key=value');
    expect(offline.text).toContain('The MCP server "remote" cannot be used here: it is a Streamable HTTP server and commands here have no network (COMMAND_ALLOW_NETWORK is off).');
    expect(offline.details).toMatchObject({ mcpServers: ['acme', 'remote'], mcporterConfig: '/home/agent/.mcporter/skill-inventory.json' });

    const networked = await callTool(createUseSkillTool({ skills: [skill], home, computer: { sandbox: idleSandbox({ allowNetwork: true }), mcporterCommand: 'mcporter' } }), { name: 'inventory' });
    expect(networked.text).toContain('For the other server (remote), put its name in place of acme.');
    expect(networked.text).not.toContain('cannot be used here');
    const online = JSON.parse(await readFile(configFile, 'utf8'));
    expect(Object.keys(online.mcpServers)).toEqual(['acme', 'remote']);
    expect(online.mcpServers.remote).toEqual({ baseUrl: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer configured' }, lifecycle: 'ephemeral' });
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
  });

  it('replaces a symbolic link planted at the config path instead of writing through it', async () => {
    await writeSkill(root, 'inventory', skillMarkdown('name: inventory\ndescription: Stock.\nmetadata:\n  mcp-servers: acme'));
    const skill = (await catalogOf({ servers: new Map([['acme', stdioServer()]]) })).find('inventory') ?? skillFixture({ name: 'x' });
    const victim = path.join(home, 'victim.txt');
    await writeFile(victim, 'keep me');
    await mkdir(path.join(home, '.mcporter'), { mode: 0o700 });
    await symlink(victim, path.join(home, '.mcporter', 'skill-inventory.json'));
    await callTool(createUseSkillTool({ skills: [skill], home, computer: { sandbox: idleSandbox(), mcporterCommand: 'mcporter' } }), { name: 'inventory' });
    expect(await readFile(victim, 'utf8')).toBe('keep me');
    expect((await lstat(path.join(home, '.mcporter', 'skill-inventory.json'))).isSymbolicLink()).toBe(false);
  });

  it('says the MCP tools are unavailable without computer, without a sandbox, or without mcporter, with no config written', async () => {
    await writeSkill(root, 'inventory', skillMarkdown('name: inventory\ndescription: Stock.\nmetadata:\n  mcp-servers: acme'));
    const skill = (await catalogOf({ servers: new Map([['acme', stdioServer()]]) })).find('inventory') ?? skillFixture({ name: 'x' });
    const cases = [
      [undefined, 'they are called with mcporter through run_command, and this turn has no computer tools'],
      [{ sandbox: undefined, mcporterCommand: undefined }, 'this server has no command sandbox, so there is no run_command to call them with'],
      [{ sandbox: idleSandbox(), mcporterCommand: undefined }, 'the mcporter CLI is not installed on this server'],
    ] as const;
    for (const [computer, reason] of cases) {
      const result = await callTool(createUseSkillTool({ skills: [skill], home, computer }), { name: 'inventory' });
      expect(result.text).toContain(`This skill uses the MCP server "acme", whose tools are not available in this turn: ${reason}.`);
      expect(result.text).not.toContain('mcporter call');
    }
    await expect(lstat(path.join(home, '.mcporter'))).rejects.toThrow(/ENOENT/);
  });
});
