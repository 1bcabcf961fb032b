import { ArrayNotEmpty, Equals, IsArray, IsBoolean, IsIn, IsInt, IsNotEmpty, IsNumber, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { IsStringRecord } from '../../config/string-record.validator.js';
import { ModelConfigBase } from '../../config/model-config.js';

export const ROUTING_POLICIES = ['least-outstanding', 'prefix-affinity'] as const;
export type RoutingPolicy = (typeof ROUTING_POLICIES)[number];

/**
 * A fleet of OpenAI-compatible upstreams (vLLM, SGLang, llama.cpp server, TGI, Ollama) serving one
 * model. Requests go to the healthy replicas by least outstanding requests, or by prefix affinity.
 */
export class HttpModelConfig extends ModelConfigBase {
  @Equals('http')
  override engine!: 'http';

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

  /**
   * How a request picks its replica: `least-outstanding` (the fewest requests in flight; ties take
   * turns) or `prefix-affinity` (the start of the prompt hashed onto the replicas, so the turns of
   * a conversation meet the prefix cache their earlier turns left; bounded by `routingLoadFactor`).
   */
  @IsIn(ROUTING_POLICIES, { message: `routing must be one of: ${ROUTING_POLICIES.join(', ')}` })
  routing: RoutingPolicy = 'least-outstanding';

  /**
   * Prefix affinity's load bound `c`: a replica already holding `ceil(c * mean)` outstanding
   * requests, the mean taken over the available replicas with the new request counted, passes the
   * request on to the next replica on the ring. Lower spreads load more evenly; higher keeps more
   * conversations on the replica that has their prefix.
   */
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'routingLoadFactor must be a number from 1 to 100' })
  @Min(1, { message: 'routingLoadFactor must be a number from 1 to 100' })
  @Max(100, { message: 'routingLoadFactor must be a number from 1 to 100' })
  routingLoadFactor: number = 1.25;

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
