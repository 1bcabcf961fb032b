import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { Observable } from 'rxjs';
import type { AnswerResume } from '../engine/answer-resume.js';
import type { EngineEvent } from '../engine/engine-event.js';
import type { GenerationTelemetry, LifecycleSignal } from './generation-telemetry.js';

/**
 * How a generation request ended:
 * - `rejected`: refused before its stream opened (validation, unknown model, full queue, a store that cannot
 *   keep a background response): `error` says why;
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
 * The hooks of a list of interceptors, run as one for each generation request (made once, by
 * `GenerationInterceptor.chain`). The generation routes call them; nothing else does.
 */
export interface GenerationHooks {
  /** After the guards let the request in, before its body is validated. */
  start(telemetry: GenerationTelemetry, request: ObservedRequest): void;
  signal(telemetry: GenerationTelemetry, signal: LifecycleSignal): void;
  event(telemetry: GenerationTelemetry, event: EngineEvent): void;
  /** Once per request that started. */
  end(telemetry: GenerationTelemetry, outcome: GenerationOutcome): void;
}

/**
 * The plug-in point for observability and plugins: hooks that see every generation request
 * (Chat Completions, Responses, Messages) that the guards let in, every engine event it emits,
 * the lifecycle moments that are not events (accepted by the gateway: limits passed, a queue
 * place held; admitted; heartbeat; resumed on another replica), and how it ended. The engine's own
 * acceptance (its upstream answered, its prompt fits) is an event, `accepted`, that comes after admission.
 * Subclasses override the hooks they need and are registered as providers of any module (a
 * plugin's included); the generation routes find them all when the gateway is built. They never
 * touch engines or encoders. Hooks must not throw: they run inside the response stream.
 *
 * Several interceptors run as if each wrapped the next, the first one outermost: `onStart` and
 * the lifecycle hooks in list order, `onEvent` and `onEnd` in reverse (inner ones see an event,
 * and the end, first). Gantry's own come first (request log, metrics, tracing), then plugins'.
 *
 * It is also a Nest interceptor that lets everything through, so that a plugin registered as an
 * `APP_INTERCEPTOR` still loads: Nest's own routes carry no generation. Not itself `@Injectable()`,
 * so that a subclass without a constructor of its own is made with no arguments.
 */
export abstract class GenerationInterceptor implements NestInterceptor {
  /** `_reflector` is not read: it stays so that plugins written as `super(reflector)` still construct. */
  constructor(_reflector?: Reflector) {}

  protected onStart(_telemetry: GenerationTelemetry, _request: ObservedRequest): void {}
  protected onAccepted(_telemetry: GenerationTelemetry): void {}
  protected onAdmitted(_telemetry: GenerationTelemetry): void {}
  protected onHeartbeat(_telemetry: GenerationTelemetry): void {}
  /** The engine continued the answer on another worker after a failure cut it; the client's stream goes on as one. */
  protected onResumed(_telemetry: GenerationTelemetry, _resume: AnswerResume): void {}
  protected onEvent(_telemetry: GenerationTelemetry, _event: EngineEvent): void {}
  protected onEnd(_telemetry: GenerationTelemetry, _outcome: GenerationOutcome): void {}

  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle();
  }

  /** The hooks of `interceptors`, the first one outermost, as one set of calls: nothing per request. */
  static chain(interceptors: readonly GenerationInterceptor[]): GenerationHooks {
    const list = [...interceptors];
    const last = list.length - 1;
    return {
      start(telemetry, request) {
        for (const hooks of list) hooks.onStart(telemetry, request);
      },
      signal(telemetry, signal) {
        for (const hooks of list) {
          if (signal === 'accepted') hooks.onAccepted(telemetry);
          else if (signal === 'admitted') hooks.onAdmitted(telemetry);
          else if (signal === 'resumed') hooks.onResumed(telemetry, telemetry.resumes!.at(-1)!);
          else hooks.onHeartbeat(telemetry);
        }
      },
      event(telemetry, event) {
        for (let index = last; index >= 0; index -= 1) list[index].onEvent(telemetry, event);
      },
      end(telemetry, outcome) {
        for (let index = last; index >= 0; index -= 1) list[index].onEnd(telemetry, outcome);
      },
    };
  }
}
