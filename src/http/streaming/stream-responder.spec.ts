import { EventEmitter } from 'node:events';
import type { FastifyReply } from 'fastify';
import { defer, EMPTY, lastValueFrom, of, toArray } from 'rxjs';
import { ZERO_USAGE, type EngineEvent } from '../../engine/engine-event.js';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../config/config-loader.js';
import { LifecycleService } from '../../lifecycle/lifecycle.service.js';
import { GenerationTelemetry } from '../../observability/generation-telemetry.js';
import { StreamResponder } from './stream-responder.js';

describe('StreamResponder', () => {
  it('starts no engine work for a client that hung up before the handler ran (a guard waited on its store)', async () => {
    const config = parseConfig({});
    const lifecycle = new LifecycleService(config);
    const responder = new StreamResponder(config, lifecycle);
    const raw = Object.assign(new EventEmitter(), { destroyed: true });
    const reply = { raw } as unknown as FastifyReply;
    let subscribed = 0;
    const events$ = defer(() => {
      subscribed += 1;
      return EMPTY;
    });
    const telemetry = new GenerationTelemetry('chat');
    let abandoned = 0;
    const abandon = () => (abandoned += 1);

    const emitted = await lastValueFrom(responder.json(reply, { events$, telemetry, abandon }, () => ({}), 'openai').pipe(toArray()));

    expect(emitted).toEqual([]);
    expect(subscribed).toBe(0);
    expect(abandoned).toBe(1);
    expect(lifecycle.inFlight).toBe(0);
  });

  it('answers a body that cannot be made with a 500 in the protocol shape, and ends the exchange with the error', async () => {
    const config = parseConfig({});
    const responder = new StreamResponder(config, new LifecycleService(config));
    const sent: Array<{ status: number; body: unknown }> = [];
    let status = 0;
    const raw = Object.assign(new EventEmitter(), { destroyed: false });
    const reply = {
      raw,
      status(code: number) {
        status = code;
        return this;
      },
      headers() {
        return this;
      },
      send(body: unknown) {
        sent.push({ status, body });
        return this;
      },
    } as unknown as FastifyReply;
    const events$ = of<EngineEvent[]>({ type: 'text', text: 'hi' }, { type: 'done', finishReason: 'stop', usage: ZERO_USAGE });
    const toBody = () => {
      throw new Error('cannot encode');
    };

    const outcome = await lastValueFrom(responder.json(reply, { events$, telemetry: new GenerationTelemetry('chat'), abandon: () => undefined }, toBody, 'anthropic').pipe(toArray())).catch(
      (error: Error) => error.message,
    );

    expect(outcome).toBe('cannot encode');
    expect(sent).toHaveLength(1);
    expect(sent[0].status).toBe(500);
    expect(sent[0].body).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });
});
