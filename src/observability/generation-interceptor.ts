import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { Observable } from 'rxjs';
import type { EngineEvent } from '../engine/engine-event.js';
import type { GenerationTelemetry } from './generation-telemetry.js';
import { telemetryOf } from './request-telemetry.js';

/**
 * How a generation request ended:
 * - `rejected`: refused before its stream opened (validation, unknown model, full queue): `error` says why;
 * - `completed`: the engine finished (a `done` event);
 * - `failed`: the engine failed after the stream opened (reported in-band);
 * - `client_closed`: the client hung up first.
 */
export type GenerationOutcome =
  | { kind: 'completed' }
  | { kind: 'client_closed' }
  | { kind: 'failed'; error: unknown }
  | { kind: 'rejected'; error: unknown };

/** What hooks may read of the HTTP request (Fastify's request): headers, its id, the parsed body. */
export interface ObservedRequest {
  id?: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
}

/**
 * The plug-in point for observability: a Nest interceptor that sees every engine event of every
 * generation request (Chat Completions, Responses, Messages), plus the lifecycle moments that
 * are not events (accepted, admitted, heartbeat). A generation request is one whose route
 * attached its telemetry (request-telemetry.ts); every other request passes through untouched.
 * Subclasses override the hooks they need and register as `APP_INTERCEPTOR` providers; they never
 * touch engines or encoders. Hooks must not throw: they run inside the response stream.
 *
 * One interceptor may also run the hooks of several (`ObservabilityInterceptor` hosts the built-in
 * metrics, tracing and request log): each Nest interceptor costs every request an operator layer
 * and a subscriber, and every event a hop through them. Hosted hooks run as if each were its own
 * interceptor, the first one outermost: `onStart` and the lifecycle hooks in list order, `onEvent`
 * and `onEnd` in reverse (inner interceptors see an event, and the end, first).
 */
@Injectable()
export abstract class GenerationInterceptor implements NestInterceptor {
  /** Whose hooks run, outermost first: this interceptor's own unless it hosts others. */
  private readonly hosted: readonly GenerationInterceptor[];

  /** `_reflector` is not read: it stays first so that plugins written as `super(reflector)` still construct. */
  constructor(_reflector?: Reflector, hosted?: readonly GenerationInterceptor[]) {
    this.hosted = hosted ?? [this];
  }

  protected onStart(_telemetry: GenerationTelemetry, _request: ObservedRequest): void {}
  protected onAccepted(_telemetry: GenerationTelemetry): void {}
  protected onAdmitted(_telemetry: GenerationTelemetry): void {}
  protected onHeartbeat(_telemetry: GenerationTelemetry): void {}
  protected onEvent(_telemetry: GenerationTelemetry, _event: EngineEvent): void {}
  protected onEnd(_telemetry: GenerationTelemetry, _outcome: GenerationOutcome): void {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<ObservedRequest>();
    const telemetry = telemetryOf(request);
    if (telemetry === undefined) return next.handle();
    const hosted = this.hosted;
    for (const hooks of hosted) hooks.onStart(telemetry, request);
    const stopListening = telemetry.onSignal((signal) => {
      for (const hooks of hosted) {
        if (signal === 'accepted') hooks.onAccepted(telemetry);
        else if (signal === 'admitted') hooks.onAdmitted(telemetry);
        else hooks.onHeartbeat(telemetry);
      }
    });

    let ended = false;
    const end = (outcome: GenerationOutcome) => {
      if (ended) return;
      ended = true;
      stopListening();
      for (let index = hosted.length - 1; index >= 0; index -= 1) hosted[index].onEnd(telemetry, outcome);
    };
    // One subscriber for all hosted hooks (not tap + finalize): it sees every event of every stream.
    return new Observable<unknown>((subscriber) => {
      const subscription = next.handle().subscribe({
        next: (event) => {
          for (let index = hosted.length - 1; index >= 0; index -= 1) hosted[index].onEvent(telemetry, event as EngineEvent);
          subscriber.next(event);
        },
        error: (error: unknown) => {
          end({ kind: telemetry.accepted ? 'failed' : 'rejected', error });
          subscriber.error(error);
        },
        complete: () => {
          end(telemetry.finishReason !== undefined ? { kind: 'completed' } : { kind: 'client_closed' });
          subscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        end({ kind: 'client_closed' });
      };
    });
  }
}
