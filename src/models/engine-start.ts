import { DEFAULT_START_TIMEOUT_MS, type ModelConfig } from '../config/model-config.js';
import type { InferenceEngine } from '../engine/inference-engine.js';

/** Builds the engine of a model entry (the engines' factory, or a test's). */
export type EngineFactory = (config: ModelConfig) => Promise<InferenceEngine>;

/** An engine that did not start: the start (or the reload) is refused with this message. */
export class EngineStartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EngineStartError';
  }
}

/**
 * The engine of `config`, built by `createEngine` within the entry's `startTimeoutMs`. Past it the
 * start (or the reload) is refused, naming the model and its kind: an engine kind whose `create()`
 * never settles must not hang a start or wedge every later reload. An engine that comes after all
 * is closed, unused.
 */
export async function startEngine(createEngine: EngineFactory, config: ModelConfig): Promise<InferenceEngine> {
  const timeoutMs = config.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  const creating = Promise.resolve().then(() => createEngine(config));
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      late = true;
      reject(
        new Error(
          `the engine kind '${config.engine}' did not create it within ${timeoutMs} ms (models[].startTimeoutMs)`,
        ),
      );
    }, timeoutMs);
  });
  try {
    return await Promise.race([creating, deadline]);
  } catch (error) {
    if (late)
      void creating.then(
        (engine) => engine.close(),
        () => undefined,
      );
    throw new EngineStartError(
      `The engine of model '${config.name}' could not start: ${(error as Error)?.message ?? String(error)}`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
  }
}
