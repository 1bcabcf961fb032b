/** A configuration that must not start: the message names each field at fault. */
export class ConfigError extends Error {
  constructor(
    readonly origin: string,
    readonly problems: string[],
  ) {
    super(`Invalid configuration (${origin}):\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}
