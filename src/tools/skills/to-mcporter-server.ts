import type { JsonObject } from '../../json.js';
import type { McpServerConfig } from '../mcp/mcp-config.js';

/** Runs the rest of its arguments in the folder given first: mcporter has no `cwd` field. */
const IN_FOLDER = 'cd "$1" && shift && exec "$@"';

/**
 * One `mcpServers` entry of a mcporter config (the Cursor/Claude shape mcporter reads), for a
 * server of the MCP config. Only what that config names goes in: the command, its arguments
 * and `env`, or the URL and `headers`; nothing of the service's own environment. mcporter starts
 * a stdio server in the config file's folder, so a configured `cwd` is entered by `/bin/sh`
 * first. `lifecycle: ephemeral` keeps mcporter from starting its keep-alive daemon.
 */
export function toMcporterServer(config: McpServerConfig): JsonObject {
  if (config.transport === 'http') {
    return { baseUrl: config.url, ...(Object.keys(config.headers).length === 0 ? {} : { headers: { ...config.headers } }), lifecycle: 'ephemeral' };
  }
  // The array form: with a string and no `args`, mcporter would split the string at spaces.
  const command = config.cwd === undefined ? [config.command, ...config.args] : ['/bin/sh', '-c', IN_FOLDER, 'sh', config.cwd, config.command, ...config.args];
  const entry: JsonObject = { command };
  if (Object.keys(config.env).length > 0) entry['env'] = { ...config.env };
  entry['lifecycle'] = 'ephemeral';
  return entry;
}
