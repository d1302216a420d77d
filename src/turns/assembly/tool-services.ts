import type { Clock } from '../../clock.js';
import type { CommandSandbox } from '../../sandbox/command-sandbox.js';
import type { McpRegistry } from '../../tools/mcp/mcp-registry.js';
import type { SkillCatalog } from '../../tools/skills/skill-catalog.js';
import type { RunCommandSettings } from '../../tools/computer/run-command.js';
import type { TodoStore } from '../../store/todo-store.js';
import type { WebFetchCache } from '../../tools/web/fetch/web-fetch-cache.js';
import type { WebFetchSettings } from '../../tools/web/fetch/web-fetch-settings.js';
import type { SearchProvider } from '../../tools/web/search/search-provider.js';
import type { HostLookup } from '../../net/guarded-lookup.js';
import type { TaskTurnPreparer } from '../task-turn-preparer.js';
import type { ToolSources } from './tool-source.js';

/**
 * What tool creators need that outlives a turn: stores, the sandbox, providers, caches. Built
 * once at start-up; a missing part (no sandbox, no search provider) means its tools are absent.
 */
export interface ToolServices {
  readonly clock: Clock;
  readonly todoStore: TodoStore;
  /** The command sandbox; without one, `run_command` is absent. */
  readonly sandbox: CommandSandbox | undefined;
  readonly commandSettings: RunCommandSettings;
  readonly webFetch: {
    readonly settings: WebFetchSettings;
    /** Each agent's cache of recently fetched pages. */
    readonly cacheFor: (agentId: string) => WebFetchCache;
    /** Name resolution for fetches; the system resolver unless a test injects one. */
    readonly lookup?: HostLookup;
  };
  /** The configured web search provider; without one, `web_search` is absent. */
  readonly searchProvider: SearchProvider | undefined;
  /** The configured MCP servers (possibly none); agents opt into them by name. */
  readonly mcp: McpRegistry;
  readonly skills: {
    /** The skills of SKILLS_DIR (possibly none), loaded at start-up; agents enable them by name. */
    readonly catalog: SkillCatalog;
    /** How run_command starts mcporter (`mcporter` in the bubblewrap sandbox); undefined without a sandbox or mcporter. */
    readonly mcporterCommand: string | undefined;
  };
  /** The tools of features built on turns (schedules, background jobs, workflows, Brain), plugged in by runtime.ts. */
  readonly sources: ToolSources;
  /** Sets up workflow task turns (src/workflows); without it, a task turn is refused. */
  readonly taskTurns?: TaskTurnPreparer;
}
