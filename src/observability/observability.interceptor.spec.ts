import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { Observable, of, toArray, lastValueFrom, type Subscriber } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { EngineEvent } from '../engine/engine-event.js';
import { ZERO_USAGE } from '../engine/engine-event.js';
import { GenerationInterceptor, type GenerationOutcome } from './generation-interceptor.js';
import type { GenerationTelemetry } from './generation-telemetry.js';
import { ObservabilityInterceptor } from './observability.interceptor.js';
import { attachTelemetry } from './request-telemetry.js';

/** Records each hook it gets, under its own name, into a shared log. */
class RecordingInterceptor extends GenerationInterceptor {
  constructor(
    private readonly name: string,
    private readonly log: string[],
  ) {
    super();
  }
  protected override onStart(): void {
    this.log.push(`${this.name}:start`);
  }
  protected override onAccepted(): void {
    this.log.push(`${this.name}:accepted`);
  }
  protected override onEvent(_telemetry: GenerationTelemetry, event: EngineEvent): void {
    this.log.push(`${this.name}:${event.type}`);
  }
  protected override onEnd(_telemetry: GenerationTelemetry, outcome: GenerationOutcome): void {
    this.log.push(`${this.name}:end ${outcome.kind}`);
  }
}

function contextOf(request: object): ExecutionContext {
  return {
    getHandler: () => () => undefined,
    switchToHttp: () => ({ getRequest: () => request }),
  } as unknown as ExecutionContext;
}

describe('ObservabilityInterceptor', () => {
  it('runs hosted hooks as nested interceptors would: start and signals outermost first, events and the end innermost first', () => {
    const log: string[] = [];
    const hosted = [new RecordingInterceptor('outer', log), new RecordingInterceptor('inner', log)];
    const interceptor = new ObservabilityInterceptor(hosted);
    const request = { headers: {} };
    const telemetry = attachTelemetry(request, 'chat');
    let handler!: Subscriber<unknown>;
    const next: CallHandler = { handle: () => new Observable((subscriber) => void (handler = subscriber)) };

    const seen: unknown[] = [];
    interceptor.intercept(contextOf(request), next).subscribe({ next: (event) => seen.push(event) });
    telemetry.markAccepted({ model: 'stub', engine: 'stub', stream: true });
    const done: EngineEvent = { type: 'done', finishReason: 'stop', usage: ZERO_USAGE };
    telemetry.observe(done);
    handler.next(done);
    handler.complete();

    expect(seen).toEqual([done]);
    expect(log).toEqual([
      'outer:start',
      'inner:start',
      'outer:accepted',
      'inner:accepted',
      'inner:done',
      'outer:done',
      'inner:end completed',
      'outer:end completed',
    ]);
  });

  it('ends every hosted interceptor once when the client hangs up', () => {
    const log: string[] = [];
    const interceptor = new ObservabilityInterceptor([new RecordingInterceptor('a', log), new RecordingInterceptor('b', log)]);
    const next: CallHandler = { handle: () => new Observable(() => undefined) };
    const request = { headers: {} };
    attachTelemetry(request, 'chat');
    interceptor.intercept(contextOf(request), next).subscribe().unsubscribe();
    expect(log).toEqual(['a:start', 'b:start', 'b:end client_closed', 'a:end client_closed']);
  });

  it('leaves a request that carries no generation telemetry alone', async () => {
    const log: string[] = [];
    const interceptor = new ObservabilityInterceptor([new RecordingInterceptor('a', log)]);
    const answer$ = of('models', 'list');
    const handled = interceptor.intercept(contextOf({ headers: {} }), { handle: () => answer$ });
    expect(handled).toBe(answer$);
    expect(await lastValueFrom(handled.pipe(toArray()))).toEqual(['models', 'list']);
    expect(log).toEqual([]);
  });

});
