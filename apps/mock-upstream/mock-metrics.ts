import type { ServerResponse } from 'node:http';
import type { MockBehaviour } from './mock-behaviour.js';
import type { MockPrefixCache } from './mock-prefix-cache.js';
import type { MockState } from './mock-upstream.js';

export interface MockMetricsSource {
  model: string;
  state: MockState;
  prefixCache: MockPrefixCache;
  /** The scheduler's limit: KV-cache use is the share of it running (0 without a limit). */
  maxRunning: number;
}

/** `GET /metrics`: vLLM's gauges and prefix-cache counters, or the failure the behaviour asks for. */
export function answerMetrics(response: ServerResponse, behaviour: MockBehaviour, source: MockMetricsSource): void {
  switch (behaviour.metricsFailure) {
    case 'missing':
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    case 'garbage':
      response.writeHead(200, { 'content-type': 'text/plain' }).end('<html><body>{"not": "metrics"} ¯\\_(ツ)_/¯\n');
      return;
    case 'slow':
      // Headers and nothing else: the reader must give up on its own.
      response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      response.flushHeaders();
      return;
    default:
      response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(metricsText(source));
  }
}

function metricsText({ model, state, prefixCache, maxRunning }: MockMetricsSource): string {
  const sample = (type: 'gauge' | 'counter', name: string, help: string, value: number) =>
    `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name}{model_name="${model}"} ${value.toFixed(type === 'gauge' && value < 1 && value > 0 ? 4 : 1)}\n`;
  const running = state.openRequests - state.waitingRequests;
  return (
    sample('gauge', 'vllm:num_requests_running', 'Number of requests in model execution batches.', running) +
    sample('gauge', 'vllm:num_requests_waiting', 'Number of requests waiting to be processed.', state.waitingRequests) +
    sample(
      'gauge',
      'vllm:kv_cache_usage_perc',
      'KV-cache usage. 1 means 100 percent usage.',
      maxRunning > 0 ? Math.min(1, running / maxRunning) : 0,
    ) +
    sample(
      'counter',
      'vllm:prefix_cache_queries_total',
      'Prefix cache queries, in terms of number of queried tokens.',
      prefixCache.queries,
    ) +
    sample(
      'counter',
      'vllm:prefix_cache_hits_total',
      'Prefix cache hits, in terms of number of cached tokens.',
      prefixCache.hits,
    )
  );
}
