import { readFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { parse as parseYaml } from 'yaml';
import { flattenValidationErrors } from '../errors/format-validation-errors.js';
import { resolveApiKeyEntries } from './api-key-entries.js';
import { GatewayConfig } from './gateway-config.js';
import { namedKeyProblems } from './tenant-config.js';
import { workerCount } from './server-config.js';

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
  return configFromText(sources.file === undefined ? undefined : readConfigText(sources.file), sources);
}

/** The configuration file's text, or a ConfigError naming the file. */
export function readConfigText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(file, [`cannot read the file: ${(error as Error).message}`]);
  }
}

/**
 * `loadConfig` for a file already read (`text`; undefined: no file, the defaults), so that a
 * process can validate a text and hand that very text to others (a reload across workers).
 */
export function configFromText(text: string | undefined, sources: ConfigSources): GatewayConfig {
  let raw: unknown = {};
  const origin = sources.file ?? 'defaults';
  if (text !== undefined) {
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
  const problems = namedKeyProblems(config.auth.apiKeys);
  problems.push(...resolveApiKeyEntries(config.auth.apiKeys).problems);
  if (config.auth.limits !== undefined && config.auth.apiKeys.length === 0) {
    problems.push('auth.limits applies per API key: set auth.apiKeys too');
  }
  problems.push(...llamaWorkerProblems(config), ...responseStoreWorkerProblems(config));
  if (problems.length > 0) throw new ConfigError(origin, problems);
  return config;
}

/**
 * The memory response store lives in the process that keeps it: with several workers each would
 * have its own, and a response kept by one would be unknown to the others (a `GET` or a
 * `previous_response_id` would find it or not depending on the connection). Refused, the
 * default included, so that no client meets that.
 */
function responseStoreWorkerProblems(config: GatewayConfig): string[] {
  const workers = workerCount(config.server);
  if (workers <= 1 || config.responses.store !== 'memory') return [];
  return [
    `responses.store: memory (the default) keeps stored responses in one process: with server.workers ${workers} each worker would ` +
      'keep its own, and a response kept by one would not be found by another. Set responses.store: redis (shared by every worker and ' +
      'replica), or off.',
  ];
}

/**
 * A llama model loads its weights into the process that runs it: with several workers each would
 * hold its own copy (memory times the workers) and their decoders would contend for the same
 * cores. Refused, so that an instance never multiplies a model by surprise.
 */
function llamaWorkerProblems(config: GatewayConfig): string[] {
  const workers = workerCount(config.server);
  if (workers <= 1) return [];
  const counted = config.server.workers === 'auto' ? `auto, ${workers} cores here` : String(workers);
  return config.models
    .filter((model) => model.engine === 'llama')
    .map(
      (model) =>
        `models: '${model.name}' runs on the llama engine, which loads the model into each worker process: with server.workers ` +
        `${counted} it would be loaded ${workers} times. Serve llama models with server.workers: 1, or from a llama.cpp server as an http model.`,
    );
}
