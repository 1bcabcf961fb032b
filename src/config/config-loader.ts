import { readFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { parse as parseYaml } from 'yaml';
import { flattenValidationErrors } from '../errors/format-validation-errors.js';
import { resolveApiKeys } from './api-key-sources.js';
import { GatewayConfig } from './gateway-config.js';

const ENGINE_KINDS = ['stub', 'http', 'llama'];

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

export interface ConfigSources {
  /** A YAML file; when absent, the defaults (the `stub` model on 127.0.0.1:8000). */
  file?: string;
  host?: string;
  port?: number;
  /** `responses.encryptionKey` from outside the file (a secret store's environment variable). */
  responsesEncryptionKey?: string;
}

/** Reads, merges (file < flags) and validates the configuration. Throws ConfigError. */
export function loadConfig(sources: ConfigSources): GatewayConfig {
  let raw: unknown = {};
  const origin = sources.file ?? 'defaults';
  if (sources.file !== undefined) {
    let text: string;
    try {
      text = readFileSync(sources.file, 'utf8');
    } catch (error) {
      throw new ConfigError(origin, [`cannot read the file: ${(error as Error).message}`]);
    }
    try {
      raw = parseYaml(text) ?? {};
    } catch (error) {
      throw new ConfigError(origin, [`not valid YAML: ${(error as Error).message}`]);
    }
  }
  if (sources.responsesEncryptionKey !== undefined && typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const file = raw as { responses?: Record<string, unknown> };
    raw = { ...file, responses: { ...file.responses, encryptionKey: sources.responsesEncryptionKey } };
  }
  const config = parseConfig(raw, origin);
  if (sources.host !== undefined) config.server.host = sources.host;
  if (sources.port !== undefined) config.server.port = sources.port;
  return config;
}

/** Validates a plain object (a parsed YAML document) into a GatewayConfig; API key references must resolve. */
export function parseConfig(raw: unknown, origin = 'config'): GatewayConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(origin, ['the top level must be a mapping (server, keepalive, auth, models)']);
  }
  const models = (raw as { models?: unknown }).models;
  if (models !== undefined) {
    if (!Array.isArray(models) || models.length === 0) {
      throw new ConfigError(origin, ['models must be a non-empty list of model entries']);
    }
    const problems = models.flatMap((model: unknown, index) => {
      const engine = (model as { engine?: unknown } | null)?.engine;
      return ENGINE_KINDS.includes(engine as string)
        ? []
        : [`models[${index}].engine must be one of: ${ENGINE_KINDS.join(', ')} (got ${JSON.stringify(engine)})`];
    });
    if (problems.length > 0) throw new ConfigError(origin, problems);
  }

  const config = plainToInstance(GatewayConfig, raw, { exposeDefaultValues: true });
  const errors = validateSync(config, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) {
    throw new ConfigError(
      origin,
      flattenValidationErrors(errors).map((problem) => problem.message),
    );
  }
  const problems = resolveApiKeys(config.auth.apiKeys).problems;
  if (config.auth.limits !== undefined && config.auth.apiKeys.length === 0) {
    problems.push('auth.limits applies per API key: set auth.apiKeys too');
  }
  if (problems.length > 0) throw new ConfigError(origin, problems);
  return config;
}
