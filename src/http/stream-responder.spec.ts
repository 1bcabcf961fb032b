import { EventEmitter } from 'node:events';
import type { FastifyReply } from 'fastify';
import { defer, EMPTY, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/config-loader.js';
import { LifecycleService } from '../lifecycle/lifecycle.service.js';
import { GenerationTelemetry } from '../observability/generation-telemetry.js';
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
    const telemetry = GenerationTelemetry.of({});

    const emitted = await lastValueFrom(responder.json(reply, { events$, telemetry }, () => ({}), 'openai').pipe(toArray()));

    expect(emitted).toEqual([]);
    expect(subscribed).toBe(0);
    expect(lifecycle.inFlight).toBe(0);
  });
});
