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

/**
 * What hooks may read of the HTTP request (Fastify's request): headers, its id, the parsed body.
 * Once validated, the body is parsed again from its bytes when read (see releaseParsedBody):
 * a hook that needs it at the end keeps what it read in `onStart`.
 */
/** The methods of a GenerationHook, as `gantry_hook_errors_total` names them. */
export type HookMethod = 'onStart' | 'onAccepted' | 'onAdmitted' | 'onHeartbeat' | 'onResumed' | 'onEvent' | 'onEnd';

/** Told of each exception a hook threw: it was caught, and the request went on. */
export type HookFailureListener = (hook: GenerationHook, method: HookMethod, error: unknown) => void;

export interface ObservedRequest {
  id?: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
}

/**
 * The hooks of a list of GenerationHooks, run as one for each generation request (made once, by
 * `GenerationHook.chain`). The generation routes call them; nothing else does. None throws: a hook
 * that throws is reported (`HookFailureListener`) and the others, and the request, go on.
 */
export interface GenerationHookChain {
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
 * touch engines or encoders, and cannot refuse a request (a guard does that). Hooks should not
 * throw: they run inside the response stream. One that does is isolated: the exception is counted
 * (`gantry_hook_errors_total{hook, method}`) and logged at most once per interval per hook, and the
 * request, the other hooks and every other stream go on (docs/extending.md).
 *
 * Several hooks run as if each wrapped the next, the first one outermost: `onStart` and the
 * lifecycle hooks in list order, `onEvent` and `onEnd` in reverse (inner ones see an event, and
 * the end, first). Gantry's own come first (request log, metrics, tracing), then plugins'.
 *
 * Not a Nest interceptor: the generation routes are not Nest's, and Nest's own routes carry no
 * generation, so a hook registered as an `APP_INTERCEPTOR` is refused at start (by Nest: no `intercept`).
 * Not itself `@Injectable()`, so that a subclass without a constructor of its own is made with no
 * arguments.
 */
export abstract class GenerationHook {
  /** The mark every copy of Gantry recognises (see isGenerationHook). */
  declare readonly [GENERATION_HOOK]: true;

  protected onStart(_telemetry: GenerationTelemetry, _request: ObservedRequest): void {}
  protected onAccepted(_telemetry: GenerationTelemetry): void {}
  protected onAdmitted(_telemetry: GenerationTelemetry): void {}
  protected onHeartbeat(_telemetry: GenerationTelemetry): void {}
  /** The engine continued the answer on another replica after a failure cut it; the client's stream goes on as one. */
  protected onResumed(_telemetry: GenerationTelemetry, _resume: AnswerResume): void {}
  protected onEvent(_telemetry: GenerationTelemetry, _event: EngineEvent): void {}
  protected onEnd(_telemetry: GenerationTelemetry, _outcome: GenerationOutcome): void {}

  /**
   * The hooks of `hooks`, the first one outermost, as one set of calls: nothing per request. Each
   * call is isolated: an exception goes to `failed`, never to the caller.
   */
  static chain(hooks: readonly GenerationHook[], failed: HookFailureListener = () => undefined): GenerationHookChain {
    const list = [...hooks];
    const last = list.length - 1;
    return {
      start(telemetry, request) {
        for (const hook of list) {
          try {
            hook.onStart(telemetry, request);
          } catch (error) {
            failed(hook, 'onStart', error);
          }
        }
      },
      signal(telemetry, signal) {
        for (const hook of list) {
          try {
            if (signal === 'accepted') hook.onAccepted(telemetry);
            else if (signal === 'admitted') hook.onAdmitted(telemetry);
            else if (signal === 'resumed') hook.onResumed(telemetry, telemetry.resumes!.at(-1)!);
            else hook.onHeartbeat(telemetry);
          } catch (error) {
            failed(hook, SIGNAL_METHODS[signal], error);
          }
        }
      },
      event(telemetry, event) {
        for (let index = last; index >= 0; index -= 1) {
          try {
            list[index].onEvent(telemetry, event);
          } catch (error) {
            failed(list[index], 'onEvent', error);
          }
        }
      },
      end(telemetry, outcome) {
        for (let index = last; index >= 0; index -= 1) {
          try {
            list[index].onEnd(telemetry, outcome);
          } catch (error) {
            failed(list[index], 'onEnd', error);
          }
        }
      },
    };
  }
}

const SIGNAL_METHODS: Record<LifecycleSignal, HookMethod> = {
  accepted: 'onAccepted',
  admitted: 'onAdmitted',
  heartbeat: 'onHeartbeat',
  resumed: 'onResumed',
};

/**
 * The mark of a GenerationHook: a registered symbol, the same in every copy of Gantry loaded in
 * the process, so that a hook whose plugin resolves a copy of its own (another `node_modules`)
 * is still found (`instanceof` would see another class, and the hook would be silently ignored).
 */
export const GENERATION_HOOK: unique symbol = Symbol.for('gantry.generation-hook');
Object.defineProperty(GenerationHook.prototype, GENERATION_HOOK, { value: true });

/** A GenerationHook of this copy of Gantry or of any other loaded in the process. */
export function isGenerationHook(value: unknown): value is GenerationHook {
  return typeof value === 'object' && value !== null && (value as Partial<GenerationHook>)[GENERATION_HOOK] === true;
}

/**
 * Whether `value` extends a GenerationHook of a copy of Gantry that does not mark its hooks (older
 * than the mark): such a hook would be ignored, so the start is refused instead.
 */
export function isUnmarkedGenerationHook(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || isGenerationHook(value)) return false;
  for (let proto: unknown = Object.getPrototypeOf(value); proto; proto = Object.getPrototypeOf(proto)) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    if (name === 'GenerationHook' || name === 'GenerationInterceptor') return true;
  }
  return false;
}
