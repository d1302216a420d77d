import path from 'node:path';
import type { JsonObject } from '../../json.js';
import { openHomePath, type HomeOwner } from '../computer/home-fs/open-home-path.js';
import { writeHomeFile } from '../computer/home-fs/write-home-file.js';
import { ensureHomeServiceFolder } from './ensure-home-service-folder.js';
import type { Skill } from './skill-catalog.js';
import { toMcporterServer } from './to-mcporter-server.js';

/** The folder of the home that holds the mcporter configs, one per skill. */
export const MCPORTER_FOLDER = '.mcporter';

export interface McporterSetup {
  /** The config file as commands see it (`/home/agent/.mcporter/skill-<name>.json`); undefined when no server can be reached. */
  readonly configPath: string | undefined;
  /** Servers in the config, in the skill's order. */
  readonly servers: readonly string[];
  /** Servers left out, and why. */
  readonly unreachable: readonly { readonly name: string; readonly reason: string }[];
}

/**
 * Writes the mcporter config of a skill into the agent home: `.mcporter/skill-<name>.json`,
 * mode 0600 in a 0700 folder, holding only the skill's servers and `"imports": []` (so
 * mcporter reads no editor configs). Rewritten atomically on every use, so it always matches
 * the MCP config and an edit by the agent does not last; the rename replaces a symbolic link
 * at that name instead of writing through it. The content depends only on the skill, so turns
 * of one agent that write it at once write the same bytes. Streamable HTTP servers go in only
 * when commands have the network; stdio servers run inside the sandbox.
 */
export async function writeMcporterConfig(options: {
  readonly home: string;
  /** The home as commands see it (`/home/agent`), or the host path when they run on the host. */
  readonly homeInside: string;
  readonly skill: Skill;
  readonly allowNetwork: boolean;
  /** Who the folder and the file belong to (the sandbox user when the service is root). */
  readonly owner?: HomeOwner | undefined;
  readonly signal: AbortSignal;
}): Promise<McporterSetup> {
  const { skill } = options;
  const mcpServers: JsonObject = {};
  const servers: string[] = [];
  const unreachable: { name: string; reason: string }[] = [];
  for (const { name, config } of skill.mcpServers) {
    if (config.transport === 'http' && !options.allowNetwork) {
      unreachable.push({ name, reason: 'it is a Streamable HTTP server and commands here have no network (COMMAND_ALLOW_NETWORK is off)' });
      continue;
    }
    mcpServers[name] = toMcporterServer(config);
    servers.push(name);
  }
  if (servers.length === 0) return { configPath: undefined, servers, unreachable };

  const fileName = `skill-${skill.name}.json`;
  const ensured = await ensureHomeServiceFolder({ home: options.home, name: MCPORTER_FOLDER, mode: 0o700, owner: options.owner });
  const target = await openHomePath({ home: options.home, requested: `${MCPORTER_FOLDER}/${fileName}`, followLast: false }).catch(async (error: unknown) => {
    await ensured.folder.close();
    throw error;
  });
  try {
    // The file goes into the very folder checked above, not into whatever took its name since.
    const [expected, actual] = await Promise.all([ensured.folder.handle.stat(), target.parent.handle.stat()]);
    if (expected.ino !== actual.ino || expected.dev !== actual.dev || target.missingFolders.length > 0) {
      throw new Error(`"${MCPORTER_FOLDER}" in the home folder changed while the config was written; use the skill again`);
    }
    await writeHomeFile({ target, content: `${JSON.stringify({ mcpServers, imports: [] }, null, 2)}\n`, how: 'replace', mode: 0o600, owner: options.owner, signal: options.signal });
  } finally {
    await target.close();
    await ensured.folder.close();
  }
  return { configPath: path.posix.join(options.homeInside, MCPORTER_FOLDER, fileName), servers, unreachable };
}
