import type { TodoStore } from '../../tools/todo/todo-store.js';
import type { SearchProvider } from '../../tools/web/search/search-provider.js';

/**
 * What tool creators need that outlives a turn: stores, the sandbox, providers, caches. Built
 * once at start-up; a missing part (no sandbox, no search provider) means its tools are absent.
 */
export interface ToolServices {
  readonly todoStore: TodoStore;
  /** The configured web search provider; without one, `web_search` is absent. */
  readonly searchProvider: SearchProvider | undefined;
}

/** A source the agent asked for that this server cannot serve: it contributes no tool. */
export interface UnavailableSource {
  readonly source: string;
  readonly reason: string;
}
