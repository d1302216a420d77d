import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { EMPTY_MCP_CONFIG, type McpConfig } from '../../../src/tools/mcp/mcp-config.js';
import { SKILL_FILES_LIMITS } from '../../../src/tools/skills/list-skill-files.js';
import { loadSkillCatalog, MAX_SKILL_FILE_BYTES } from '../../../src/tools/skills/load-skill-catalog.js';
import { recordingLogger } from '../mcp/mcp-test-kit.js';
import { skillMarkdown, stdioServer, tempFolder, writeSkill } from './skill-test-kit.js';

describe('loadSkillCatalog', () => {
  let root: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ folder: root, remove } = await tempFolder('skills-catalog-'));
  });
  afterEach(async () => {
    await remove();
  });

  async function load(mcpConfig: McpConfig = EMPTY_MCP_CONFIG) {
    const log = recordingLogger();
    const catalog = await loadSkillCatalog({ folder: root, mcpConfig, logger: log.logger });
    return { catalog, warnings: log.warnings().map((record) => record.msg) };
  }

  it('loads each valid skill with its body and its files, sorted, without links or hidden entries', async () => {
    const folder = await writeSkill(root, 'release-notes', skillMarkdown('name: release-notes\ndescription: Writes release notes.', '# Release notes\n\nSee references/style.md.\n'), {
      'references/style.md': '# Style\n',
      'scripts/collect.sh': '#!/bin/sh\necho collected\n',
      '.hidden/secret.txt': 'not part of the skill',
    });
    await symlink('/etc/hostname', path.join(folder, 'linked.txt'));
    await writeSkill(root, 'code-review', skillMarkdown('name: code-review\ndescription: Reviews code.'));
    await writeFile(path.join(root, 'README.md'), 'A note beside the skills, not a skill.');
    await mkdir(path.join(root, '.git'));

    const { catalog, warnings } = await load();
    expect(warnings).toEqual([]);
    expect(catalog.names).toEqual(['code-review', 'release-notes']);
    const skill = catalog.find('release-notes');
    expect(skill).toMatchObject({ name: 'release-notes', description: 'Writes release notes.', body: '# Release notes\n\nSee references/style.md.\n', folder, mcpServers: [] });
    expect(skill?.files).toEqual([
      { path: 'references/style.md', bytes: 8, executable: false },
      { path: 'scripts/collect.sh', bytes: 25, executable: true },
    ]);
    expect(catalog.find('__proto__')).toBeUndefined();
  });

  it('skips a skill with bad front matter with one warning naming the file and the problem', async () => {
    await writeSkill(root, 'broken', '---\nname: broken\ndescription: [unclosed\n---\nbody');
    await writeSkill(root, 'fine', skillMarkdown('name: fine\ndescription: Works.'));
    const { catalog, warnings } = await load();
    expect(catalog.names).toEqual(['fine']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^skill skipped: ${path.join(root, 'broken', 'SKILL.md')}: its front matter is not valid YAML: `));
  });

  it('skips a skill whose name is not its folder name', async () => {
    await writeSkill(root, 'release-notes', skillMarkdown('name: changelog\ndescription: Writes changelogs.'));
    const { catalog, warnings } = await load();
    expect(catalog.size).toBe(0);
    expect(warnings).toEqual([`skill skipped: ${path.join(root, 'release-notes', 'SKILL.md')}: name: "changelog" must equal the folder name "release-notes"`]);
  });

  it('skips a skill without a description, or whose folder name is no valid skill name', async () => {
    await writeSkill(root, 'terse', skillMarkdown('name: terse'));
    await writeSkill(root, 'Bad Name', skillMarkdown('name: Bad Name\ndescription: D.'));
    const { catalog, warnings } = await load();
    expect(catalog.size).toBe(0);
    expect(warnings).toEqual([
      `skill skipped: ${path.join(root, 'Bad Name', 'SKILL.md')}: name: must be lowercase letters, digits and single hyphens, not starting or ending with a hyphen`,
      `skill skipped: ${path.join(root, 'terse', 'SKILL.md')}: description: expected string, received undefined`,
    ]);
  });

  it('skips a SKILL.md over 256 KiB, one that is not UTF-8, and a folder without SKILL.md', async () => {
    const padding = 'x'.repeat(MAX_SKILL_FILE_BYTES);
    await writeSkill(root, 'huge', skillMarkdown('name: huge\ndescription: Too long.', padding));
    await writeSkill(root, 'binary', undefined);
    await writeFile(path.join(root, 'binary', 'SKILL.md'), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0xfe, 0x0a]));
    await writeSkill(root, 'empty', undefined, { 'notes.md': 'no SKILL.md here' });
    const { catalog, warnings } = await load();
    expect(catalog.size).toBe(0);
    expect(warnings).toEqual([
      `skill skipped: ${path.join(root, 'binary', 'SKILL.md')}: SKILL.md is not valid UTF-8 text`,
      `skill skipped: ${path.join(root, 'empty', 'SKILL.md')}: the skill folder has no SKILL.md`,
      `skill skipped: ${path.join(root, 'huge', 'SKILL.md')}: SKILL.md is larger than 256 KiB; move detail into files beside it`,
    ]);
  });

  it('loads a body just under the limit whole', async () => {
    const frontMatter = 'name: big\ndescription: Big but allowed.';
    const body = 'y'.repeat(MAX_SKILL_FILE_BYTES - skillMarkdown(frontMatter, '').length);
    await writeSkill(root, 'big', skillMarkdown(frontMatter, body));
    const { catalog } = await load();
    expect(catalog.find('big')?.body).toHaveLength(body.length);
  });

  it('skips a skill with more files than allowed', async () => {
    const files = Object.fromEntries(Array.from({ length: SKILL_FILES_LIMITS.maxFiles + 1 }, (_, index) => [`data/${String(index)}.txt`, '']));
    await writeSkill(root, 'crowded', skillMarkdown('name: crowded\ndescription: Many files.'), files);
    const { catalog, warnings } = await load();
    expect(catalog.size).toBe(0);
    expect(warnings).toEqual([`skill skipped: ${path.join(root, 'crowded', 'SKILL.md')}: it has more than ${SKILL_FILES_LIMITS.maxFiles} files besides SKILL.md`]);
  });

  it('resolves MCP servers from the MCP config, and skips a skill naming one that is not configured', async () => {
    const acme = stdioServer();
    await writeSkill(root, 'inventory', skillMarkdown('name: inventory\ndescription: Stock.\nmetadata:\n  mcp-servers: acme'));
    await writeSkill(root, 'ghostly', skillMarkdown('name: ghostly\ndescription: Haunted.\nmetadata:\n  mcp-servers: acme ghost'));
    const { catalog, warnings } = await load({ servers: new Map([['acme', acme]]) });
    expect(catalog.names).toEqual(['inventory']);
    expect(catalog.find('inventory')?.mcpServers).toEqual([{ name: 'acme', config: acme }]);
    expect(warnings).toEqual([`skill skipped: ${path.join(root, 'ghostly', 'SKILL.md')}: metadata.mcp-servers: no MCP server named "ghost" is configured (MCP_CONFIG_FILE)`]);
  });

  it('stops start-up when SKILLS_DIR is missing or is a file', async () => {
    const log = recordingLogger();
    const missing = path.join(root, 'nope');
    await expect(loadSkillCatalog({ folder: missing, mcpConfig: EMPTY_MCP_CONFIG, logger: log.logger })).rejects.toThrow(ConfigError);
    await expect(loadSkillCatalog({ folder: missing, mcpConfig: EMPTY_MCP_CONFIG, logger: log.logger })).rejects.toThrow(`SKILLS_DIR ${missing}: the folder does not exist`);
    const file = path.join(root, 'file.txt');
    await writeFile(file, '');
    await expect(loadSkillCatalog({ folder: file, mcpConfig: EMPTY_MCP_CONFIG, logger: log.logger })).rejects.toThrow(`SKILLS_DIR ${file}: not a folder`);
  });
});
