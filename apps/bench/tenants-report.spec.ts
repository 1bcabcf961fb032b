import { describe, expect, it } from 'vitest';
import { QUICK_PROFILE } from './bench-options.js';
import type { BenchResults } from './bench-results.js';
import { checkTargets } from './targets.js';
import { renderTenants, tenantRatios } from './tenants-report.js';
import type { TenantsResults } from './tenants-scenario.js';

const summary = (mean: number, p99: number) => ({ count: 20, mean, p50: mean, p90: p99, p99, max: p99 });
const tenant = (mean: number, requests = 20) => ({
  requests,
  firstToken: summary(mean - 40, mean + 60),
  latency: summary(mean, mean + 100),
  gatewayQueueMs: mean - 45,
});

const tenants: TenantsResults = {
  plan: QUICK_PROFILE.tenants,
  unloaded: { firstToken: summary(5, 9), latency: summary(50, 70) },
  rows: [
    { order: 'fifo', quiet: tenant(1000, 3), noisy: tenant(1100, 60), failures: {} },
    { order: 'fair', quiet: tenant(90), noisy: tenant(1200, 50), failures: {} },
  ],
  scheduler: [
    { order: 'fifo', waiting: 10_000, tenants: 100, microsPerRequest: 0.8, comparisonsPerRequest: 0 },
    { order: 'fair', waiting: 10_000, tenants: 100, microsPerRequest: 1.9, comparisonsPerRequest: 13 },
  ],
};

describe('the tenants scenario in the report', () => {
  it('compares the quiet tenant with itself alone and with the noisy tenant, per order', () => {
    expect(tenantRatios(tenants)).toEqual([
      { order: 'fifo', quietVsAlone: 20, quietVsNoisy: 1000 / 1100 },
      { order: 'fair', quietVsAlone: 1.8, quietVsNoisy: 0.075 },
    ]);
    const { title, body } = renderTenants(tenants);
    expect(title).toContain('16 noisy streams beside one quiet client');
    expect(body).toContain('fair: quiet mean latency 1.80x alone, 0.07x the noisy tenant');
    expect(body).toMatch(/fair\s+10,000\s+100\s+1\.9\s+13/);
  });

  it('judges the fair target (within 2x alone) and reports the rest', () => {
    const checks = checkTargets({
      startedAt: '',
      profile: 'quick',
      durationMs: 1,
      machine: { cpus: 2, cpuModel: '', memoryBytes: 1, node: '', platform: '' },
      tenants,
    } as BenchResults);
    expect(checks.map((check) => [check.name, check.measured, check.met])).toEqual([
      ["quiet tenant mean latency under FIFO, vs the noisy tenant's", '0.91x', undefined],
      ['quiet tenant mean latency under a noisy one, fair queueing, vs alone', '1.80x', true],
      ['scheduler CPU per request, fifo, 10000 waiting', '0.80 µs', undefined],
      ['scheduler CPU per request, fair, 10000 waiting', '1.90 µs', undefined],
    ]);
  });
});
