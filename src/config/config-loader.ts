import { readFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { LineCounter, parseDocument } from 'yaml';
import { flattenValidationErrors } from '../errors/format-validation-errors.js';
import { resolveApiKeyEntries } from './api-key-entries.js';
import { ConfigError } from './config-error.js';
import { recordWarnings } from './config-warnings.js';
import { GatewayConfig } from './gateway-config.js';
import { modelEntriesOf, modelsByKind, type ModelKind } from './model-entries.js';
import { resolveRedisParts } from './redis-parts.js';
import { namedKeyProblems } from './tenant-config.js';

/** How a configuration is read: at start, or again by a reload. */
export interface LoadOptions {
  /**
   * Refuse a file without `models` (a reload): at start the default stub model serves, as the
   * start's own log line shows; a reload would silently replace the running models with it.
   */
  requireModels?: boolean;
}

export interface ConfigSources {
  /** A YAML file; when absent, the defaults (the `stub` model on 127.0.0.1:8000). */
  file?: string;
  host?: string;
  port?: number;
  /** `responses.encryptionKey` from outside the file (a secret store's environment variable). */
  responsesEncryptionKey?: string;
}

/**
 * Reads, merges (file < flags) and validates the configuration. Throws ConfigError. Each model
 * entry's own keys wait for its engine kind (`modelsByKind`), known once the plugins have loaded.
 */
export function loadConfig(sources: ConfigSources, options: LoadOptions = {}): GatewayConfig {
  return configFromText(sources.file === undefined ? undefined : readConfigText(sources.file), sources, options);
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
export function configFromText(
  text: string | undefined,
  sources: ConfigSources,
  { requireModels = false }: LoadOptions = {},
): GatewayConfig {
  let raw: unknown = {};
  const origin = sources.file ?? 'defaults';
  if (text !== undefined) {
    raw = parseYamlText(text, origin);
    // An empty file is not "the defaults": it is a file not written yet, or written over by mistake.
    if (raw === null || raw === undefined) {
      throw new ConfigError(
        origin,
        [
          'the file is empty: it must hold the configuration, at least the models to serve (start without --config for the defaults)',
        ],
        true,
      );
    }
    if (
      requireModels &&
      typeof raw === 'object' &&
      !Array.isArray(raw) &&
      (raw as { models?: unknown }).models === undefined
    ) {
      throw new ConfigError(
        origin,
        [
          'models is missing: a reload keeps serving the running models rather than fall back to the default stub; list the models to serve',
        ],
        true,
      );
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

/**
 * Validates a plain object (a parsed YAML document) into a GatewayConfig; API key references must
 * resolve. Each part on Redis gets its Redis resolved (`resolveRedisParts`; deprecated keys are
 * recorded as `startWarnings`). With `kinds`, each model entry is validated by its kind too (see
 * `modelsByKind`); without, only the keys every entry has.
 */
export function parseConfig(raw: unknown, origin = 'config', kinds?: readonly ModelKind[]): GatewayConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(origin, ['the top level must be a mapping (server, keepalive, auth, models)']);
  }
  const { models, ...rest } = raw as { models?: unknown };
  const config = plainToInstance(GatewayConfig, rest, { exposeDefaultValues: true });
  const problems = flattenValidationErrors(validateSync(config, { whitelist: true, forbidNonWhitelisted: true })).map(
    (problem) => problem.message,
  );
  if (models !== undefined) {
    const { entries, problems: entryProblems } = modelEntriesOf(models);
    config.models = entries;
    problems.push(...entryProblems);
  }
  if (problems.length > 0) throw new ConfigError(origin, problems);
  problems.push(...namedKeyProblems(config.auth.apiKeys));
  problems.push(...resolveApiKeyEntries(config.auth.apiKeys).problems);
  if (config.auth.limits !== undefined && config.auth.apiKeys.length === 0) {
    problems.push('auth.limits applies per API key: set auth.apiKeys too');
  }
  const redis = resolveRedisParts(config);
  problems.push(...redis.problems);
  if (problems.length > 0) throw new ConfigError(origin, problems);
  if (kinds !== undefined) config.models = modelsByKind(config.models, kinds, { origin, server: config.server });
  recordWarnings(config, redis.warnings);
  return config;
}

/**
 * A YAML text as plain data, or a ConfigError that says where it is not YAML by line and column
 * only: never the text around it (yaml's code frame), since the line may hold an API key, nor a
 * fragment of it (an alias's or a tag's name: a key may begin with `*` or `!`).
 */
function parseYamlText(text: string, origin: string): unknown {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const [error] = document.errors;
  if (error !== undefined) {
    const { line, col } = lineCounter.linePos(error.pos[0]);
    // yaml quotes what it read after a colon ("Unresolved tag: !x"): only the words before are kept.
    const what = error.message.split(': ')[0];
    throw new ConfigError(origin, [`not valid YAML at line ${line}, column ${col}: ${what} (${error.code})`], true);
  }
  try {
    return document.toJS();
  } catch (failure) {
    const message = (failure as Error | undefined)?.message ?? '';
    const why = message.startsWith('Unresolved alias')
      ? 'an alias (*name) names no anchor (&name) set before it'
      : message.startsWith('Excessive alias count')
        ? 'too many aliases (*name)'
        : 'not readable as data';
    throw new ConfigError(origin, [`not valid YAML: ${why}`], true);
  }
}
