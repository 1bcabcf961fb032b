import { describe, expect, it } from 'vitest';
import { makeTimings, ZERO_USAGE, type TokenUsage } from '../engine/engine-event.js';
import { GenerationTelemetry } from './generation-telemetry.js';

const usage = (completionTokens: number): TokenUsage => ({ ...ZERO_USAGE, promptTokens: 4, completionTokens });
const timings = makeTimings({ promptN: 4, promptMs: 10, predictedN: 1, predictedMs: 0 });

describe('GenerationTelemetry.observe', () => {
  it('folds the counters of an ack and those an output piece carries, and counts the output', () => {
    const telemetry = new GenerationTelemetry('chat');
    telemetry.observe({ type: 'accepted', usage: usage(0) });
    expect(telemetry.usage).toBe(ZERO_USAGE);
    telemetry.observe({ type: 'ack', usage: usage(0), timings });
    telemetry.observe({ type: 'text', text: 'a', usage: usage(1), timings });
    telemetry.observe({ type: 'text', text: 'b' });
    expect(telemetry.usage).toEqual(usage(1));
    telemetry.observe({
      type: 'tool_call',
      index: 0,
      id: 'call_1',
      name: 'f',
      arguments: '{}',
      usage: usage(3),
      timings,
    });
    expect(telemetry).toMatchObject({ usage: usage(3), outputEvents: 3 });
    expect(telemetry.firstOutputAt).toBeDefined();
    // An empty piece is no output, but its counters count.
    telemetry.observe({ type: 'text', text: '', usage: usage(4), timings });
    expect(telemetry).toMatchObject({ usage: usage(4), outputEvents: 3 });
  });
});
