import { ForbiddenException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Observable, Observer } from 'rxjs';
import type { EngineEvent } from '../../engine/engine-event.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { ThrottledWarning } from '../../observability/logging/throttled-warning.js';
import type { GenerationHookChain, GenerationOutcome } from '../../observability/generation-hook.js';
import { GenerationTelemetry, type LifecycleSignal } from '../../observability/generation-telemetry.js';
import { renderError } from '../../protocols/errors/render-error.js';
import { dialectOfPath } from '../../protocols/generation-protocols.js';
import type { ProtocolDescriptor } from '../../protocols/protocol-descriptor.js';
import { pathOf } from '../../routing/probe-paths.js';
import type { RequestGuard } from '../../routing/request-guard.js';
import { validateRequestBody } from '../validation/request-validation.pipe.js';
import { releaseParsedBody } from '../validation/strict-json-body-parser.js';

/** What a generation route's handler gets besides its validated body. */
export interface GenerationExchange {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  /** Made on arrival, before the guards; the hooks read the same one. */
  readonly telemetry: GenerationTelemetry;
}

/** One generation route: `POST {protocol.path}`, its body's DTO class, and its handler. */
export interface GenerationRoute<Body extends object = object> {
  readonly protocol: Pick<ProtocolDescriptor, 'api' | 'path'>;
  readonly body: new () => Body;
  /**
   * Answers through the reply, as a side effect of the subscription, and returns the engine
   * events for the hooks. A refusal throws, or fails the observable before anything is sent.
   */
  handle(body: Body, exchange: GenerationExchange): Observable<EngineEvent>;
}

/** Whatever fails a generation request before its answer is sent (ProtocolExceptionFilter). */
export interface ErrorAnswer {
  answer(error: unknown, request: FastifyRequest, reply: FastifyReply): void;
}

/** What runs around every generation route, resolved once when the gateway is built. */
export interface GenerationPlugins {
  /** In order; the first refusal ends the request. */
  guards: readonly RequestGuard[];
  hooks: GenerationHookChain;
  errors: ErrorAnswer;
  /** How long the guards may take to decide (`server.guardTimeoutMs`); past it the request is refused. Default: none. */
  guardTimeoutMs?: number;
}

/**
 * The Fastify handler of a generation route. Per request, in this order: the telemetry is made;
 * the guards run (a refusal is answered by `errors`, and no hook sees the request); the hooks
 * start; the body is validated as the route's DTO; the handler runs, and the hooks see each event
 * it emits and how it ended; whatever fails goes to the hooks' end, then to `errors`.
 *
 * Plain calls and one subscriber: no promise unless a guard returns one, nothing kept per open
 * stream beyond one object and the signal listener. The responder completes the handler's
 * observable when the client hangs up, which ends the request for the hooks.
 */
export function generationHandler(
  route: GenerationRoute,
  plugins: GenerationPlugins,
): (request: FastifyRequest, reply: FastifyReply) => void {
  return (request, reply) => new GenerationCall(route, plugins, request, reply).guard();
}

const FORBIDDEN = 'Forbidden resource';
const COMPLETED: GenerationOutcome = { kind: 'completed' };
const CLIENT_CLOSED: GenerationOutcome = { kind: 'client_closed' };
const logger = new Logger('Gantry');
/** Guards that keep missing their deadline are said at most once per interval. */
const guardTimeouts = new ThrottledWarning((message) => logger.warn(message));

/** One generation request through the pipeline: its exchange, and the observer of its events. */
class GenerationCall implements GenerationExchange, Observer<EngineEvent> {
  readonly telemetry: GenerationTelemetry;
  private stopSignals?: () => void;
  private ended = false;

  constructor(
    private readonly route: GenerationRoute,
    private readonly plugins: GenerationPlugins,
    readonly request: FastifyRequest,
    readonly reply: FastifyReply,
  ) {
    this.telemetry = new GenerationTelemetry(route.protocol.api);
  }

  guard(): void {
    let verdict: boolean | Promise<boolean>;
    try {
      verdict = passGuards(this.plugins.guards, this.request, this.reply, 0);
    } catch (error) {
      this.answer(error);
      return;
    }
    if (verdict === true) this.run();
    else if (verdict === false) this.answer(new ForbiddenException(FORBIDDEN));
    else this.await(verdict);
  }

  /**
   * A verdict that must wait (a store, a plugin's policy service), within `guardTimeoutMs`: past it
   * the request is refused and a later verdict ignored. The answer closes the response, which gives
   * back what a guard took for it (a `concurrentStreams` slot).
   */
  private await(verdict: Promise<boolean>): void {
    let decided = false;
    const timeoutMs = this.plugins.guardTimeoutMs;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            decided = true;
            guardTimeouts.failure(
              (more) =>
                `A guard of ${pathOf(this.request.url)} did not decide within ${timeoutMs} ms (server.guardTimeoutMs): the request was refused with 503${more}.`,
            );
            this.answer(
              new GatewayError(
                'unavailable',
                `The request could not be checked in time: a guard did not decide within ${timeoutMs} ms.`,
                { code: 'guard_timeout', retryAfterSeconds: 1 },
              ),
            );
          }, timeoutMs);
    const settle = (then: () => void) => {
      if (decided) return;
      decided = true;
      clearTimeout(timer);
      then();
    };
    void verdict.then(
      (allowed) => settle(() => (allowed ? this.run() : this.answer(new ForbiddenException(FORBIDDEN)))),
      (error: unknown) => settle(() => this.answer(error)),
    );
  }

  /** Each event is folded into the telemetry before the hooks see it: the one place events are observed. */
  next(event: EngineEvent): void {
    this.telemetry.observe(event);
    this.plugins.hooks.event(this.telemetry, event);
  }

  error(error: unknown): void {
    this.end({ kind: this.failedAfterAcceptance() ? 'failed' : 'rejected', error });
    this.answer(error);
  }

  complete(): void {
    this.end(this.telemetry.finishReason !== undefined ? COMPLETED : CLIENT_CLOSED);
  }

  private run(): void {
    const { hooks } = this.plugins;
    const telemetry = this.telemetry;
    let events$: Observable<EngineEvent>;
    try {
      hooks.start(telemetry, this.request);
      this.stopSignals = telemetry.onSignal((signal: LifecycleSignal) => hooks.signal(telemetry, signal));
      events$ = this.route.handle(validateRequestBody(this.route.body, this.request.body), this);
      // The handler decoded what it needs: the parsed body is not kept while the answer streams.
      releaseParsedBody(this.request);
    } catch (error) {
      this.error(error);
      return;
    }
    events$.subscribe(this);
  }

  /**
   * A failure is the request's (`failed`) once it was accepted and, for a stream, once its head
   * left (reported in-band); before that the client gets the error's own status (`rejected`).
   */
  private failedAfterAcceptance(): boolean {
    const { accepted, withdrawn, stream } = this.telemetry;
    return accepted && !withdrawn && (!stream || this.reply.raw.headersSent);
  }

  private end(outcome: GenerationOutcome): void {
    if (this.ended) return;
    this.ended = true;
    this.stopSignals?.();
    this.plugins.hooks.end(this.telemetry, outcome);
  }

  /** To `errors`; one that throws gets a 500 in the protocol's shape (a cut connection once the answer began). */
  private answer(error: unknown): void {
    try {
      this.plugins.errors.answer(error, this.request, this.reply);
    } catch (failure) {
      answerUnhandled(failure, this.request, this.reply);
    }
  }
}

/** Runs the guards in order; synchronous while they are. As in Nest, any falsy verdict refuses. */
function passGuards(
  guards: readonly RequestGuard[],
  request: FastifyRequest,
  reply: FastifyReply,
  from: number,
): boolean | Promise<boolean> {
  for (let index = from; index < guards.length; index += 1) {
    const verdict: unknown = guards[index].check(request, reply);
    if (verdict === true) continue;
    if (isThenable(verdict)) {
      return Promise.resolve(verdict).then((allowed) =>
        allowed ? passGuards(guards, request, reply, index + 1) : false,
      );
    }
    if (!verdict) return false;
  }
  return true;
}

/** Promises, and any other thenable (another library's, another realm's). */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

function answerUnhandled(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  logger.error(`The error answer failed on ${request.method} ${pathOf(request.url)}`, (error as Error)?.stack);
  if (reply.sent || reply.raw.headersSent) {
    if (!reply.raw.writableEnded) reply.raw.destroy();
    return;
  }
  const rendered = renderError(
    new GatewayError('internal', 'The gateway failed to serve this request.'),
    dialectOfPath(request.url),
  );
  void reply.status(rendered.status).headers(rendered.headers).send(rendered.body);
}
