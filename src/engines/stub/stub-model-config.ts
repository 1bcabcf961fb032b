import { Equals, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Min } from 'class-validator';
import { ModelConfigBase } from '../../config/model-config.js';

export const STUB_FAILURE_KINDS = ['overloaded', 'invalid_request', 'upstream', 'internal', 'timeout'] as const;

/** The built-in deterministic engine (no model): echoes the last user message word by word. */
export class StubModelConfig extends ModelConfigBase {
  @Equals('stub')
  override engine!: 'stub';

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
