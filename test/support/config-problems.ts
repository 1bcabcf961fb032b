import { ConfigError, parseConfig } from '../../src/config/config-loader.js';

/** The problems a configuration is refused with (fails the test if it is accepted). */
export function configProblemsOf(raw: unknown): string[] {
  try {
    parseConfig(raw);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
