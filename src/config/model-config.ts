import { ArrayNotEmpty, IsArray, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Matches, Min } from 'class-validator';
import { MODEL_APIS, type ModelApi } from './model-apis.js';

export const QUEUE_ORDERS = ['fair', 'fifo'] as const;

/** `startTimeoutMs`'s default: room for a large local model loading from a slow disk. */
export const DEFAULT_START_TIMEOUT_MS = 300_000;

/**
 * Keys every model entry has, whatever its engine. An engine kind's config class extends it with
 * the kind's own keys (validated with class-validator, defaults as property initializers); a kind
 * without keys of its own validates its entries as this class.
 */
export class ModelConfigBase {
  /** The name clients send as `model`. */
  @IsString()
  @Matches(/^[\w.:/@-]+$/, { message: 'name may hold only letters, digits and . : / @ _ -' })
  name!: string;

  /** The engine kind that serves the model (`@EngineKind('name')`). */
  @IsString()
  @IsNotEmpty()
  engine!: string;

  /**
   * Requests running on the engine at once; more wait in the queue. Unset: the engine's own limit,
   * which is none for `stub` and `http` (every request goes to the engine at once, and an HTTP
   * upstream queues them itself), and the context's `sequences` for `llama`.
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  maxConcurrency?: number;

  /**
   * Requests allowed to wait for a slot (with `maxConcurrency`, or an engine limit); past it,
   * requests are refused (429) before their stream opens.
   */
  @IsInt()
  @Min(0)
  maxQueue: number = 1024;

  /** How long a request may wait in the queue before it fails in-band. Unset: as long as it takes. */
  @IsOptional()
  @IsInt()
  @Min(1)
  queueTimeoutMs?: number;

  /**
   * How waiting requests are admitted when the model is contended: `fair` (the next slot to the
   * tenant with the least service for its weight, strict priorities first) or `fifo` (arrival
   * order, whoever sent them).
   */
  @IsIn(QUEUE_ORDERS)
  queueOrder: (typeof QUEUE_ORDERS)[number] = 'fair';

  /**
   * The largest `max_tokens` (`max_completion_tokens`, `max_output_tokens`) a request may ask
   * for; larger ones get 400, and requests that ask for none get this ceiling.
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  maxTokensLimit?: number;

  /**
   * The APIs the model serves (vLLM serves one task per model: generation, embedding, scoring); a
   * request to another is a 400 in its API's shape. Unset: every API its engine can serve.
   */
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @IsIn(MODEL_APIS, { each: true })
  apis?: ModelApi[];

  /**
   * How long the engine kind's `create()` may take to build the model's engine, at start and on a
   * reload; past it the start (or the reload) is refused, naming the model and its kind.
   */
  @IsInt()
  @Min(1)
  startTimeoutMs: number = DEFAULT_START_TIMEOUT_MS;
}

/**
 * A model entry of the configuration: `name`, `engine`, the keys above, and its kind's own keys.
 * Once its kind validated it (model-entries.ts), it is an instance of the kind's config class.
 */
export type ModelConfig = ModelConfigBase;
