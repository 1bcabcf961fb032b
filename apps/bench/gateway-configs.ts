/** The mock's per-request behaviour header (apps/mock-upstream README). */
export const MOCK_BEHAVIOUR_HEADER = 'x-mock-behaviour';

/** Prefill long enough that nothing is generated while an idle-stream scenario holds its streams. */
export const ENDLESS_PREFILL_MS = 3_600_000;

export const PACED_TOKEN_INTERVAL_MS = 10;

/**
 * How the mock writes a stream's chunks when nothing paces them, and the HTTP model that asks for
 * it: in bursts (16 chunks a write, many to a socket read: what the mock does by default), or one
 * per write (`chunksPerWrite: 1`), as an engine that sends each token as it is made.
 */
export const UPSTREAM_WRITES = {
  bursts: { model: 'mock', behaviour: {} },
  'per-token': { model: 'mock-per-token', behaviour: { chunksPerWrite: 1 } },
} as const;
export type UpstreamWrites = keyof typeof UPSTREAM_WRITES;

/**
 * The models every benchmark gateway serves: the stub engine in-process and the HTTP engine on
 * the mock upstream, each fast (no delay), paced (10 ms between tokens) and idle (an endless
 * prefill), and the HTTP engine on a mock that writes one chunk per token. The mock's behaviour
 * rides in each model's headers.
 */
export function benchModels(mockUrl: string): Array<Record<string, unknown>> {
  const http = (name: string, behaviour?: Record<string, number>) => ({
    name,
    engine: 'http',
    upstreams: [mockUrl],
    ...(behaviour ? { headers: { [MOCK_BEHAVIOUR_HEADER]: JSON.stringify(behaviour) } } : {}),
  });
  return [
    { name: 'stub', engine: 'stub' },
    { name: 'stub-paced', engine: 'stub', tokenIntervalMs: PACED_TOKEN_INTERVAL_MS },
    { name: 'stub-idle', engine: 'stub', prefillMs: ENDLESS_PREFILL_MS },
    http('mock'),
    http(UPSTREAM_WRITES['per-token'].model, UPSTREAM_WRITES['per-token'].behaviour),
    http('mock-paced', { tokenIntervalMs: PACED_TOKEN_INTERVAL_MS }),
    http('mock-idle', { prefillMs: ENDLESS_PREFILL_MS }),
  ];
}

export interface GatewayConfigOptions {
  models: Array<Record<string, unknown>>;
  keepaliveMs?: number;
  /** Metrics on and tracing off: the defaults an operator gets. */
  observability?: 'default' | 'off' | { otlpEndpoint: string };
}

/**
 * A gateway configuration as a plain object (written as YAML; JSON is YAML). Logging stays at its
 * default level, `info`: one line per request, as in production.
 */
export function gatewayConfig(options: GatewayConfigOptions): Record<string, unknown> {
  const observability = options.observability ?? 'default';
  return {
    server: { host: '127.0.0.1', port: 0 },
    keepalive: { mode: 'chunks', intervalMs: options.keepaliveMs ?? 15_000 },
    observability:
      observability === 'default'
        ? {}
        : observability === 'off'
          ? { metrics: { enabled: false }, tracing: { exporter: 'none' } }
          : { metrics: { enabled: true }, tracing: { exporter: 'otlp', otlpEndpoint: observability.otlpEndpoint } },
    models: options.models,
  };
}

const WORDS = [
  'the',
  'gateway',
  'streams',
  'tokens',
  'from',
  'an',
  'upstream',
  'model',
  'to',
  'its',
  'clients',
  'quickly',
];

/** A user message of `count` words: the mock and the stub echo it, one word per chunk. */
export function promptOfWords(count: number): string {
  return Array.from({ length: count }, (_, index) => WORDS[index % WORDS.length]).join(' ');
}

/**
 * A Chat Completions body whose answer is `tokens` chunks long on the mock and the stub (they echo
 * the prompt word by word; `max_tokens` caps it). A real model gets `promptWords` words instead.
 */
export function chatBody(model: string, tokens: number, stream: boolean, promptWords = tokens): string {
  return JSON.stringify({
    model,
    messages: [{ role: 'user', content: promptOfWords(promptWords) }],
    max_tokens: tokens,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  });
}
