import { ConfigError } from '../../src/config/config-error.js';
import { parseConfig } from '../../src/config/config-loader.js';
import type { GatewayConfig } from '../../src/config/gateway-config.js';
import { engineKindOf } from '../../src/engines/engine-kind.js';
import { BUILT_IN_ENGINE_KINDS } from '../../src/engines/engines.module.js';

/** The built-in engine kinds as the gateway finds them (read from their `@EngineKind`). */
export const BUILT_IN_KINDS = BUILT_IN_ENGINE_KINDS.map((kind) => engineKindOf(kind)!);

/** A configuration validated as a gateway with no plugin validates it, its models by their kinds included. */
export function parseWithBuiltInKinds(raw: unknown, origin = 'config'): GatewayConfig {
  return parseConfig(raw, origin, BUILT_IN_KINDS);
}

/** The problems a configuration is refused with (fails the test if it is accepted). */
export function configProblemsOf(raw: unknown): string[] {
  try {
    parseWithBuiltInKinds(raw);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
