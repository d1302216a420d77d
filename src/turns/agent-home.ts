import { mkdirSync } from 'node:fs';
import path from 'node:path';

/** Where an agent's home is: DATA_DIR/agents/<agentId>/home. */
export function agentHomePath(options: { readonly dataDir: string; readonly agentId: string }): string {
  return path.join(options.dataDir, 'agents', options.agentId, 'home');
}

/**
 * Makes an agent's home if it is not there yet. Commands run as the sandbox's own unprivileged
 * user, who must be able to pass through the folders above the home (not list them): those are
 * 0711, the home itself 0700. Synchronous: a mkdir of folders that nearly always exist is a
 * page-cache lookup, cheaper than the thread pool's hand-offs (see tools/computer/home-fs/sync-call.ts).
 */
export function prepareAgentHome(home: string): void {
  mkdirSync(path.dirname(home), { recursive: true, mode: 0o711 });
  mkdirSync(home, { recursive: true, mode: 0o700 });
}
