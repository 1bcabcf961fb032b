import { NEVER, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { parseWithBuiltInKinds } from '../../../test/support/config-problems.js';
import { parsePrometheus, valueOf, type Sample } from '../../../test/support/prometheus.js';
import type { ModelConfig } from '../../config/model-config.js';
import type { EngineEvent } from '../../engine/engine-event.js';
import { InferenceEngine } from '../../engine/inference-engine.js';
import type { ReplicaReport } from '../../engine/replica-report.js';
import { ModelRegistry } from '../../models/model-registry.js';
import { GantryMetrics } from './gantry-metrics.js';

/** An engine of any kind with two replicas, whose counts a test sets. */
class FleetEngine extends InferenceEngine {
  requests = { a: 0, b: 0 };
  resumes = 0;
  generate(): Observable<EngineEvent> {
    return NEVER;
  }
  override replicaReport(): ReplicaReport {
    return {
      replicas: [
        { id: 'http://a:8000', healthy: true, inFlight: 1, requests: this.requests.a },
        { id: 'http://b:8000', healthy: false, inFlight: 0, requests: this.requests.b },
      ],
      resumes: this.resumes > 0 ? [{ replica: 'http://a:8000', reason: 'reset', count: this.resumes }] : [],
      resumeFailures: [{ reason: 'spent', count: 1 }],
    };
  }
}

const models = (...entries: Array<Record<string, unknown>>): ModelConfig[] =>
  parseWithBuiltInKinds({ models: entries.map((entry) => ({ engine: 'stub', ...entry })) }).models;

const settle = () => new Promise((resolve) => setImmediate(resolve));

async function scrape(metrics: GantryMetrics): Promise<Sample[]> {
  return parsePrometheus(await metrics.registry.metrics());
}

describe('replica metrics, read through the engine port', () => {
  it('show any engine’s replicas: health, in-flight, requests, resumes', async () => {
    const engine = new FleetEngine();
    engine.requests = { a: 3, b: 2 };
    engine.resumes = 1;
    const metrics = new GantryMetrics(new ModelRegistry([{ config: models({ name: 'fleet' })[0], engine }]));
    const samples = await scrape(metrics);
    const a = { model: 'fleet', replica: 'http://a:8000' };
    const b = { model: 'fleet', replica: 'http://b:8000' };
    expect(valueOf(samples, 'gantry_upstream_replica_healthy', a)).toBe(1);
    expect(valueOf(samples, 'gantry_upstream_replica_healthy', b)).toBe(0);
    expect(valueOf(samples, 'gantry_upstream_in_flight_requests', a)).toBe(1);
    expect(valueOf(samples, 'gantry_upstream_requests_total', a)).toBe(3);
    expect(valueOf(samples, 'gantry_upstream_requests_total', b)).toBe(2);
    expect(valueOf(samples, 'gantry_stream_resumes_total', { ...a, reason: 'reset' })).toBe(1);
    expect(valueOf(samples, 'gantry_stream_resume_failures_total', { model: 'fleet', reason: 'spent' })).toBe(1);
    expect(samples.some((sample) => sample.name === 'gantry_engine_waiting_requests')).toBe(false);
  });

  it('keep counting across a reload that replaces the engine, the replaced one’s final counts included; a removed model leaves', async () => {
    const first = new FleetEngine();
    first.requests = { a: 3, b: 2 };
    const registry = new ModelRegistry([{ config: models({ name: 'fleet' })[0], engine: first }]);
    const metrics = new GantryMetrics(registry);
    const release = registry.resolve('fleet').hold();

    const second = new FleetEngine();
    await registry.apply(models({ name: 'fleet', prefillMs: 5 }), async () => second);
    second.requests = { a: 1, b: 0 };
    // The replaced engine finishes its request, counting on, then closes.
    first.requests.a = 4;
    first.resumes = 2;
    const a = { model: 'fleet', replica: 'http://a:8000' };
    expect(valueOf(await scrape(metrics), 'gantry_upstream_requests_total', a)).toBe(5);
    release();
    await settle();
    expect(registry.openEngines).toBe(1);
    second.resumes = 1;

    const samples = await scrape(metrics);
    expect(valueOf(samples, 'gantry_upstream_requests_total', a)).toBe(5);
    expect(valueOf(samples, 'gantry_upstream_requests_total', { ...a, replica: 'http://b:8000' })).toBe(2);
    expect(valueOf(samples, 'gantry_stream_resumes_total', { ...a, reason: 'reset' })).toBe(3);
    expect(valueOf(samples, 'gantry_stream_resume_failures_total', { model: 'fleet', reason: 'spent' })).toBe(2);
    // Gauges are the serving engine's alone.
    expect(valueOf(samples, 'gantry_upstream_in_flight_requests', a)).toBe(1);

    await registry.apply(models({ name: 'other' }), async () => new FleetEngine());
    await settle();
    const after = await scrape(metrics);
    expect(after.filter((sample) => sample.labels.model === 'fleet')).toEqual([]);
  });
});
