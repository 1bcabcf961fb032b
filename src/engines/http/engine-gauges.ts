import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** What one reading of a replica's `/metrics` says of its load; a figure its engine does not expose is absent. */
export interface EngineGauges {
  /** Requests waiting in the engine's own queue. */
  waitingRequests?: number;
  /** Requests the engine is working on. */
  runningRequests?: number;
  /** KV-cache use, 0 to 1. */
  kvCacheUsage?: number;
}

/**
 * The names each engine gives the three figures, in the order they are tried: vLLM (and its
 * older `gpu_cache_usage_perc`), SGLang, llama.cpp's server (`--metrics`).
 */
const GAUGE_NAMES: Record<keyof EngineGauges, readonly string[]> = {
  waitingRequests: ['vllm:num_requests_waiting', 'sglang:num_queue_reqs', 'llamacpp:requests_deferred'],
  runningRequests: ['vllm:num_requests_running', 'sglang:num_running_reqs', 'llamacpp:requests_processing'],
  kvCacheUsage: [
    'vllm:kv_cache_usage_perc',
    'vllm:gpu_cache_usage_perc',
    'sglang:token_usage',
    'llamacpp:kv_cache_usage_ratio',
  ],
};

/**
 * The load figures of a Prometheus text exposition (parsed by parse-prometheus-text-format). A
 * family with several series (one per served model, or per engine of a data-parallel server)
 * is summed, KV use averaged. Throws on text that is not an exposition or holds none of the
 * names: the replica is then treated as one without metrics.
 */
export function engineGaugesOf(text: string): EngineGauges {
  const families = new Map(parsePrometheusTextFormat(text).map((family) => [family.name, family]));
  const gauges: EngineGauges = {};
  for (const [figure, names] of Object.entries(GAUGE_NAMES) as Array<[keyof EngineGauges, readonly string[]]>) {
    for (const name of names) {
      const values = (families.get(name)?.metrics ?? [])
        .map((metric) => Number((metric as { value?: unknown }).value))
        .filter((value) => Number.isFinite(value) && value >= 0);
      if (values.length === 0) continue;
      const sum = values.reduce((total, value) => total + value, 0);
      gauges[figure] = figure === 'kvCacheUsage' ? Math.min(1, sum / values.length) : sum;
      break;
    }
  }
  if (Object.keys(gauges).length === 0) throw new Error('no engine load figures in the exposition');
  return gauges;
}
