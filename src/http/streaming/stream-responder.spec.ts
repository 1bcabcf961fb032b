import { EventEmitter } from 'node:events';
import type { FastifyReply } from 'fastify';
import { defer, EMPTY, lastValueFrom, of, Subject, throwError, toArray, type Observable } from 'rxjs';
import { ACCEPTED, ZERO_USAGE, type EngineEvent } from '../../engine/engine-event.js';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../config/config-loader.js';
import { ContextLengthError } from '../../engine/context-length-error.js';
import { encodeChatStream } from '../../protocols/openai-chat/encode-chat-stream.js';
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

    const emitted = await lastValueFrom(
      responder.json(reply, { events$, telemetry, abandon }, () => ({}), 'openai').pipe(toArray()),
    );

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
    const events$ = of<EngineEvent[]>(
      { type: 'text', text: 'hi' },
      { type: 'done', finishReason: 'stop', usage: ZERO_USAGE },
    );
    const toBody = () => {
      throw new Error('cannot encode');
    };

    const outcome = await lastValueFrom(
      responder
        .json(
          reply,
          { events$, telemetry: new GenerationTelemetry('chat'), abandon: () => undefined },
          toBody,
          'anthropic',
        )
        .pipe(toArray()),
    ).catch((error: Error) => error.message);

    expect(outcome).toBe('cannot encode');
    expect(sent).toHaveLength(1);
    expect(sent[0].status).toBe(500);
    expect(sent[0].body).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });

  describe('sse: the head waits for the engine to accept', () => {
    /** A reply over a fake raw response that records what is written, and whether Fastify was asked to let go. */
    function fakeReply() {
      const raw = Object.assign(new EventEmitter(), {
        destroyed: false,
        headersSent: false,
        writableLength: 0,
        written: [] as string[],
        writeHead(status: number) {
          raw.written.push(`HTTP ${status}`);
          raw.headersSent = true;
        },
        cork: () => undefined,
        uncork: () => undefined,
        flushHeaders: () => undefined,
        write(text: string) {
          raw.written.push(text);
          return true;
        },
        end(text?: string) {
          if (text) raw.written.push(text);
        },
        destroy() {
          raw.destroyed = true;
          raw.emit('close');
        },
      });
      const state = { hijacked: false };
      const reply = { raw, hijack: () => (state.hijacked = true), getHeaders: () => ({}) } as unknown as FastifyReply;
      return { reply, raw, state };
    }

    function stream(events$: Observable<EngineEvent>, mode: 'chunks' | 'comments' | 'off' = 'chunks') {
      const config = parseConfig({ keepalive: { mode, intervalMs: 60_000 } });
      const lifecycle = new LifecycleService(config);
      const responder = new StreamResponder(config, lifecycle);
      const { reply, raw, state } = fakeReply();
      const encode = encodeChatStream({
        id: 'chatcmpl-1',
        model: 'm',
        created: 1,
        includeUsage: false,
        continuousUsage: false,
        timings: false,
      });
      const outcome: { error?: unknown; completed: boolean } = { completed: false };
      responder
        .sse(reply, { events$, telemetry: new GenerationTelemetry('chat'), abandon: () => undefined }, encode)
        .subscribe({
          error: (error: unknown) => (outcome.error = error),
          complete: () => (outcome.completed = true),
        });
      return { raw, state, outcome, lifecycle };
    }
    const turn = () => new Promise((resolve) => setImmediate(resolve));

    for (const mode of ['chunks', 'comments', 'off'] as const) {
      it(`a refusal before the acceptance fails the exchange, nothing written and the reply still Fastify's (keepalive ${mode})`, async () => {
        const engine = new Subject<EngineEvent>();
        const { raw, state, outcome } = stream(engine, mode);
        await turn();
        expect(raw.written).toEqual([]);
        const refusal = new ContextLengthError(5000, 4096);
        engine.error(refusal);
        await turn();
        expect(outcome.error).toBe(refusal);
        expect(state.hijacked).toBe(false);
        expect(raw.written).toEqual([]);
        expect(raw.destroyed).toBe(false);
      });
    }

    it('a refusal during the subscription itself (a synchronous engine) is answered the same way', async () => {
      const refusal = new ContextLengthError(5000, 4096);
      const { raw, state, outcome } = stream(throwError(() => refusal));
      await turn();
      expect(outcome.error).toBe(refusal);
      expect(state.hijacked).toBe(false);
      expect(raw.written).toEqual([]);
    });

    it('the acceptance sends the head with the opening frame; a failure after it is in-band', async () => {
      const engine = new Subject<EngineEvent>();
      const { raw, state, outcome } = stream(engine, 'off');
      engine.next(ACCEPTED);
      await turn();
      expect(state.hijacked).toBe(true);
      expect(raw.written).toHaveLength(2);
      expect(raw.written[0]).toBe('HTTP 200');
      expect(raw.written[1]).toContain('"role":"assistant"');
      const failure = new ContextLengthError(5000, 4096);
      engine.error(failure);
      await turn();
      expect(raw.written.join('')).toContain('"code":"context_length_exceeded"');
      expect(raw.written.at(-1)).toContain('[DONE]');
      expect(outcome.error).toBe(failure);
    });

    it('a client that hangs up while the head is held ends the exchange and the engine work at once', async () => {
      const engine = new Subject<EngineEvent>();
      const { raw, state, outcome, lifecycle } = stream(engine);
      await turn();
      expect(engine.observed).toBe(true);
      raw.destroy();
      expect(outcome.completed).toBe(true);
      expect(engine.observed).toBe(false);
      expect(state.hijacked).toBe(false);
      expect(lifecycle.inFlight).toBe(0);
    });
  });
});
