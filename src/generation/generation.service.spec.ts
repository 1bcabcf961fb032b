import { Observable, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { generationRequest } from '../../test/support/requests.js';
import { ApiKeyRing } from '../auth/api-key-ring.js';
import { KeyLimiter } from '../auth/key-limiter.js';
import { MemoryLimitStore } from '../auth/memory-limit-store.js';
import { parseConfig } from '../config/config-loader.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import { ModelConfigBase, type ModelConfig } from '../config/model-config.js';
import { makeTimings, type EngineEvent } from '../engine/engine-event.js';
import { InferenceEngine } from '../engine/inference-engine.js';
import { ModelRegistry } from '../models/model-registry.js';
import { GenerationTelemetry } from '../observability/generation-telemetry.js';
import { GantryMetrics } from '../observability/metrics/gantry-metrics.js';
import { GenerationService } from './generation.service.js';

/** An engine whose events the test pushes by hand. */
class ManualEngine extends InferenceEngine {
  readonly events = new Subject<EngineEvent>();
  closed = false;
  constructor(readonly promptTokens = 0) {
    super();
  }
  generate(): Observable<EngineEvent> {
    return this.events;
  }
  override async countPromptTokens(): Promise<number> {
    return this.promptTokens;
  }
  override async close(): Promise<void> {
    this.closed = true;
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
/** A model entry with the defaults of the keys every entry has, as the configuration gives it. */
const modelConfig = (fields: Partial<ModelConfig> & Record<string, unknown>): ModelConfig =>
  Object.assign(new ModelConfigBase(), fields);

function serviceWith(engine: InferenceEngine, model: Partial<ModelConfig> = {}) {
  const config = modelConfig({ name: 'manual', engine: 'stub', maxConcurrency: 1, ...model });
  return new GenerationService(new ModelRegistry([{ config, engine }]), { limits: {} } as GatewayConfig);
}

describe('GenerationService.accept', () => {
  it('records acceptance at once and admission when a slot is free, in the telemetry it was given', async () => {
    const engine = new ManualEngine();
    const service = serviceWith(engine, { maxConcurrency: 1 });
    const first = new GenerationTelemetry('messages');
    const second = new GenerationTelemetry('messages');
    const running = (
      await service.accept(generationRequest({ model: 'manual' }), { telemetry: first, stream: false })
    ).events$.subscribe();
    const queued = await service.accept(generationRequest({ model: 'manual' }), { telemetry: second, stream: true });

    expect(first).toMatchObject({ api: 'messages', accepted: true, model: 'manual', engine: 'stub', stream: false });
    expect(first.admittedAt).toBeDefined();
    const waiting = queued.events$.subscribe();
    expect(second).toMatchObject({ accepted: true, stream: true });
    expect(second.admittedAt).toBeUndefined();
    running.unsubscribe();
    expect(second.admittedAt).toBeDefined();
    waiting.unsubscribe();
  });

  it('names the model in the telemetry of a request it refuses', async () => {
    const engine = new ManualEngine();
    const telemetry = new GenerationTelemetry('chat');
    const service = serviceWith(engine, { maxConcurrency: 1, maxQueue: 0 });
    (
      await service.accept(generationRequest({ model: 'manual' }), {
        telemetry: new GenerationTelemetry('chat'),
        stream: true,
      })
    ).events$.subscribe();

    await expect(service.accept(generationRequest({ model: 'manual' }), { telemetry, stream: true })).rejects.toThrow(
      /queue is full/,
    );
    expect(telemetry).toMatchObject({ model: 'manual', engine: 'stub', accepted: false });
  });
});

describe('GenerationService and hidden reasoning', () => {
  const usage = { promptTokens: 2, completionTokens: 3, cachedTokens: 0, reasoningTokens: 2 };
  const generation: EngineEvent[] = [
    { type: 'reasoning', text: 'hm' },
    { type: 'reasoning', text: ' so' },
    { type: 'text', text: 'yes' },
    { type: 'done', finishReason: 'stop', usage },
  ];

  it.each([
    ['hide', generation.slice(2)],
    ['show', generation],
    [undefined, generation],
  ] as const)(
    'reasoningOutput %s: the events the client is to see, usage unchanged',
    async (reasoningOutput, expected) => {
      const engine = new ManualEngine();
      const accepted = await serviceWith(engine).accept(generationRequest({ model: 'manual', reasoningOutput }), {
        telemetry: new GenerationTelemetry('messages'),
        stream: true,
      });
      const seen: EngineEvent[] = [];
      accepted.events$.subscribe((event) => seen.push(event));
      for (const event of generation) engine.events.next(event);
      expect(seen).toEqual(expected);
    },
  );

  it('hides a reasoning piece that carries the counters, but passes them on as an ack', async () => {
    const engine = new ManualEngine();
    const accepted = await serviceWith(engine).accept(generationRequest({ model: 'manual', reasoningOutput: 'hide' }), {
      telemetry: new GenerationTelemetry('messages'),
      stream: true,
    });
    const seen: EngineEvent[] = [];
    accepted.events$.subscribe((event) => seen.push(event));
    const counters = {
      usage: { ...usage, completionTokens: 1, reasoningTokens: 1 },
      timings: makeTimings({ promptN: 2, promptMs: 5, predictedN: 1, predictedMs: 0 }),
    };
    engine.events.next({ type: 'reasoning', text: 'hm', ...counters });
    engine.events.next({ type: 'reasoning', text: ' so' });
    expect(seen).toEqual([{ type: 'ack', ...counters }]);
  });
});

describe('GenerationService across a reload', () => {
  const manual = (name: string) => modelConfig({ name, engine: 'stub' });

  it('keeps an accepted request on the engine it was accepted on; the next one gets the new engine, and the old one closes after the first ends', async () => {
    const before = new ManualEngine(11);
    const after = new ManualEngine(22);
    const registry = new ModelRegistry([{ config: manual('m'), engine: before }]);
    const service = new GenerationService(registry, { limits: {} } as GatewayConfig);
    const request = generationRequest({ model: 'm' });
    const early = await service.accept(request, { telemetry: new GenerationTelemetry('messages'), stream: true });

    await registry.apply([modelConfig({ ...manual('m'), prefillMs: 1 })], async () => after);

    expect(await service.countPromptTokens(request)).toBe(11);
    const seen: string[] = [];
    const running = early.events$.subscribe((event) => seen.push(event.type === 'text' ? event.text : event.type));
    before.events.next({ type: 'text', text: 'old engine' });
    after.events.next({ type: 'text', text: 'new engine' });
    expect(seen).toEqual(['old engine']);

    const late = await service.accept(generationRequest({ model: 'm' }), {
      telemetry: new GenerationTelemetry('chat'),
      stream: true,
    });
    const lateSeen: string[] = [];
    late.events$.subscribe((event) => lateSeen.push(event.type === 'text' ? event.text : event.type));
    after.events.next({ type: 'text', text: 'new engine' });
    expect(lateSeen).toEqual(['new engine']);

    await settle();
    expect(before.closed).toBe(false);
    running.unsubscribe();
    await settle();
    expect(before.closed).toBe(true);
  });

  it('gives back what an acceptance holds when its stream is abandoned before it opens, or its prompt cannot be counted', async () => {
    const engine = new ManualEngine();
    const registry = new ModelRegistry([{ config: manual('m'), engine }]);
    const service = new GenerationService(registry, { limits: {} } as GatewayConfig);
    const abandoned = await service.accept(generationRequest({ model: 'm' }), {
      telemetry: new GenerationTelemetry('chat'),
      stream: true,
    });
    const uncounted = generationRequest({ model: 'm' });
    await service.accept(uncounted, { telemetry: new GenerationTelemetry('messages'), stream: true });
    engine.countPromptTokens = async () => {
      throw new Error('the tokenizer failed');
    };

    await registry.apply([modelConfig({ ...manual('m'), prefillMs: 1 })], async () => new ManualEngine());
    abandoned.abandon();
    abandoned.abandon();
    await settle();
    expect(engine.closed).toBe(false);
    await expect(service.countPromptTokens(uncounted)).rejects.toThrow('the tokenizer failed');
    await settle();
    expect(engine.closed).toBe(true);
    await expect(
      new Promise((resolve, reject) =>
        abandoned.events$.subscribe({ complete: () => resolve(undefined), error: reject }),
      ),
    ).rejects.toThrow(/abandoned/);
  });
});

describe('GenerationService and the caller’s tenant', () => {
  const config = parseConfig({
    auth: { apiKeys: [{ name: 'team', key: 'sk-team', models: ['manual'], limits: { tokensPerMinute: 1000 } }] },
    models: [{ name: 'manual', engine: 'stub' }],
  });
  const caller = ApiKeyRing.fromConfig(config.auth).callerOf('sk-team')!;
  const models = (engine: InferenceEngine) =>
    new ModelRegistry([
      { config: modelConfig({ name: 'manual', engine: 'stub', maxConcurrency: 1 }), engine },
      { config: modelConfig({ name: 'other', engine: 'stub' }), engine },
    ]);

  it('answers a model the tenant may not use as an unknown one, and queues its background run after its interactive request', async () => {
    const service = new GenerationService(models(new ManualEngine()), { limits: {} } as GatewayConfig);
    const accept = (model: string, background = false) => {
      const telemetry = new GenerationTelemetry('responses');
      return service
        .accept(generationRequest({ model }), { telemetry, stream: true, caller, background })
        .then((accepted) => ({ accepted, telemetry }));
    };
    await expect(accept('other')).rejects.toMatchObject({ kind: 'not_found', code: 'model_not_found' });
    const holder = await accept('manual');
    const running = holder.accepted.events$.subscribe();
    const background = await accept('manual', true);
    background.accepted.events$.subscribe();
    const interactive = await accept('manual');
    interactive.accepted.events$.subscribe();
    running.unsubscribe();
    expect(interactive.telemetry.admittedAt).toBeDefined();
    expect(background.telemetry.admittedAt).toBeUndefined();
  });

  /** A service whose key limiter counts the tenant's tokens in a memory store, on a manual engine. */
  function budgetedService() {
    const store = new MemoryLimitStore();
    const engine = new ManualEngine();
    const limiter = new KeyLimiter(store, new GantryMetrics(new ModelRegistry([])));
    return { store, engine, service: new GenerationService(models(engine), { limits: {} } as GatewayConfig, limiter) };
  }

  it('charges the counters the latest output piece carried when the client leaves before the end', async () => {
    const { store, engine, service } = budgetedService();
    const accepted = await service.accept(generationRequest({ model: 'manual' }), {
      telemetry: new GenerationTelemetry('chat'),
      stream: true,
      caller,
    });
    const running = accepted.events$.subscribe();
    const timings = makeTimings({ promptN: 12, promptMs: 5, predictedN: 7, predictedMs: 9 });
    engine.events.next({
      type: 'text',
      text: 'so far',
      usage: { promptTokens: 12, completionTokens: 7, cachedTokens: 0, reasoningTokens: 0 },
      timings,
    });
    running.unsubscribe();
    await settle();
    expect(store.held('tpm:tenant:team', 60_000)).toBe(19);
  });

  it('charges the tokens the engine reported to the tenant’s budgets when the request ends', async () => {
    const { store, engine, service } = budgetedService();
    const accepted = await service.accept(generationRequest({ model: 'manual' }), {
      telemetry: new GenerationTelemetry('chat'),
      stream: false,
      caller,
    });
    accepted.events$.subscribe();
    engine.events.next({
      type: 'done',
      finishReason: 'stop',
      usage: { promptTokens: 12, completionTokens: 30, cachedTokens: 0, reasoningTokens: 0 },
    });
    engine.events.complete();
    await settle();
    expect(store.held('tpm:tenant:team', 60_000)).toBe(42);
  });
});
