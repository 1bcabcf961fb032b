import { describe, expect, it } from 'vitest';
import { makeTimings, type EngineEvent } from '../../engine/engine-event.js';
import { answerProgress } from './answer-progress.js';

const usage = (completionTokens: number) => ({
  promptTokens: 5,
  completionTokens,
  cachedTokens: 0,
  reasoningTokens: 0,
});
const timings = (predictedN: number) => makeTimings({ promptN: 5, promptMs: 1, predictedN, predictedMs: 1 });

describe('answerProgress', () => {
  it('output is progress: a token of text or reasoning, a tool-call piece; an empty text is not', () => {
    const progress = answerProgress();
    expect(progress({ type: 'text', text: 'a' })).toBe(true);
    expect(progress({ type: 'reasoning', text: 'b' })).toBe(true);
    expect(progress({ type: 'tool_call', index: 0, arguments: '' })).toBe(true);
    expect(progress({ type: 'text', text: '' })).toBe(false);
    expect(progress({ type: 'accepted' })).toBe(false);
  });

  it('counters are progress only when they grow: repeated usage (a drip of empty chunks) is not', () => {
    const progress = answerProgress();
    const ack = (tokens: number, predicted = 0): EngineEvent => ({
      type: 'ack',
      usage: usage(tokens),
      timings: timings(predicted),
    });
    expect(progress(ack(0))).toBe(false);
    expect(progress(ack(1))).toBe(true);
    expect(progress(ack(1))).toBe(false);
    expect(progress({ type: 'text', text: 'x', usage: usage(2), timings: timings(0) })).toBe(true);
    expect(progress(ack(2))).toBe(false);
    // llama.cpp's timings count tokens a parser still holds back.
    expect(progress(ack(2, 7))).toBe(true);
    expect(progress(ack(2, 7))).toBe(false);
  });
});
