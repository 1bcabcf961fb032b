import { Observable, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { generationRequest } from '../../test/support/requests.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import type { ModelConfig } from '../config/model-config.js';
import type { EngineEvent } from '../engine/engine-event.js';
import { ZERO_USAGE } from '../engine/engine-event.js';
import { InferenceEngine } from '../engine/inference-engine.js';
import { ModelRegistry } from '../models/model-registry.js';
import { GenerationTelemetry } from '../observability/generation-telemetry.js';
import { GenerationService } from './generation.service.js';

/** An engine whose events the test pushes by hand. */
class ManualEngine extends InferenceEngine {
  readonly events = new Subject<EngineEvent>();
  generate(): Observable<EngineEvent> {
    return this.events;
  }
}

function serviceWith(engine: InferenceEngine, model: Partial<ModelConfig> = {}) {
  const config = { name: 'manual', engine: 'stub', maxConcurrency: 1, ...model } as ModelConfig;
  return new GenerationService(new ModelRegistry([{ config, engine }]), { limits: {} } as GatewayConfig);
}

describe('GenerationService.accept', () => {
  it('folds every event into the telemetry before anyone downstream sees it', async () => {
    const engine = new ManualEngine();
    const telemetry = new GenerationTelemetry('chat');
    const { events$ } = await serviceWith(engine).accept(generationRequest({ model: 'manual' }), { telemetry, stream: true });
    const seen: Array<{ type: string; outputEvents: number; finishReason?: string }> = [];
    events$.subscribe((event) => seen.push({ type: event.type, outputEvents: telemetry.outputEvents, finishReason: telemetry.finishReason }));

    engine.events.next({ type: 'text', text: 'Hello' });
    engine.events.next({ type: 'text', text: ' world' });
    engine.events.next({ type: 'done', finishReason: 'stop', usage: { ...ZERO_USAGE, completionTokens: 2 } });

    expect(seen).toEqual([
      { type: 'text', outputEvents: 1, finishReason: undefined },
      { type: 'text', outputEvents: 2, finishReason: undefined },
      { type: 'done', outputEvents: 2, finishReason: 'stop' },
    ]);
    expect(telemetry.usage.completionTokens).toBe(2);
  });

  it('records acceptance at once and admission when a slot is free, in the telemetry it was given', async () => {
    const engine = new ManualEngine();
    const service = serviceWith(engine, { maxConcurrency: 1 });
    const first = new GenerationTelemetry('messages');
    const second = new GenerationTelemetry('messages');
    const running = (await service.accept(generationRequest({ model: 'manual' }), { telemetry: first, stream: false })).events$.subscribe();
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
    (await service.accept(generationRequest({ model: 'manual' }), { telemetry: new GenerationTelemetry('chat'), stream: true })).events$.subscribe();

    await expect(service.accept(generationRequest({ model: 'manual' }), { telemetry, stream: true })).rejects.toThrow(/queue is full/);
    expect(telemetry).toMatchObject({ model: 'manual', engine: 'stub', accepted: false });
  });
});
