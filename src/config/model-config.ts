import { Equals, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Matches, Min } from 'class-validator';

/** Keys every model entry has, whatever its engine. */
export abstract class ModelConfigBase {
  /** The name clients send as `model`. */
  @IsString()
  @Matches(/^[\w.:/@-]+$/, { message: 'name may hold only letters, digits and . : / @ _ -' })
  name!: string;

  abstract engine: string;

  /** Requests running on the engine at once; more wait in the queue. Unlimited by default. */
  @IsOptional()
  @IsInt()
  @Min(1)
  maxConcurrency?: number;

  /** Requests allowed to wait for a slot; past it, requests are refused before their stream opens. */
  @IsOptional()
  @IsInt()
  @Min(0)
  maxQueue?: number;

  /** How long a request may wait in the queue before it fails in-band. */
  @IsOptional()
  @IsInt()
  @Min(1)
  queueTimeoutMs?: number;

  /**
   * The largest `max_tokens` (`max_completion_tokens`, `max_output_tokens`) a request may ask
   * for; larger ones get 400, and requests that ask for none get this ceiling.
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  maxTokensLimit?: number;
}

export const STUB_FAILURE_KINDS = ['overloaded', 'invalid_request', 'upstream', 'internal', 'timeout'] as const;

/** The built-in deterministic engine (no model): echoes the last user message word by word. */
export class StubModelConfig extends ModelConfigBase {
  @Equals('stub')
  engine!: 'stub';

  /** Delay before the first ack (the end of prefill). */
  @IsInt()
  @Min(0)
  prefillMs: number = 0;

  /** Delay between tokens. */
  @IsInt()
  @Min(0)
  tokenIntervalMs: number = 0;

  /** A text streamed as reasoning deltas before the answer. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  reasoning?: string;

  /** Fails the stream after this many tokens. */
  @IsOptional()
  @IsInt()
  @Min(0)
  failAfterTokens?: number;

  /** The kind of the injected failure. */
  @IsIn(STUB_FAILURE_KINDS)
  failWith: (typeof STUB_FAILURE_KINDS)[number] = 'internal';
}

export type ModelConfig = StubModelConfig;
export type EngineKind = ModelConfig['engine'];
