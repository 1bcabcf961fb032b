import { Counter, Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { GantryMetrics } from './gantry-metrics.js';
import { SeriesCounter, SeriesGauge } from './series-counter-gauge.js';
import { ModelRegistry } from '../../models/model-registry.js';

const config = (registry: Registry, name: string) => ({
  name,
  help: 'Things counted.',
  labelNames: ['model', 'api'] as const,
  registers: [registry],
});

describe('SeriesCounter and SeriesGauge', () => {
  it('expose exactly what prom-client’s Counter and Gauge expose for the same steps', async () => {
    const reference = new Registry();
    const fast = new Registry();
    const counter = new Counter(config(reference, 'things_total'));
    const gauge = new Gauge(config(reference, 'things_active'));
    const seriesCounter = new SeriesCounter(config(fast, 'things_total'));
    const seriesGauge = new SeriesGauge(config(fast, 'things_active'));

    const kept = seriesCounter.series({ model: 'a', api: 'chat' });
    for (const by of [1, 3, 0]) {
      counter.inc({ model: 'a', api: 'chat' }, by);
      kept.inc(by);
    }
    counter.inc({ model: 'b "x"', api: 'messages' });
    seriesCounter.inc({ model: 'b "x"', api: 'messages' });
    for (const labels of [
      { model: 'a', api: 'chat' },
      { model: 'a', api: 'chat' },
      { model: 'c', api: 'responses' },
    ]) {
      gauge.inc(labels);
      seriesGauge.inc(labels);
    }
    gauge.dec({ model: 'a', api: 'chat' });
    seriesGauge.dec({ model: 'a', api: 'chat' });
    gauge.dec({ model: 'c', api: 'responses' });
    seriesGauge.series({ api: 'responses', model: 'c' }).dec();

    expect(await fast.metrics()).toBe(await reference.metrics());
  });

  it('never lets a counter go down or take a non-finite step, where prom-client would throw inside a hook', () => {
    const series = new SeriesCounter(config(new Registry(), 'things_total')).series({ model: 'a', api: 'chat' });
    series.inc(2);
    for (const by of [-1, Number.NaN, Infinity]) series.inc(by);
    series.dec(1);
    expect(series.value).toBe(2);
  });
});

describe('GantryMetrics.route', () => {
  const metrics = new GantryMetrics(new ModelRegistry([]));

  it('resolves a route once and records into the same series as the label API', async () => {
    const route = metrics.route({ model: 'm', api: 'chat', engine: 'stub' });
    expect(metrics.route({ model: 'm', api: 'chat', engine: 'stub' })).toBe(route);
    expect(metrics.route({ model: 'm', api: 'messages', engine: 'stub' })).not.toBe(route);
    route.requests('completed', 200).inc();
    metrics.requests.inc({ model: 'm', api: 'chat', engine: 'stub', outcome: 'completed', status: '200' });
    route.requests('rejected', 404).inc();
    route.heartbeats.inc();
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'gantry_requests_total{model="m",api="chat",engine="stub",outcome="completed",status="200"} 2',
    );
    expect(text).toContain(
      'gantry_requests_total{model="m",api="chat",engine="stub",outcome="rejected",status="404"} 1',
    );
    expect(text).toContain('gantry_heartbeats_total{model="m",api="chat"} 1');
  });

  it('exposes only the series something was recorded into, as prom-client does', async () => {
    const route = metrics.route({ model: 'q', api: 'chat', engine: 'http' });
    route.requests('rejected', 404).inc();
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'gantry_requests_total{model="q",api="chat",engine="http",outcome="rejected",status="404"} 1',
    );
    expect(text).not.toMatch(
      /gantry_(active_requests|request_duration_seconds_count|inter_token_latency_seconds_count|heartbeats_total)\{model="q"/,
    );
  });

  it('after a registry reset, shows nothing until a route kept across it records again', async () => {
    const route = metrics.route({ model: 'r', api: 'messages', engine: 'stub' });
    route.active.inc();
    route.requestDuration.observe(0.2);
    metrics.registry.resetMetrics();
    expect(await metrics.registry.metrics()).not.toContain('model="r"');
    route.requestDuration.observe(0.3);
    route.active.inc();
    route.active.dec();
    const text = await metrics.registry.metrics();
    expect(text).toContain('gantry_request_duration_seconds_count{model="r",api="messages",engine="stub"} 1');
    expect(text).toContain('gantry_request_duration_seconds_sum{model="r",api="messages",engine="stub"} 0.3');
    expect(text).toContain('gantry_active_requests{model="r",api="messages",engine="stub"} 0');
  });
});
