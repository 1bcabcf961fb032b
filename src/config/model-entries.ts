import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { flattenValidationErrors } from '../errors/format-validation-errors.js';
import { ConfigError } from './config-error.js';
import { ModelConfigBase } from './model-config.js';
import { workerCount, type ServerConfig } from './server-config.js';

/** What validating a model entry needs to know of its engine kind: an `@EngineKind` provider's metadata. */
export interface ModelKind {
  readonly name: string;
  /** The class an entry of this kind is validated against: the kind's own keys and their defaults. */
  readonly config: new () => ModelConfigBase;
  /**
   * The engine holds its model in the process that runs it: with several workers each would load
   * its own copy (memory times the workers, decoders contending for the same cores), so refused.
   */
  readonly singleProcess: boolean;
}

/** The model served when the configuration lists none. */
export function defaultModels(): ModelConfigBase[] {
  return [Object.assign(new ModelConfigBase(), { name: 'stub', engine: 'stub' })];
}

/**
 * Checks what every model entry has (name, engine, admission limits) and that names are unique,
 * keeping each entry's other keys for its kind to check (`modelsByKind`): the kinds are known only
 * once the plugins have loaded.
 */
export function modelEntriesOf(raw: unknown): { entries: ModelConfigBase[]; problems: string[] } {
  if (!Array.isArray(raw) || raw.length === 0)
    return { entries: [], problems: ['models must be a non-empty list of model entries'] };
  const problems: string[] = [];
  const entries = raw.map((entry: unknown, index) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`models[${index}] must be a mapping (name, engine and the engine's own keys)`);
      return new ModelConfigBase();
    }
    const model = plainToInstance(ModelConfigBase, entry);
    problems.push(...problemsOf(model, `models[${index}]`, false));
    return model;
  });
  if (problems.length === 0 && new Set(entries.map((model) => model.name)).size < entries.length)
    problems.push('models must have unique names');
  return { entries, problems };
}

/**
 * Validates each entry against its kind's config class (unknown keys refused, defaults filled in)
 * and returns the entries as instances of those classes. Throws ConfigError naming each field at
 * fault, or, for an unknown kind, the kinds there are.
 */
export function modelsByKind(
  entries: readonly ModelConfigBase[],
  kinds: readonly ModelKind[],
  context: { origin: string; server: Pick<ServerConfig, 'workers'> },
): ModelConfigBase[] {
  const byName = new Map(kinds.map((kind) => [kind.name, kind]));
  const unknown = entries.flatMap((entry, index) =>
    byName.has(entry.engine)
      ? []
      : [
          `models[${index}].engine must be one of: ${[...byName.keys()].join(', ')} (got ${JSON.stringify(entry.engine)})`,
        ],
  );
  if (unknown.length > 0) throw new ConfigError(context.origin, unknown);

  const problems: string[] = [];
  const models = entries.map((entry, index) => {
    const model = plainToInstance(byName.get(entry.engine)!.config, { ...entry }, { exposeDefaultValues: true });
    problems.push(...problemsOf(model, `models[${index}]`, true));
    return model;
  });
  problems.push(...singleProcessProblems(models, byName, context.server));
  if (problems.length > 0) throw new ConfigError(context.origin, problems);
  return models;
}

function problemsOf(model: ModelConfigBase, path: string, whole: boolean): string[] {
  const errors = validateSync(model, whole ? { whitelist: true, forbidNonWhitelisted: true } : {});
  return flattenValidationErrors(errors, path).map((problem) => problem.message);
}

function singleProcessProblems(
  models: readonly ModelConfigBase[],
  kinds: ReadonlyMap<string, ModelKind>,
  server: Pick<ServerConfig, 'workers'>,
): string[] {
  const workers = workerCount(server);
  if (workers <= 1) return [];
  const counted = server.workers === 'auto' ? `auto, ${workers} cores here` : String(workers);
  return models
    .filter((model) => kinds.get(model.engine)?.singleProcess)
    .map(
      (model) =>
        `models: '${model.name}' runs on the ${model.engine} engine, which loads the model into each worker process: with server.workers ` +
        `${counted} it would be loaded ${workers} times. Serve ${model.engine} models with server.workers: 1, or from a server of their own as an http model.`,
    );
}
