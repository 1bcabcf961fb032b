import { Inject, Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { Observable, type OperatorFunction } from 'rxjs';
import { GatewayConfig } from '../../config/gateway-config.js';
import type { EngineEvent } from '../../engine/engine-event.js';
import { isOutput } from '../../engine/engine-event.js';
import { KEEPALIVE_COMMENT, type SseFrame } from '../../protocols/sse/sse-frame.js';
import type { AcceptedGeneration } from '../../generation/generation.service.js';
import { collectEvent, emptyGeneration, type GenerationResult } from '../../streaming/collect-generation.js';
import { LifecycleService } from '../../lifecycle/lifecycle.service.js';
import { heartbeat } from '../../streaming/heartbeat.js';
import { keepalive } from '../../streaming/keepalive.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { renderError, type ErrorDialect } from '../../protocols/errors/render-error.js';
import { SseWriter } from './sse-writer.js';

/**
 * Writes an engine event stream to a Fastify reply, as SSE or as one JSON body.
 *
 * Both return the engine events themselves, so that Nest interceptors wrapping the handler see
 * (and can `tap`) every event of every request; writing is a side effect of that subscription.
 * The events come already folded into the request's telemetry (GenerationService does it); the
 * responder adds the heartbeats it makes.
 * The stream is torn down, and the engine work cancelled, when the client hangs up. Each exchange
 * counts as in flight for the LifecycleService until its response closes, and fails with
 * `unavailable` (in-band, once the stream is open) when a shutdown's drain deadline passes.
 */
@Injectable()
export class StreamResponder {
  private dropped = 0;

  constructor(
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
    @Inject(LifecycleService) private readonly lifecycle: LifecycleService,
  ) {}

  /** Streams dropped because their client stopped reading (`server.maxBufferedBytesPerStream`). */
  get droppedSlowClients(): number {
    return this.dropped;
  }

  sse(
    reply: FastifyReply,
    { events$, telemetry, abandon }: AcceptedGeneration,
    encode: OperatorFunction<StreamEvent, SseFrame>,
  ): Observable<EngineEvent> {
    return new Observable<EngineEvent>((subscriber) => {
      reply.hijack();
      const response = reply.raw;
      this.trackInFlight(response);
      // A client already gone (it hung up while a guard asked its store, or while the prompt was
      // counted) starts no work, and gives its admission place back.
      if (response.destroyed) {
        abandon();
        subscriber.complete();
        return;
      }
      // A dropped slow client ends the exchange here, which cancels the engine work behind it.
      const writer = new SseWriter(response, this.config.server.maxBufferedBytesPerStream, () => {
        this.dropped += 1;
        subscriber.complete();
      });
      writer.open(reply.getHeaders() as Record<string, string>);

      let failure: unknown;
      const onClose = () => {
        if (!writer.isEnded) subscriber.complete();
      };
      // `on`, not `once` ('close' is emitted once): `once` wraps each listener per stream.
      response.on('close', onClose);
      // Each event goes to the encoder first, then on to the interceptors; a failure is kept to
      // be passed on once the encoder wrote its in-band error frame and the response ended.
      const input$ = new Observable<EngineEvent>((input) =>
        events$.pipe(this.lifecycle.endAtDrainDeadline()).subscribe({
          next: (event) => {
            input.next(event);
            subscriber.next(event);
          },
          error: (error: unknown) => {
            failure = error;
            input.error(error);
          },
          complete: () => input.complete(),
        }),
      );
      const framesSubscription = this.frames(input$, encode, () => telemetry.markHeartbeat()).subscribe({
        next: (frame) => writer.write(frame),
        complete: () => {
          writer.end();
          if (failure === undefined) subscriber.complete();
          else subscriber.error(failure);
        },
      });

      return () => {
        response.off('close', onClose);
        framesSubscription.unsubscribe();
        if (!writer.isEnded) response.destroy();
      };
    });
  }

  json(
    reply: FastifyReply,
    { events$, abandon }: AcceptedGeneration,
    toBody: (result: GenerationResult) => unknown,
    dialect: ErrorDialect,
  ): Observable<EngineEvent> {
    return new Observable<EngineEvent>((subscriber) => {
      this.trackInFlight(reply.raw);
      // A client already gone (it hung up while a guard asked its store) starts no work, and
      // gives its admission place back.
      if (reply.raw.destroyed) {
        abandon();
        subscriber.complete();
        return;
      }
      const result = emptyGeneration();
      const fail = (error: unknown) => {
        const rendered = renderError(error, dialect);
        void reply.status(rendered.status).headers(rendered.headers).send(rendered.body);
        subscriber.error(error);
      };
      const onClose = () => subscriber.complete();
      reply.raw.on('close', onClose);
      const sourceSubscription = events$.pipe(this.lifecycle.endAtDrainDeadline()).subscribe({
        next: (event) => {
          collectEvent(result, event);
          subscriber.next(event);
        },
        error: (error: unknown) => fail(error),
        complete: () => {
          let body: unknown;
          try {
            body = toBody(result);
          } catch (error) {
            // A body that cannot be made is the gateway's fault: a 500 in the protocol's shape.
            fail(error);
            return;
          }
          void reply.status(200).send(body);
          subscriber.complete();
        },
      });
      return () => {
        reply.raw.off('close', onClose);
        sourceSubscription.unsubscribe();
      };
    });
  }

  /** The exchange is in flight until its response closes: finished and handed over, or hung up. */
  private trackInFlight(response: ServerResponse): void {
    const leave = this.lifecycle.enter();
    response.on('close', leave);
    if (response.destroyed) leave();
  }

  /** Encoded frames with the configured keep-alive: protocol heartbeats, SSE comments, or none. */
  private frames(
    input: Observable<EngineEvent>,
    encode: OperatorFunction<StreamEvent, SseFrame>,
    onBeat: () => void,
  ): Observable<SseFrame> {
    const { mode, intervalMs } = this.config.keepalive;
    switch (mode) {
      case 'chunks': {
        const beat = (n: number) => {
          onBeat();
          return heartbeat(n);
        };
        return input.pipe(keepalive<EngineEvent, StreamEvent>({ intervalMs, isOutput, beat }), encode);
      }
      case 'comments': {
        const beat = () => {
          onBeat();
          return KEEPALIVE_COMMENT;
        };
        return input.pipe(encode, keepalive<SseFrame, SseFrame>({ intervalMs, isOutput: () => false, beat }));
      }
      case 'off':
        return input.pipe(encode);
    }
  }
}
