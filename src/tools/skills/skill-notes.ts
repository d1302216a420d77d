import { formatBytes, formatCount } from '../../format/format-bytes.js';
import type { McporterSetup } from './write-mcporter-config.js';
import type { SkillFile } from './skill-catalog.js';

/** The most file paths listed after a skill's body; `list_files` shows the rest. */
const LISTED_FILES = 50;

/** Where a skill's files were installed, and how the model reaches them. */
export function installedFilesNote(options: { readonly folder: string; readonly folderInside: string | undefined; readonly files: readonly SkillFile[] }): string {
  const { folder, folderInside, files } = options;
  const lines = [
    '## Files of this skill',
    '',
    `The files of this skill are in \`${folder}/\` of your home folder${folderInside === undefined ? '' : ` (\`${folderInside}\` in run_command)`}; ` +
      'paths in the instructions above are relative to that folder. Read them with read_file; run scripts with run_command.',
    ...files.slice(0, LISTED_FILES).map((file) => `- ${folder}/${file.path} (${formatBytes(file.bytes)})`),
  ];
  if (files.length > LISTED_FILES) lines.push(`- … and ${files.length - LISTED_FILES} more (list_files ${folder})`);
  return lines.join('\n');
}

/** The files exist, but this turn has no tool to read them. */
export function unavailableFilesNote(files: readonly SkillFile[]): string {
  const names = files.slice(0, 5).map((file) => file.path).join(', ');
  return [
    '## Files of this skill',
    '',
    `This skill comes with ${formatCount(files.length, 'file')} (${names}${files.length > 5 ? ', …' : ''}), but they are not available in this turn: it has no computer tools.`,
  ].join('\n');
}

/** How to call the skill's MCP tools with mcporter through run_command. */
export function mcporterNote(options: { readonly command: string; readonly setup: McporterSetup }): string {
  const { command, setup } = options;
  const lines = ['## MCP tools of this skill', ''];
  const first = setup.servers[0];
  if (setup.configPath !== undefined && first !== undefined) {
    const config = `--config ${setup.configPath}`;
    lines.push(
      `This skill's tools come from the MCP ${setup.servers.length === 1 ? 'server' : 'servers'} ${setup.servers.map((name) => `"${name}"`).join(', ')}. ` +
        `They are not function tools: call them with the mcporter CLI through run_command, with this skill's config ${setup.configPath}.`,
      '',
      'See a server\'s tools and their parameters:',
      '```sh',
      `${command} list ${config} ${first} --schema`,
      '```',
      'Call a tool, with arguments as key=value (or a JSON object: --args \'{"key": "value"}\'):',
      '```sh',
      `${command} call ${config} ${first}.<tool> key=value`,
      '```',
    );
    const others = setup.servers.slice(1);
    if (others.length > 0) lines.push(`For the other ${others.length === 1 ? 'server' : 'servers'} (${others.join(', ')}), put ${others.length === 1 ? 'its' : 'their'} name in place of ${first}.`);
  }
  for (const { name, reason } of setup.unreachable) lines.push(`The MCP server "${name}" cannot be used here: ${reason}.`);
  return lines.join('\n');
}

/** The skill's MCP tools cannot be called in this turn, and why. */
export function unavailableMcpNote(options: { readonly servers: readonly string[]; readonly reason: string }): string {
  const { servers, reason } = options;
  return [
    '## MCP tools of this skill',
    '',
    `This skill uses the MCP ${servers.length === 1 ? 'server' : 'servers'} ${servers.map((name) => `"${name}"`).join(', ')}, ` +
      `whose tools are not available in this turn: ${reason}. Do what you can without them, and say what you could not do.`,
  ].join('\n');
}
