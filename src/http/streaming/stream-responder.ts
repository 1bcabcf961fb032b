import { Inject, Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { Observable, type OperatorFunction } from 'rxjs';
import { GatewayConfig } from '../../config/gateway-config.js';
import type { EngineEvent } from '../../engine/engine-event.js';
import { keepaliveComments, keepaliveFrames } from '../../protocols/sse/keepalive-frames.js';
import type { SseFrame } from '../../protocols/sse/sse-frame.js';
import type { AcceptedGeneration } from '../../generation/generation.service.js';
import { collectEvent, emptyGeneration, type GenerationResult } from '../../streaming/collect-generation.js';
import { LifecycleService } from '../../lifecycle/lifecycle.service.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { renderError, type ErrorDialect } from '../../protocols/errors/render-error.js';
import { SseWriter } from './sse-writer.js';

/**
 * Writes an engine event stream to a Fastify reply, as SSE or as one JSON body.
 *
 * Both return the engine events themselves, so that the GenerationHooks see every event of
 * every request (the generation pipeline subscribes); writing is a side effect of that subscription.
 * The pipeline folds the events into the request's telemetry as it passes them to the hooks; the
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

  /**
   * Streams the events as SSE in the encoder's frames. The response head waits for the first
   * frame: the encoder opens at the first stream event, which is the engine's acceptance, a
   * heartbeat (the keep-alive is due), or any other event of an engine that does not tell its
   * acceptance. So a failure before it (a prompt the engine refuses, an upstream's 4xx) is not
   * encoded: the frames are torn down and the returned observable fails with it, for the pipeline
   * to answer with its real status. A failure after it goes to the encoder, in-band.
   */
  sse(
    reply: FastifyReply,
    { events$, telemetry, abandon }: AcceptedGeneration,
    encode: OperatorFunction<StreamEvent, SseFrame>,
  ): Observable<EngineEvent> {
    return new Observable<EngineEvent>((subscriber) => {
      const response = reply.raw;
      if (!this.admitExchange(response, abandon)) {
        subscriber.complete();
        return;
      }
      let writer: SseWriter | undefined;
      let refused = false;
      let failure: unknown;
      const end = () => subscriber.complete();
      const onClose = () => {
        if (writer === undefined || !writer.isEnded) end();
      };
      // `on`, not `once` ('close' is emitted once): `once` wraps each listener per stream.
      response.on('close', onClose);
      // Each event goes to the encoder first, then on to the hooks; a failure is kept to
      // be passed on once the encoder wrote its in-band error frame and the response ended.
      const input$ = new Observable<EngineEvent>((input) =>
        events$.pipe(this.lifecycle.endAtDrainDeadline()).subscribe({
          next: (event) => {
            input.next(event);
            subscriber.next(event);
          },
          error: (error: unknown) => {
            if (writer !== undefined) {
              failure = error;
              input.error(error);
              return;
            }
            // Nothing was written: the pipeline answers it with its status (the teardown ends the frames).
            refused = true;
            subscriber.error(error);
          },
          complete: () => input.complete(),
        }),
      );
      const frames = keepaliveFrames(input$, encode, this.config.keepalive, () => telemetry.markHeartbeat()).subscribe({
        next: (frame) => {
          writer ??= this.openSse(reply, end);
          writer.write(frame);
        },
        complete: () => {
          (writer ??= this.openSse(reply, end)).end();
          if (failure === undefined) subscriber.complete();
          else subscriber.error(failure);
        },
      });

      return () => {
        response.off('close', onClose);
        frames.unsubscribe();
        // A refusal's answer is the pipeline's to send; anything else unfinished is cut.
        if (writer === undefined ? !refused : !writer.isEnded) response.destroy();
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
          // A body kept before it is sent (a stored response) comes as a promise.
          if (body instanceof Promise) {
            body.then((made: unknown) => {
              void reply.status(200).send(made);
              subscriber.complete();
            }, fail);
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

  /**
   * Writes frames already made (a stored response's events) as an SSE stream. A hang-up stops
   * following them; a failure of the source cuts the connection, so the client knows to resume.
   * The source ends itself at a shutdown (see StoredResponses.follow: its run's end first).
   */
  sseFrames(reply: FastifyReply, frames$: Observable<SseFrame>): Observable<never> {
    return new Observable<never>((subscriber) => {
      const response = reply.raw;
      if (!this.admitExchange(response)) {
        subscriber.complete();
        return;
      }
      const end = () => subscriber.complete();
      const writer = this.openSse(reply, end);
      const onClose = () => {
        if (!writer.isEnded) end();
      };
      response.on('close', onClose);
      const source =
        this.config.keepalive.mode === 'comments'
          ? frames$.pipe(keepaliveComments(this.config.keepalive.intervalMs))
          : frames$;
      const framesSubscription = source.subscribe({
        next: (frame) => writer.write(frame),
        error: () => {
          response.destroy();
          subscriber.complete();
        },
        complete: () => {
          writer.end();
          subscriber.complete();
        },
      });
      return () => {
        response.off('close', onClose);
        framesSubscription.unsubscribe();
        if (!writer.isEnded) response.destroy();
      };
    });
  }

  /** Answers with a body already made, as the route's one event-less result. */
  sendJson(reply: FastifyReply, body: unknown): Observable<never> {
    return new Observable<never>((subscriber) => {
      this.trackInFlight(reply.raw);
      void reply.status(200).send(body);
      subscriber.complete();
    });
  }

  /**
   * Counts the exchange as in flight; false, and `abandon` called, when the client is already gone
   * (it hung up while a guard asked its store, or while the prompt was counted): no work starts.
   */
  private admitExchange(response: ServerResponse, abandon?: () => void): boolean {
    this.trackInFlight(response);
    if (!response.destroyed) return true;
    abandon?.();
    return false;
  }

  /**
   * Takes the raw response from Fastify and opens the SSE stream on it; `end` is called when the
   * client is dropped for not reading, which ends the exchange and cancels the work behind it.
   */
  private openSse(reply: FastifyReply, end: () => void): SseWriter {
    reply.hijack();
    const writer = new SseWriter(reply.raw, this.config.server.maxBufferedBytesPerStream, () => {
      this.dropped += 1;
      end();
    });
    writer.open(reply.getHeaders() as Record<string, string>);
    return writer;
  }

  /** The exchange is in flight until its response closes: finished and handed over, or hung up. */
  private trackInFlight(response: ServerResponse): void {
    const leave = this.lifecycle.enter();
    response.on('close', leave);
    if (response.destroyed) leave();
  }
}
