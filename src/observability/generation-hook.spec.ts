import { describe, expect, it } from 'vitest';
import type { AnswerResume } from '../engine/answer-resume.js';
import type { EngineEvent } from '../engine/engine-event.js';
import { ZERO_USAGE } from '../engine/engine-event.js';
import { GenerationHook, type GenerationOutcome } from './generation-hook.js';
import { GenerationTelemetry } from './generation-telemetry.js';

/** Records each hook it gets, under its own name, into a shared log. */
class RecordingHook extends GenerationHook {
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
  protected override onAdmitted(): void {
    this.log.push(`${this.name}:admitted`);
  }
  protected override onHeartbeat(): void {
    this.log.push(`${this.name}:heartbeat`);
  }
  protected override onResumed(_telemetry: GenerationTelemetry, resume: AnswerResume): void {
    this.log.push(`${this.name}:resumed ${resume.resume} ${resume.reason}`);
  }
  protected override onEvent(_telemetry: GenerationTelemetry, event: EngineEvent): void {
    this.log.push(`${this.name}:${event.type}`);
  }
  protected override onEnd(_telemetry: GenerationTelemetry, outcome: GenerationOutcome): void {
    this.log.push(`${this.name}:end ${outcome.kind}`);
  }
}

describe('GenerationHook.chain', () => {
  it('runs the hooks as nested interceptors would: start and signals outermost first, events and the end innermost first', () => {
    const log: string[] = [];
    const hooks = GenerationHook.chain([new RecordingHook('outer', log), new RecordingHook('inner', log)]);
    const telemetry = new GenerationTelemetry('chat');
    const done: EngineEvent = { type: 'done', finishReason: 'stop', usage: ZERO_USAGE };

    hooks.start(telemetry, { headers: {} });
    for (const signal of ['accepted', 'admitted', 'heartbeat'] as const) hooks.signal(telemetry, signal);
    hooks.event(telemetry, done);
    hooks.end(telemetry, { kind: 'completed' });

    expect(log).toEqual([
      'outer:start',
      'inner:start',
      'outer:accepted',
      'inner:accepted',
      'outer:admitted',
      'inner:admitted',
      'outer:heartbeat',
      'inner:heartbeat',
      'inner:done',
      'outer:done',
      'inner:end completed',
      'outer:end completed',
    ]);
  });

  it('hands each resume the engine reports through the telemetry to every hook, with what it was', () => {
    const log: string[] = [];
    const hooks = GenerationHook.chain([new RecordingHook('a', log), new RecordingHook('b', log)]);
    const telemetry = new GenerationTelemetry('chat');
    telemetry.onSignal((signal) => hooks.signal(telemetry, signal));
    telemetry.markResumed({ reason: 'reset', resume: 1, producedTokens: 3, from: 'http://a/v1', to: 'http://b/v1' });
    telemetry.markResumed({ reason: 'stall', resume: 2, producedTokens: 5, from: 'http://b/v1', to: 'http://c/v1' });
    expect(log).toEqual(['a:resumed 1 reset', 'b:resumed 1 reset', 'a:resumed 2 stall', 'b:resumed 2 stall']);
    expect(telemetry.resumes).toHaveLength(2);
  });

  it('ends every hook, innermost first, when the client hangs up', () => {
    const log: string[] = [];
    const hooks = GenerationHook.chain([new RecordingHook('a', log), new RecordingHook('b', log)]);
    const telemetry = new GenerationTelemetry('chat');
    hooks.start(telemetry, { headers: {} });
    hooks.end(telemetry, { kind: 'client_closed' });
    expect(log).toEqual(['a:start', 'b:start', 'b:end client_closed', 'a:end client_closed']);
  });

  it('isolates every call: a hook that throws in any method is reported, and the other hooks still run', () => {
    const log: string[] = [];
    class ThrowingHook extends RecordingHook {
      protected override onStart(): void {
        throw new Error('start');
      }
      protected override onAccepted(): void {
        throw new Error('accepted');
      }
      protected override onAdmitted(): void {
        throw new Error('admitted');
      }
      protected override onHeartbeat(): void {
        throw new Error('heartbeat');
      }
      protected override onResumed(): void {
        throw new Error('resumed');
      }
      protected override onEvent(): void {
        throw new Error('event');
      }
      protected override onEnd(): void {
        throw new Error('end');
      }
    }
    const failures: string[] = [];
    const hooks = GenerationHook.chain(
      [new RecordingHook('outer', log), new ThrowingHook('throwing', log), new RecordingHook('inner', log)],
      (hook, method, error) => failures.push(`${hook.constructor.name}.${method}: ${(error as Error).message}`),
    );
    const telemetry = new GenerationTelemetry('chat');
    telemetry.onSignal((signal) => hooks.signal(telemetry, signal));

    hooks.start(telemetry, { headers: {} });
    telemetry.markAccepted({ model: 'm', engine: 'stub', stream: true });
    telemetry.markAdmitted();
    telemetry.markHeartbeat();
    telemetry.markResumed({ reason: 'reset', resume: 1, producedTokens: 1, from: 'http://a/v1', to: 'http://b/v1' });
    hooks.event(telemetry, { type: 'done', finishReason: 'stop', usage: ZERO_USAGE });
    hooks.end(telemetry, { kind: 'completed' });

    expect(log).toEqual([
      'outer:start',
      'inner:start',
      'outer:accepted',
      'inner:accepted',
      'outer:admitted',
      'inner:admitted',
      'outer:heartbeat',
      'inner:heartbeat',
      'outer:resumed 1 reset',
      'inner:resumed 1 reset',
      'inner:done',
      'outer:done',
      'inner:end completed',
      'outer:end completed',
    ]);
    expect(failures).toEqual([
      'ThrowingHook.onStart: start',
      'ThrowingHook.onAccepted: accepted',
      'ThrowingHook.onAdmitted: admitted',
      'ThrowingHook.onHeartbeat: heartbeat',
      'ThrowingHook.onResumed: resumed',
      'ThrowingHook.onEvent: event',
      'ThrowingHook.onEnd: end',
    ]);
  });

  it('is not changed by a later change to the list it was made from', () => {
    const log: string[] = [];
    const list = [new RecordingHook('a', log)];
    const hooks = GenerationHook.chain(list);
    list.push(new RecordingHook('b', log));
    hooks.start(new GenerationTelemetry('chat'), { headers: {} });
    expect(log).toEqual(['a:start']);
  });
});
