import { IsInt, IsNumber, IsOptional, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';

/** Where and how often each replica's Prometheus metrics are read (docs/engines.md#engine-state). */
export class EngineMetricsConfig {
  /** The metrics route, from the upstream's origin (vLLM, SGLang and llama.cpp's server: `/metrics`). */
  @IsString()
  @Matches(/^\/\S*$/, { message: 'engineMetrics.path must be a path from the server root, such as /metrics' })
  path: string = '/metrics';

  /** The mean time between two reads of one replica; each wait is drawn from ±50% of it so instances do not read in step. */
  @IsInt()
  @Min(20)
  @Max(60_000)
  intervalMs: number = 250;
}

const NUMBER = { allowNaN: false, allowInfinity: false };

/**
 * The weights of `routing: load-aware`: a replica's score is the weighted sum of its figures, the
 * lowest score takes the request (docs/engines.md#load-aware-routing). Units: one waiting request
 * weighs `waitingRequests`; so the defaults make a replica holding the prefix worth two waiting
 * requests, and a full KV cache worth four.
 */
export class LoadAwareWeightsConfig {
  @IsNumber(NUMBER)
  @Min(0)
  waitingRequests: number = 1;

  @IsNumber(NUMBER)
  @Min(0)
  runningRequests: number = 0.25;

  /** Per unit of use (0 to 1). */
  @IsNumber(NUMBER)
  @Min(0)
  kvCacheUsage: number = 4;

  /** Each request Gantry sent the replica since its last reading (it may be waiting there now). */
  @IsNumber(NUMBER)
  @Min(0)
  sentSinceScrape: number = 1;

  /** Taken off the score of the replica a conversation's prefix hashes to; bounded, so no pile-up. */
  @IsNumber(NUMBER)
  @Min(0)
  prefixAffinity: number = 2;
}

/**
 * When a model's requests wait in Gantry rather than in the engines' queues: while every replica
 * is at or past either threshold (docs/engines.md#saturation). At least one must be set.
 */
export class SaturationConfig {
  /** Requests waiting on a replica (its last reading plus Gantry's sends since) at which it has no room. */
  @ValidateIf((config: SaturationConfig) => config.waitingRequests !== undefined || config.kvCacheUsage === undefined)
  @IsInt({ message: 'saturation needs waitingRequests (an integer from 1) or kvCacheUsage (0 to 1), or both' })
  @Min(1)
  waitingRequests?: number;

  /** KV-cache use (0 to 1) at which a replica has no room. */
  @IsOptional()
  @IsNumber(NUMBER)
  @Min(0)
  @Max(1)
  kvCacheUsage?: number;
}
