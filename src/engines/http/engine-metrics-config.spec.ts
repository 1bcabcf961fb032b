import { describe, expect, it } from 'vitest';
import { configProblemsOf, parseWithBuiltInKinds } from '../../../test/support/config-problems.js';
import type { HttpModelConfig } from './http-model-config.js';
import { jitteredWaitMs } from './metrics-scraper.js';

const httpModel = (more: Record<string, unknown>) => ({
  models: [{ name: 'm', engine: 'http', upstreams: ['http://127.0.0.1:8000/v1'], ...more }],
});

describe('engine state configuration', () => {
  it('takes routing load-aware, engineMetrics, loadAwareWeights and saturation, with their defaults', () => {
    const [model] = parseWithBuiltInKinds(
      httpModel({ routing: 'load-aware', saturation: { waitingRequests: 1 }, loadAwareWeights: { prefixAffinity: 5 } }),
    ).models as HttpModelConfig[];
    expect(model.routing).toBe('load-aware');
    expect(model.saturation).toMatchObject({ waitingRequests: 1 });
    expect(model.loadAwareWeights).toMatchObject({ waitingRequests: 1, runningRequests: 0.25, prefixAffinity: 5 });
    expect(model.engineMetrics).toBeUndefined();
  });

  it('refuses a saturation without a threshold, out-of-range thresholds and a metrics path with a host', () => {
    expect(configProblemsOf(httpModel({ saturation: {} })).join('\n')).toMatch(/saturation needs waitingRequests/);
    expect(configProblemsOf(httpModel({ saturation: { waitingRequests: 0 } })).length).toBeGreaterThan(0);
    expect(configProblemsOf(httpModel({ saturation: { kvCacheUsage: 1.5 } })).length).toBeGreaterThan(0);
    expect(() => parseWithBuiltInKinds(httpModel({ saturation: { kvCacheUsage: 0.9 } }))).not.toThrow();
    expect(configProblemsOf(httpModel({ engineMetrics: { path: 'http://x/metrics' } })).join('\n')).toMatch(
      /engineMetrics.path must be a path/,
    );
    expect(configProblemsOf(httpModel({ loadAwareWeights: { kvCacheUsage: -1 } })).length).toBeGreaterThan(0);
  });
});

describe('jitteredWaitMs', () => {
  it('draws each wait from 0.5 to 1.5 times the interval, so two gateways started together drift apart', () => {
    expect(jitteredWaitMs(200, () => 0)).toBe(100);
    expect(jitteredWaitMs(200, () => 0.5)).toBe(200);
    expect(jitteredWaitMs(200, () => 0.999)).toBeCloseTo(299.8);
    // Two gateways whose first readings were in step are apart after one wait (different draws).
    const first = jitteredWaitMs(250, () => 0.2);
    const second = jitteredWaitMs(250, () => 0.7);
    expect(Math.abs(first - second)).toBe(125);
  });
});
