import type { WorkerAgentTool } from './define-worker-tool.js';

/** Raised before any model call when two tools of a turn share an identity. */
export class DuplicateToolError extends Error {
  constructor(identity: string) {
    super(`two tools in this turn are both named "${identity}"; tool identities must be unique`);
    this.name = 'DuplicateToolError';
  }
}

/** A tool's identity within a turn: its namespace and name. */
export function toolIdentity(name: string, namespace?: string): string {
  return namespace === undefined ? name : `${namespace}.${name}`;
}

/**
 * Builds the name → tool map the loop dispatches through. A `Map` (not an object) so that a
 * model calling `__proto__` or `constructor` finds nothing.
 */
export function createToolMap(tools: readonly WorkerAgentTool[]): ReadonlyMap<string, WorkerAgentTool> {
  const map = new Map<string, WorkerAgentTool>();
  for (const tool of tools) {
    const identity = toolIdentity(tool.name, tool.namespace);
    if (map.has(identity)) throw new DuplicateToolError(identity);
    map.set(identity, tool);
  }
  return map;
}
