/** A configuration that must not start: the message names each field at fault. */
export class ConfigError extends Error {
  constructor(
    readonly origin: string,
    readonly problems: string[],
    /** What a file caught while it is being written looks like (empty, not YAML yet, no models yet): worth reading again. */
    readonly unfinished = false,
  ) {
    super(`Invalid configuration (${origin}):\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}
