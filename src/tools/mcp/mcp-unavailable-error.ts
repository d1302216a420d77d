/** A configured MCP server that cannot serve tools right now (down, slow, failing); never a caller's fault. */
export class McpUnavailableError extends Error {
  readonly server: string;

  constructor(server: string, reason: string) {
    super(reason);
    this.name = 'McpUnavailableError';
    this.server = server;
  }
}
