import { Module } from '@nestjs/common';
import { ArrayNotEmpty, IsArray, IsInt, IsString } from 'class-validator';
import { Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCEPTED,
  EngineKind,
  InferenceEngine,
  ModelConfigBase,
  ZERO_USAGE,
  type EngineEvent,
  type EngineKindProvider,
  type ReplicaReport,
} from '../src/index.js';
import { startGateway, type RunningGateway } from './support/gateway.js';
import { scrape, valueOf } from './support/prometheus.js';

/** `engine: fleet`: a plugin's engine that spreads a model over the servers it names. */
class FleetModelConfig extends ModelConfigBase {
  @IsArray()
  @ArrayNotEmpty()
  @IsString({ each: true })
  replicas: string[] = [];

  /** Read by nothing: a reload that changes it builds a new engine. */
  @IsInt()
  generation: number = 1;
}

/** Answers each request "ok" from the next replica in turn, and reports them through the engine port. */
class FleetEngine extends InferenceEngine {
  private next = 0;
  private readonly sent = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly model: FleetModelConfig) {
    super();
  }

  generate(): Observable<EngineEvent> {
    return new Observable<EngineEvent>((subscriber) => {
      const replica = this.model.replicas[this.next++ % this.model.replicas.length];
      this.sent.set(replica, (this.sent.get(replica) ?? 0) + 1);
      this.inFlight.set(replica, (this.inFlight.get(replica) ?? 0) + 1);
      subscriber.next(ACCEPTED);
      subscriber.next({ type: 'text', text: 'ok' });
      subscriber.next({ type: 'done', finishReason: 'stop', usage: ZERO_USAGE });
      subscriber.complete();
      return () => this.inFlight.set(replica, this.inFlight.get(replica)! - 1);
    });
  }

  override replicaReport(): ReplicaReport {
    return {
      replicas: this.model.replicas.map((replica, index) => ({
        id: replica,
        healthy: index === 0,
        inFlight: this.inFlight.get(replica) ?? 0,
        requests: this.sent.get(replica) ?? 0,
      })),
    };
  }
}

@EngineKind('fleet', { config: FleetModelConfig })
class FleetEngineKind implements EngineKindProvider<FleetModelConfig> {
  create(model: FleetModelConfig): FleetEngine {
    return new FleetEngine(model);
  }
}

@Module({ providers: [FleetEngineKind] })
class FleetPluginModule {}

const A = 'http://a.internal:8000';
const B = 'http://b.internal:8000';

describe('a plugin engine with two replicas, on /metrics (the engine port’s replica report)', () => {
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway(
      { models: [{ name: 'fleet', engine: 'fleet', replicas: [A, B] }] },
      { plugins: [FleetPluginModule] },
    );
  });
  afterAll(() => gateway?.close());

  const ask = () =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fleet', messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('shows each replica’s health, requests and requests in flight, as the HTTP engine’s are', async () => {
    for (let sent = 0; sent < 3; sent += 1) expect((await ask()).status).toBe(200);
    const samples = await scrape(gateway.url);
    const a = { model: 'fleet', replica: A };
    const b = { model: 'fleet', replica: B };
    expect(valueOf(samples, 'gantry_upstream_requests_total', a)).toBe(2);
    expect(valueOf(samples, 'gantry_upstream_requests_total', b)).toBe(1);
    expect(valueOf(samples, 'gantry_upstream_replica_healthy', a)).toBe(1);
    expect(
      samples.find((sample) => sample.name === 'gantry_upstream_replica_healthy' && sample.labels.replica === B),
    ).toMatchObject({ value: 0 });
    expect(valueOf(samples, 'gantry_upstream_in_flight_requests', a)).toBe(0);
  });

  it('keeps the counts when a reload replaces the engine', async () => {
    const sent = async () => {
      const samples = await scrape(gateway.url);
      return [A, B].map((replica) => valueOf(samples, 'gantry_upstream_requests_total', { model: 'fleet', replica }));
    };
    const [beforeA, beforeB] = await sent();
    const [current] = gateway.registry.list();
    await gateway.registry.apply(
      [Object.assign(new FleetModelConfig(), current.config, { generation: 2 })],
      async (config) => new FleetEngine(config as FleetModelConfig),
    );
    expect(gateway.registry.list()[0].engine).not.toBe(current.engine);
    // The new engine starts from its first replica; the old one closed, idle, its counts kept.
    expect((await ask()).status).toBe(200);
    expect(await sent()).toEqual([beforeA + 1, beforeB]);
  });
});
