import type { WorkerAgentTool } from '../define-worker-tool.js';
import type { DeferredToolSet } from './deferred-tool-set.js';

export interface ResolvedToolPaths {
  /** Deferred tools the paths name, each once, in the order the paths name them. */
  readonly tools: readonly WorkerAgentTool[];
  /** Paths naming tools that are shown anyway (not deferred): nothing to load. */
  readonly alreadyShown: readonly string[];
  /** Paths that name nothing in this turn. */
  readonly unknown: readonly string[];
}

/**
 * Resolves the paths the model gave to `tool_search`. A path is a namespace (`calendar`: its
 * deferred tools), a tool in a namespace (`calendar.create_event`, or `calendar/create_event`),
 * a deferred tool outside any namespace (`send_fax`), or the name a tool is shown under
 * (`calendar__create_event` in emulated mode). Lookups go through `Map`s, so a path such as
 * `__proto__` or `constructor` names nothing.
 */
export function resolveToolPaths(options: {
  readonly paths: readonly string[];
  readonly set: DeferredToolSet;
  /** The tool a provider-visible name or identity stands for in this turn, deferred or not. */
  readonly lookupName: (name: string) => WorkerAgentTool | undefined;
}): ResolvedToolPaths {
  const { set } = options;
  const tools: WorkerAgentTool[] = [];
  const seen = new Set<WorkerAgentTool>();
  const alreadyShown: string[] = [];
  const unknown: string[] = [];
  const add = (tool: WorkerAgentTool): void => {
    if (seen.has(tool)) return;
    seen.add(tool);
    tools.push(tool);
  };
  for (const raw of options.paths) {
    const path = raw.trim().replace('/', '.');
    const namespace = set.namespaces.get(path);
    if (namespace !== undefined) {
      namespace.members.forEach(add);
      continue;
    }
    const tool = set.byIdentity.get(path) ?? options.lookupName(path) ?? options.lookupName(raw.trim());
    if (tool === undefined) unknown.push(raw);
    else if (tool.deferLoading) add(tool);
    else alreadyShown.push(raw);
  }
  return { tools, alreadyShown, unknown };
}
