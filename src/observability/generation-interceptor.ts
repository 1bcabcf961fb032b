import { type CallHandler, type ExecutionContext, Inject, Injectable, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Observable } from 'rxjs';
import type { EngineEvent } from '../engine/engine-event.js';
import { GENERATION_API } from './generation-api.decorator.js';
import { GenerationTelemetry, type ApiName } from './generation-telemetry.js';

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
 * are not events (accepted, admitted, heartbeat). Subclasses override the hooks they need and
 * register as `APP_INTERCEPTOR` providers; they never touch engines or encoders.
 * Hooks must not throw: they run inside the response stream.
 */
@Injectable()
export abstract class GenerationInterceptor implements NestInterceptor {
  constructor(@Inject(Reflector) private readonly reflector: Reflector) {}

  protected onStart(_telemetry: GenerationTelemetry, _request: ObservedRequest): void {}
  protected onAccepted(_telemetry: GenerationTelemetry): void {}
  protected onAdmitted(_telemetry: GenerationTelemetry): void {}
  protected onHeartbeat(_telemetry: GenerationTelemetry): void {}
  protected onEvent(_telemetry: GenerationTelemetry, _event: EngineEvent): void {}
  protected onEnd(_telemetry: GenerationTelemetry, _outcome: GenerationOutcome): void {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const api = this.reflector.get<ApiName | undefined>(GENERATION_API, context.getHandler());
    if (api === undefined) return next.handle();
    const request = context.switchToHttp().getRequest<ObservedRequest>();
    const telemetry = GenerationTelemetry.of(request);
    telemetry.api = api;
    this.onStart(telemetry, request);
    const stopListening = telemetry.onSignal((signal) => {
      if (signal === 'accepted') this.onAccepted(telemetry);
      else if (signal === 'admitted') this.onAdmitted(telemetry);
      else this.onHeartbeat(telemetry);
    });

    let ended = false;
    const end = (outcome: GenerationOutcome) => {
      if (ended) return;
      ended = true;
      stopListening();
      this.onEnd(telemetry, outcome);
    };
    // One subscriber per interceptor (not tap + finalize): it sees every event of every stream.
    return new Observable<unknown>((subscriber) => {
      const subscription = next.handle().subscribe({
        next: (event) => {
          this.onEvent(telemetry, event as EngineEvent);
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
