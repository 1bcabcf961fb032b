import { stringify } from 'yaml';
import { createGateway } from './bootstrap.js';
import { ConfigError } from './config/config-error.js';
import { loadConfig, parseConfig, type ConfigSources } from './config/config-loader.js';
import { startWarnings } from './config/config-warnings.js';
import type { GatewayConfig } from './config/gateway-config.js';
import type { ModelConfig } from './config/model-config.js';
import { maskedConfig } from './config/masked-config.js';
import { EngineKinds } from './engines/engine-kinds.js';

/** What `gantry check-config FILE` found in a file that a start would accept. */
export interface CheckedConfig {
  /** The effective configuration as YAML: defaults filled in, each model by its kind, secrets masked. */
  yaml: string;
  /** What a start from it would warn of (deprecated keys, an open gateway beyond loopback), and what a reload would refuse. */
  warnings: string[];
}

/**
 * Validates a configuration file as a start does (and a reload: the same checks), without
 * listening or starting an engine: the file read and validated, then each model entry by its
 * engine kind, plugins' included (the plugins are loaded and the gateway's modules built, as at
 * start, but the application is never started). Throws what a start throws: a ConfigError with
 * the same messages, or a plugin that cannot load.
 */
export async function checkConfig(sources: ConfigSources & { file: string }): Promise<CheckedConfig> {
  const config = loadConfig(sources);
  config.models = await modelsByTheirKinds(config, sources.file);
  return { yaml: stringify(maskedConfig(config)), warnings: [...startWarnings(config), ...reloadRefusals(sources)] };
}

/** What a reload refuses that a start takes (a file without `models`: a start serves the default stub). */
function reloadRefusals(sources: ConfigSources): string[] {
  try {
    loadConfig(sources, { requireModels: true });
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems.map((problem) => `a reload would refuse this file: ${problem}`);
  }
}

/**
 * The model entries validated by their engine kinds, as a start validates them: the gateway's
 * modules built, plugins included, never started. What would reach outside (Redis, a trace
 * exporter) or write logs is left out of the copy built: the kinds do not depend on it.
 */
async function modelsByTheirKinds(config: GatewayConfig, origin: string): Promise<ModelConfig[]> {
  const plain = JSON.parse(JSON.stringify(config)) as {
    observability: Sections;
    responses: Section;
    auth: Section & { limits?: Section };
  };
  const inert = parseConfig({
    ...plain,
    observability: {
      ...plain.observability,
      logging: { ...plain.observability.logging, level: 'silent' },
      tracing: { ...plain.observability.tracing, exporter: 'none' },
    },
    responses: { ...plain.responses, store: 'off' },
    auth: { ...plain.auth, ...(plain.auth.limits ? { limits: { ...plain.auth.limits, store: 'memory' } } : {}) },
  });
  const app = await createGateway(inert, { origin });
  try {
    return app.get(EngineKinds).parseModels(config, origin);
  } finally {
    await app.close();
  }
}

type Section = Record<string, unknown>;
type Sections = Record<string, Section>;
