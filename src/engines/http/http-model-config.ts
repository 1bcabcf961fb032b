import { Type } from 'class-transformer';
import {
  ArrayNotEmpty,
  Equals,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { IsStringRecord } from '../../config/string-record.validator.js';
import { ModelConfigBase } from '../../config/model-config.js';
import { EngineMetricsConfig, LoadAwareWeightsConfig, SaturationConfig } from './engine-metrics-config.js';
import { MidStreamFailoverConfig } from './mid-stream-failover-config.js';

export const ROUTING_POLICIES = ['least-outstanding', 'prefix-affinity', 'load-aware'] as const;

/** The fields Gantry writes into an upstream request itself; `disableReasoningWith` may not name them. */
export const GANTRY_UPSTREAM_FIELDS = [
  'model',
  'messages',
  'stream',
  'stream_options',
  'max_tokens',
  'temperature',
  'top_p',
  'top_k',
  'seed',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'response_format',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
] as const;
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
   * Fields added to the upstream request when the client did not ask for reasoning (a Messages
   * request without `thinking` enabled, `reasoning_effort: none`), so that the model does not
   * spend tokens on reasoning nobody will read: `{chat_template_kwargs: {enable_thinking: false}}`
   * for Qwen3-style templates on vLLM, SGLang or llama.cpp's server.
   * Absent: requests go as they came (an upstream that refuses unknown fields stays served).
   */
  @IsOptional()
  @IsExtraUpstreamFields()
  disableReasoningWith?: Record<string, unknown>;

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
   * a conversation meet the prefix cache their earlier turns left; bounded by `routingLoadFactor`)
   * or `load-aware` (the lowest weighted score of the engines' own figures, read from their metrics,
   * see `loadAwareWeights`).
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

  /** The weights of `routing: load-aware`. */
  @ValidateNested()
  @Type(() => LoadAwareWeightsConfig)
  loadAwareWeights: LoadAwareWeightsConfig = new LoadAwareWeightsConfig();

  /**
   * Each replica's Prometheus metrics, read for its waiting and running requests and KV-cache use.
   * Absent: read at `/metrics` every 250 ms when `routing` is `load-aware` or `saturation` is set,
   * not at all otherwise.
   */
  @IsOptional()
  @ValidateNested()
  @Type(() => EngineMetricsConfig)
  engineMetrics?: EngineMetricsConfig;

  /** Hold requests in Gantry's queue while every replica is at or past a threshold. Absent: never held. */
  @IsOptional()
  @ValidateNested()
  @Type(() => SaturationConfig)
  saturation?: SaturationConfig;

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

  /**
   * The longest one answer may take in all, from the request to its end, retries and continuations
   * included; past it the answer ends with a `timeout_error` (in-band once streaming). 0: no limit.
   */
  @IsInt()
  @Min(0)
  answerTimeoutMs: number = 1_800_000;

  /** The longest SSE line of a streamed upstream answer; past it the answer is refused as malformed. */
  @IsInt()
  @Min(1024)
  maxUpstreamLineBytes: number = 1_048_576;

  /** The largest upstream answer body (one attempt); past it the answer ends with an error. */
  @IsInt()
  @Min(1024)
  maxUpstreamAnswerBytes: number = 67_108_864;

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

  /** Continuing an answer on another replica when its own fails mid-answer (see MidStreamFailoverConfig). */
  @ValidateNested()
  @Type(() => MidStreamFailoverConfig)
  midStreamFailover: MidStreamFailoverConfig = new MidStreamFailoverConfig();
}

/** A non-empty mapping of request fields that Gantry does not write itself (`disableReasoningWith`). */
function IsExtraUpstreamFields(): PropertyDecorator {
  const own = new Set<string>(GANTRY_UPSTREAM_FIELDS);
  return ValidateBy({
    name: 'isExtraUpstreamFields',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.keys(value).length > 0 &&
        Object.keys(value).every((key) => !own.has(key)),
      defaultMessage: (args) =>
        `${args?.property} must be a mapping of request fields such as { chat_template_kwargs: { enable_thinking: false } }, none of Gantry's own (${GANTRY_UPSTREAM_FIELDS.join(', ')})`,
    },
  });
}
