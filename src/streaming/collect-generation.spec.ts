import { describe, expect, it } from 'vitest';
import { makeTimings, ZERO_USAGE } from '../engine/engine-event.js';
import { collectEvent, emptyGeneration } from './collect-generation.js';

describe('collectEvent', () => {
  it('takes the usage and timings of an ack, or of an output piece that carries them, and the final usage', () => {
    const result = emptyGeneration();
    const timings = makeTimings({ promptN: 3, promptMs: 20, predictedN: 1, predictedMs: 0 });
    const usage = { ...ZERO_USAGE, promptTokens: 3, completionTokens: 1 };
    collectEvent(result, { type: 'reasoning', text: 'hm', usage, timings });
    collectEvent(result, { type: 'text', text: 'Yes' });
    expect(result).toMatchObject({ text: 'Yes', reasoning: 'hm', usage, timings });
    collectEvent(result, { type: 'done', finishReason: 'stop', usage: { ...usage, completionTokens: 2 } });
    expect(result).toMatchObject({ finishReason: 'stop', usage: { completionTokens: 2 }, timings });
  });
});
