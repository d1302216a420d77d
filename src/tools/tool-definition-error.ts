/** Thrown when a tool is defined wrongly: a programming error, found before any model call. */
export class ToolDefinitionError extends Error {
  readonly toolName: string;

  constructor(toolName: string, problem: string) {
    super(`tool "${toolName}": ${problem}`);
    this.name = 'ToolDefinitionError';
    this.toolName = toolName;
  }
}
