import path from 'node:path';
import { z } from 'zod';
import type { JsonObject } from '../../json.js';
import type { CommandSandbox } from '../../sandbox/command-sandbox.js';
import { withAgentHomeLock } from '../computer/agent-home-lock.js';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import { installSkillFiles } from './install-skill-files.js';
import type { Skill } from './skill-catalog.js';
import { installedFilesNote, mcporterNote, unavailableFilesNote, unavailableMcpNote } from './skill-notes.js';
import { writeMcporterConfig } from './write-mcporter-config.js';

/** The most characters the list of skills takes in the tool description. */
export const SKILL_LIST_BUDGET_CHARS = 8_000;
/** No description in the list is cut shorter than this. */
const MIN_LISTED_DESCRIPTION_CHARS = 100;

export interface UseSkillParams {
  readonly name: string;
}

/** What the agent's computer tools offer a skill; absent when the agent has no `computer`. */
export interface UseSkillComputer {
  /** The command sandbox behind run_command; undefined when this server has none. */
  readonly sandbox: CommandSandbox | undefined;
  /** The shell words that start mcporter in that sandbox; undefined when it is not installed. */
  readonly mcporterCommand: string | undefined;
}

/**
 * `use_skill`: the progressive disclosure of Agent Skills. The description lists the enabled
 * skills (name and description); a call returns one skill's instructions, followed by where
 * its files are and how to call its MCP tools. With the computer tools, the files are copied
 * into the home (`.skills/<name>/`) and a skill's MCP servers get a mcporter config there, for
 * `run_command`; without them, the notes say what this turn cannot use.
 *
 * Parallel and read-only: nothing of the agent's own work changes; the writes are copies the
 * service owns and rebuilds on every use.
 */
export function createUseSkillTool(options: {
  /** The skills this agent enabled: at least one, names unique. */
  readonly skills: readonly Skill[];
  readonly home: string;
  readonly computer: UseSkillComputer | undefined;
}): WorkerAgentTool<UseSkillParams> {
  const { skills, home, computer } = options;
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  const names = [...byName.keys()];
  const [first, ...others] = names;
  if (first === undefined) throw new Error('use_skill needs at least one skill');
  // One install per skill per turn, shared by calls that run at the same time.
  const installs = new Map<string, Promise<string>>();

  const install = (skill: Skill, signal: AbortSignal): Promise<string> => {
    let pending = installs.get(skill.name);
    if (pending === undefined) {
            // Every write into the home takes its shared lock, like the file tools: never while a command of this agent runs.
      pending = withAgentHomeLock({ home, mode: 'shared', signal }, () => installSkillFiles({ home, skill, owner: computer?.sandbox?.homeOwner, signal }));
      installs.set(skill.name, pending);
      pending.catch(() => installs.delete(skill.name));
    }
    return pending;
  };

  return defineWorkerTool<UseSkillParams>({
    name: 'use_skill',
    description: useSkillDescription(skills),
    schema: z.object({ name: z.enum([first, ...others]).describe('The skill to open, one of those listed in the description.') }),
    // Strict: the provider itself keeps the model to the enabled names.
    strict: true,
    executionMode: 'parallel',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: (params) => `Opening skill ${params.name}`,
    describeCompletedActivity: (params) => `Opened skill ${params.name}`,
    async execute(params, context) {
      const { signal } = context;
      signal.throwIfAborted();
      const skill = byName.get(params.name);
      if (skill === undefined) throw new Error(`no skill named "${params.name}" is enabled for this agent; use one of: ${names.join(', ')}`);
      const sections = [skill.body.trim() === '' ? `# ${skill.name}\n\n${skill.description}` : skill.body.trimEnd()];
      const details: JsonObject = { skill: skill.name, files: skill.files.length, mcpServers: skill.mcpServers.map((server) => server.name) };

      if (skill.files.length > 0) {
        if (computer === undefined) {
          sections.push(unavailableFilesNote(skill.files));
        } else {
          const folder = await install(skill, signal);
          const homeInside = computer.sandbox?.homeInside;
          sections.push(installedFilesNote({ folder, folderInside: homeInside === undefined ? undefined : path.posix.join(homeInside, folder), files: skill.files }));
          details['filesFolder'] = folder;
        }
      }

      if (skill.mcpServers.length > 0) {
        const servers = skill.mcpServers.map((server) => server.name);
        if (computer === undefined) {
          sections.push(unavailableMcpNote({ servers, reason: 'they are called with mcporter through run_command, and this turn has no computer tools' }));
        } else if (computer.sandbox === undefined) {
          sections.push(unavailableMcpNote({ servers, reason: 'this server has no command sandbox, so there is no run_command to call them with' }));
        } else if (computer.mcporterCommand === undefined) {
          sections.push(unavailableMcpNote({ servers, reason: 'the mcporter CLI is not installed on this server' }));
        } else {
          const { sandbox } = computer;
          const setup = await withAgentHomeLock({ home, mode: 'shared', signal }, () =>
            writeMcporterConfig({ home, homeInside: sandbox.homeInside ?? home, skill, allowNetwork: sandbox.allowNetwork, owner: sandbox.homeOwner, signal }),
          );
          sections.push(mcporterNote({ command: computer.mcporterCommand, setup }));
          details['mcporterConfig'] = setup.configPath ?? null;
        }
      }
      return { content: sections.join('\n\n'), details };
    },
  });
}

/**
 * What the tool is for, then each skill as `- name: description`. When the list would pass
 * SKILL_LIST_BUDGET_CHARS, every description is cut to an equal share (never below 100
 * characters) so that all skills stay listed.
 */
export function useSkillDescription(skills: readonly Skill[]): string {
  const lines = skills.map((skill) => ({ name: skill.name, text: skill.description.replace(/\s+/g, ' ').trim() }));
  const fullLength = lines.reduce((total, line) => total + line.name.length + line.text.length + 5, 0);
  const share = Math.max(MIN_LISTED_DESCRIPTION_CHARS, Math.floor(SKILL_LIST_BUDGET_CHARS / Math.max(1, lines.length)));
  const listed = lines.map(({ name, text }) => {
    const room = share - name.length - 5;
    const shown = fullLength <= SKILL_LIST_BUDGET_CHARS || text.length <= room ? text : `${text.slice(0, Math.max(MIN_LISTED_DESCRIPTION_CHARS, room) - 1).trimEnd()}…`;
    return `- ${name}: ${shown}`;
  });
  return [
    'Open a skill: instructions for a kind of task, prepared for this agent. When the task at hand matches a skill below, ' +
      'call use_skill with its name before starting, then follow what it returns (it may point at files and MCP tools that come with the skill).',
    '',
    'Skills:',
    ...listed,
  ].join('\n');
}
