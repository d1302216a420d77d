/** Raised when the environment is wrong; names each variable and what is wrong with it. */
export class ConfigError extends Error {
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}
