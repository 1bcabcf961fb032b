import { describe, expect, it } from 'vitest';
import { engineGaugesOf } from './engine-gauges.js';

const gauge = (name: string, ...series: Array<[string, number]>) =>
  `# HELP ${name} h\n# TYPE ${name} gauge\n${series.map(([labels, value]) => `${name}${labels} ${value}`).join('\n')}\n`;

describe('engineGaugesOf: the load figures of a Prometheus exposition', () => {
  it("reads vLLM's names, summing a family's series and averaging KV use", () => {
    const text =
      gauge('vllm:num_requests_waiting', ['{model_name="a",engine="0"}', 3], ['{model_name="a",engine="1"}', 2]) +
      gauge('vllm:num_requests_running', ['{model_name="a"}', 8]) +
      gauge('vllm:kv_cache_usage_perc', ['{engine="0"}', 0.5], ['{engine="1"}', 0.7]) +
      '# TYPE vllm:time_to_first_token_seconds histogram\nvllm:time_to_first_token_seconds_bucket{le="0.1"} 4\n';
    const gauges = engineGaugesOf(text);
    expect(gauges).toMatchObject({ waitingRequests: 5, runningRequests: 8 });
    expect(gauges.kvCacheUsage).toBeCloseTo(0.6);
  });

  it("reads vLLM's older gpu_cache_usage_perc, SGLang's and llama.cpp server's names", () => {
    expect(engineGaugesOf(gauge('vllm:gpu_cache_usage_perc', ['', 0.25]))).toEqual({ kvCacheUsage: 0.25 });
    expect(
      engineGaugesOf(
        gauge('sglang:num_queue_reqs', ['{tp_rank="0"}', 4]) +
          gauge('sglang:num_running_reqs', ['{tp_rank="0"}', 16]) +
          gauge('sglang:token_usage', ['{tp_rank="0"}', 0.9]),
      ),
    ).toEqual({ waitingRequests: 4, runningRequests: 16, kvCacheUsage: 0.9 });
    expect(
      engineGaugesOf(
        gauge('llamacpp:requests_deferred', ['', 1]) +
          gauge('llamacpp:requests_processing', ['', 2]) +
          gauge('llamacpp:kv_cache_usage_ratio', ['', 0.125]),
      ),
    ).toEqual({ waitingRequests: 1, runningRequests: 2, kvCacheUsage: 0.125 });
  });

  it('refuses text that is no exposition, or one without any of the names', () => {
    expect(() => engineGaugesOf('<html><body>{"not": "metrics"}</body></html>\n')).toThrow(
      /invalid line|no engine load figures/i,
    );
    expect(() => engineGaugesOf(gauge('process_cpu_seconds_total', ['', 12]))).toThrow(/no engine load figures/);
    expect(() => engineGaugesOf(gauge('vllm:num_requests_waiting', ['', Number.NaN]))).toThrow(
      /no engine load figures/,
    );
  });
});
