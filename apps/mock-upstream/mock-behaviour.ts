/** Ways the mock can misbehave; see README.md. */
export const MOCK_FAILURES = ['status', 'drop', 'malformed', 'stall', 'drip', 'error'] as const;
export type MockFailure = (typeof MOCK_FAILURES)[number];

/**
 * How the mock answers. Set per server (options, `setBehaviour`, command-line flags) and per
 * request with the `x-mock-behaviour` header: a JSON object of these keys, merged over the
 * server's behaviour for that request only.
 */
export interface MockBehaviour {
  /** Silence after the response headers, before the first chunk (queueing and prefill). */
  prefillMs: number;
  /**
   * Prefill time per prompt token not found in the prefix cache, added to `prefillMs`; the server
   * computes one prefill at a time, so concurrent ones queue. With this or `prefixCacheTokens` set,
   * the prompt is counted as the mock renders it (see mock-prefix-cache.ts).
   */
  prefillPerTokenMs: number;
  /**
   * The server's prefix cache, in tokens per model (least recently used blocks evicted past it); 0:
   * none. Cached tokens are reported in `usage.prompt_tokens_details.cached_tokens`, and only the
   * rest of the prompt costs `prefillPerTokenMs`.
   */
  prefixCacheTokens: number;
  /** Delay between two chunks after the first. */
  tokenIntervalMs: number;
  /**
   * Without `tokenIntervalMs`: chunks written together before the mock yields (a 1 ms timer), so
   * that a reader gets them in bursts, many to a socket read; 1: each chunk its own write, the
   * next one on the next turn of the event loop, as an engine that sends each token as it is made.
   */
  chunksPerWrite: number;
  /** Answer `tokens` times `word` instead of echoing the last user message word by word. */
  tokens?: number;
  word: string;
  /** A text streamed as reasoning before the answer, one word per chunk. */
  reasoning?: string;
  /** The delta field reasoning travels in: vLLM's `reasoning` or llama.cpp's `reasoning_content`. */
  reasoningField: 'reasoning' | 'reasoning_content';
  /**
   * `deepseek_r1`: as vLLM's DeepSeek-R1 reasoning parser, output that never closes a think block
   * is reasoning: an answer with no reasoning of its own (a continuation) streams its content in
   * `reasoningField`.
   */
  reasoningParser?: 'deepseek_r1';
  failure?: MockFailure;
  /**
   * A request whose last user message contains this text gets `failureStatus` before the stream,
   * whatever `failure` says: an engine that chokes on one input (a template or input error).
   */
  poisonPrompt?: string;
  /** The status of `status` failures and the `code` of `error` frames. */
  failureStatus: number;
  /** Output chunks sent before a `drop`, `malformed`, `stall`, `drip` or `error` failure. */
  failAfterTokens: number;
  /**
   * Instead of `failAfterTokens`: positions in the whole answer where it breaks. A response fails
   * at the first position after where it starts (a continuation starts where its partial answer
   * ends) and does not fail when none is left, so `[3, 5]` cuts an answer after its third token and
   * its continuation after the fifth, and the second continuation finishes it.
   */
  failAtTokens?: number[];
  /**
   * What the message of a `status` or `error` failure quotes, as careless servers and proxies do:
   * the request's `headers` (as JSON), its last user message (`prompt`), or its bearer
   * credential in the spellings other servers echo one in (`encoded-key`: JSON with `\/` and
   * `\uXXXX` escapes, base64, base64url, inside a Basic credential, lowercase percent-encoding).
   */
  failureQuotes?: 'headers' | 'prompt' | 'encoded-key';
  /**
   * The model's context, in prompt tokens (as counted for `usage`): a longer prompt gets vLLM's 400
   * before any stream ("This model's maximum context length is N tokens. However, your request has
   * M input tokens. ..."). Absent: no limit.
   */
  maxModelLen?: number;
  /** `GET /health` answers 503. */
  unhealthy: boolean;
  /**
   * Requests the server runs at once, the rest waiting first come, first served (vLLM's
   * `max_num_seqs`); 0: no limit. The server's, not a request's (see mock-scheduler.ts).
   */
  maxRunning: number;
  /** `GET /metrics` misbehaves: answers 404 (`missing`), text that is no exposition (`garbage`), or never (`slow`). */
  metricsFailure?: 'missing' | 'garbage' | 'slow';
}

export const DEFAULT_BEHAVIOUR: MockBehaviour = {
  prefillMs: 0,
  prefillPerTokenMs: 0,
  prefixCacheTokens: 0,
  tokenIntervalMs: 0,
  chunksPerWrite: 16,
  word: 'token',
  reasoningField: 'reasoning',
  failureStatus: 500,
  failAfterTokens: 0,
  unhealthy: false,
  maxRunning: 0,
};

export const BEHAVIOUR_HEADER = 'x-mock-behaviour';

/**
 * Output chunks a response sends before its injected failure (`drop`, `malformed`, `stall`,
 * `error`), for a response whose answer starts `offset` steps into the whole answer; undefined
 * when it does not fail that way.
 */
export function failurePoint(behaviour: MockBehaviour, offset: number): number | undefined {
  if (behaviour.failure === undefined || behaviour.failure === 'status') return undefined;
  if (behaviour.failAtTokens === undefined) return behaviour.failAfterTokens;
  const at = behaviour.failAtTokens.find((position) => position > offset);
  return at === undefined ? undefined : at - offset;
}

/** The server's behaviour with a request's `x-mock-behaviour` hint merged over it. */
export function behaviourFor(base: MockBehaviour, hint: string | string[] | undefined): MockBehaviour {
  if (typeof hint !== 'string' || hint.length === 0) return base;
  const parsed: unknown = JSON.parse(hint);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${BEHAVIOUR_HEADER} must be a JSON object`);
  }
  return { ...base, ...(parsed as Partial<MockBehaviour>) };
}
