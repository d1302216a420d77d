import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigError } from '../../config/config-error.js';
import type { McpConfig } from '../mcp/mcp-config.js';
import { listSkillFiles } from './list-skill-files.js';
import { parseSkillDocument } from './parse-skill-document.js';
import { SkillCatalog, type Skill } from './skill-catalog.js';

/** The largest SKILL.md read; the spec asks for under 500 lines, so this is generous. */
export const MAX_SKILL_FILE_BYTES = 256 * 1024;
/** More skill folders than this are left out (a warning says so). */
const MAX_SKILLS = 1_000;

type SkillOutcome = { readonly skill: Skill } | { readonly problem: string };

/**
 * Reads every `<folder>/<name>/SKILL.md` once, at start-up. A skill that cannot be used (bad
 * front matter, a name that is not its folder's, a body over 256 KiB, an MCP server that is not
 * configured …) is left out with one warning naming the file and every problem; the others load.
 * A SKILLS_DIR that is not a readable folder stops start-up, like a bad MCP_CONFIG_FILE.
 */
export async function loadSkillCatalog(options: { readonly folder: string; readonly mcpConfig: McpConfig; readonly logger: Logger }): Promise<SkillCatalog> {
  const { folder, mcpConfig, logger } = options;
  let entries: string[];
  try {
    if (!(await stat(folder)).isDirectory()) throw new ConfigError([`SKILLS_DIR ${folder}: not a folder`]);
    entries = await readdir(folder);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError([`SKILLS_DIR ${folder}: ${code === 'ENOENT' ? 'the folder does not exist' : `the folder cannot be read (${code ?? String(error)})`}`]);
  }
  const names = entries.filter((entry) => !entry.startsWith('.')).sort();
  if (names.length > MAX_SKILLS) logger.warn({ skillsDir: folder }, `SKILLS_DIR ${folder} has ${names.length} entries; only the first ${MAX_SKILLS} are read`);

  const skills: Skill[] = [];
  for (const name of names.slice(0, MAX_SKILLS)) {
    const skillFolder = path.join(folder, name);
    // A plain file beside the skill folders (a README) is not a skill.
    const isFolder = await stat(skillFolder).then((stats) => stats.isDirectory(), () => false);
    if (!isFolder) continue;
    const skillFile = path.join(skillFolder, 'SKILL.md');
    const outcome = await loadSkill({ folderName: name, skillFolder, skillFile, mcpConfig });
    if ('skill' in outcome) skills.push(outcome.skill);
    else logger.warn({ skillFile, problem: outcome.problem }, `skill skipped: ${skillFile}: ${outcome.problem}`);
  }
  logger.info({ skillsDir: folder, skills: skills.map((skill) => skill.name) }, `skills: ${skills.length} loaded from ${folder}`);
  return new SkillCatalog(skills);
}

async function loadSkill(options: { folderName: string; skillFolder: string; skillFile: string; mcpConfig: McpConfig }): Promise<SkillOutcome> {
  const { folderName, skillFolder, skillFile, mcpConfig } = options;
  const text = await readSkillFile(skillFile);
  if (typeof text !== 'string') return text;
  const parsed = parseSkillDocument(text);
  if (!parsed.ok) return { problem: parsed.problem };
  const { document } = parsed;
  const problems: string[] = [];
  if (document.name !== folderName) problems.push(`name: "${document.name}" must equal the folder name "${folderName}"`);
  const mcpServers = [];
  for (const serverName of document.mcpServerNames) {
    const config = mcpConfig.servers.get(serverName);
    if (config === undefined) problems.push(`metadata.mcp-servers: no MCP server named "${serverName}" is configured (MCP_CONFIG_FILE)`);
    else mcpServers.push({ name: serverName, config });
  }
  if (problems.length > 0) return { problem: problems.join('; ') };
  const files = await listSkillFiles(skillFolder).catch((error: unknown) => ({
    ok: false as const,
    problem: `its files cannot be listed (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
  }));
  if (!files.ok) return { problem: files.problem };
  return { skill: { name: document.name, description: document.description, body: document.body, folder: skillFolder, files: files.files, mcpServers } };
}

/** The file as UTF-8 text, at most MAX_SKILL_FILE_BYTES, or the problem with it. */
async function readSkillFile(skillFile: string): Promise<string | { problem: string }> {
  let handle;
  try {
    handle = await open(skillFile, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: code === 'ENOENT' ? 'the skill folder has no SKILL.md' : `SKILL.md cannot be read (${code ?? String(error)})` };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { problem: 'SKILL.md is not a regular file' };
    // Read one byte more than allowed: a file that grew since stat() is still caught.
    const buffer = Buffer.alloc(Math.min(stats.size, MAX_SKILL_FILE_BYTES) + 1);
    let bytesRead = 0;
    for (;;) {
      const chunk = await handle.read(buffer, bytesRead, buffer.length - bytesRead, bytesRead);
      if (chunk.bytesRead === 0) break;
      bytesRead += chunk.bytesRead;
      if (bytesRead === buffer.length) break;
    }
    if (stats.size > MAX_SKILL_FILE_BYTES || bytesRead > MAX_SKILL_FILE_BYTES) {
      return { problem: `SKILL.md is larger than ${MAX_SKILL_FILE_BYTES / 1024} KiB; move detail into files beside it` };
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, bytesRead));
    } catch {
      return { problem: 'SKILL.md is not valid UTF-8 text' };
    }
  } finally {
    await handle.close();
  }
}
