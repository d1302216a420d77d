/**
 * One value per agent, made on first use and kept for the most recently active agents only,
 * so a server that sees many agents keeps bounded memory.
 */
export class AgentCaches<T> {
  readonly #create: (agentId: string) => T;
  readonly #maxAgents: number;
  readonly #entries = new Map<string, T>();

  constructor(options: { create: (agentId: string) => T; maxAgents: number }) {
    this.#create = options.create;
    this.#maxAgents = options.maxAgents;
  }

  get(agentId: string): T {
    let value = this.#entries.get(agentId);
    if (value === undefined) {
      value = this.#create(agentId);
    } else {
      this.#entries.delete(agentId);
    }
    this.#entries.set(agentId, value);
    while (this.#entries.size > this.#maxAgents) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
    }
    return value;
  }
}
