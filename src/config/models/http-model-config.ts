import { ArrayNotEmpty, Equals, IsArray, IsBoolean, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, IsUrl, Matches, Min } from 'class-validator';
import { IsStringRecord } from '../string-record.validator.js';
import { ModelConfigBase } from './model-config-base.js';

/**
 * A fleet of OpenAI-compatible upstreams (vLLM, SGLang, llama.cpp server, TGI, Ollama) serving one
 * model. Requests are balanced by least outstanding requests over the healthy replicas.
 */
export class HttpModelConfig extends ModelConfigBase {
  @Equals('http')
  engine!: 'http';

  /** Base URLs of the replicas, including the API prefix: `http://10.0.0.5:8000/v1`. */
  @IsArray()
  @ArrayNotEmpty()
  @IsUrl(
    { require_tld: false, require_protocol: true, protocols: ['http', 'https'] },
    { each: true, message: 'upstreams must hold http(s) URLs such as http://10.0.0.5:8000/v1' },
  )
  upstreams!: string[];

  /** The model name the upstreams know; the gateway's `name` when absent. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  upstreamModel?: string;

  /** Sent as `Authorization: Bearer <apiKey>`. */
  @IsOptional()
  @IsString()
  apiKey?: string;

  /** Extra headers on every upstream request. */
  @IsOptional()
  @IsStringRecord()
  headers?: Record<string, string>;

  /**
   * How a client's non-streaming request is asked of the upstream: `json` (one JSON answer, the
   * cheapest for both; its timings cannot be split into prefill and decode unless the upstream
   * sends llama.cpp's `timings`; its headers come once it is whole, so the whole generation must
   * fit in `headersTimeoutMs`) or `stream` (the upstream streams and the gateway collects, so
   * bytes flow on the upstream connection during a long generation and timings are measured).
   */
  @IsIn(['json', 'stream'])
  nonStreaming: 'json' | 'stream' = 'json';

  /** Ask for vLLM's `continuous_usage_stats` (usage on every chunk); turn off for upstreams that refuse it. */
  @IsBoolean()
  continuousUsage: boolean = true;

  @IsInt()
  @Min(1)
  connectTimeoutMs: number = 5_000;

  /** Wait for the response headers; some upstreams send them only after prefill. 0: no limit. */
  @IsInt()
  @Min(0)
  headersTimeoutMs: number = 600_000;

  /** Longest silence between two body reads (a long prefill is silent). 0: no limit. */
  @IsInt()
  @Min(0)
  bodyTimeoutMs: number = 600_000;

  /** Period of the active health check of each replica. 0: passive checks only. */
  @IsInt()
  @Min(0)
  healthCheckIntervalMs: number = 5_000;

  /**
   * The path the health check GETs, resolved from the base URL as a link is: `/api/tags` from the
   * server's root (Ollama), `models` under the base URL. Absent: `/health` at the root (vLLM,
   * SGLang, llama.cpp, TGI), then `{base}/models` when that answers 4xx. A 2xx passes, a 5xx or no
   * answer fails; a replica no path vouches for (404 everywhere) is served on passive checks alone.
   */
  @IsOptional()
  @IsString()
  @Matches(/^(?![a-z][a-z0-9+.-]*:|\/\/)\S+$/i, {
    message: 'healthCheckPath must be a path such as /api/tags or models (no scheme, host or spaces)',
  })
  healthCheckPath?: string;

  @IsInt()
  @Min(1)
  healthCheckTimeoutMs: number = 2_000;

  /** Consecutive failed requests after which a replica is ejected. */
  @IsInt()
  @Min(1)
  maxFailures: number = 3;

  /** First ejection length; each further ejection doubles it, up to `ejectionMaxMs`. */
  @IsInt()
  @Min(1)
  ejectionBaseMs: number = 1_000;

  @IsInt()
  @Min(1)
  ejectionMaxMs: number = 60_000;
}
