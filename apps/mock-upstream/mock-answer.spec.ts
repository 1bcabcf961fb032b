import { describe, expect, it } from 'vitest';
import { planAnswer } from './mock-answer.js';
import { DEFAULT_BEHAVIOUR, failurePoint, type MockBehaviour } from './mock-behaviour.js';

const user = { role: 'user', content: 'one two three four five' };
const contents = (steps: ReturnType<typeof planAnswer>['steps']) =>
  steps.map((step) => (step.kind === 'content' ? step.text : `<${step.kind}>`));
const continuing = (partial: string, extra: Record<string, unknown> = {}) => ({
  messages: [user, { role: 'assistant', content: partial }],
  continue_final_message: true,
  add_generation_prompt: false,
  ...extra,
});

describe('planAnswer continuing a final assistant message', () => {
  it('answers the rest of what a fresh request gets, so the two read as one answer', () => {
    const fresh = planAnswer({ messages: [user] }, DEFAULT_BEHAVIOUR, 'call');
    const rest = planAnswer(continuing('one two'), DEFAULT_BEHAVIOUR, 'call');
    expect(rest.offset).toBe(2);
    expect(contents(rest.steps)).toEqual([' three', ' four', ' five']);
    expect(['one', ' two', ...contents(rest.steps)].join('')).toBe(contents(fresh.steps).join(''));
    expect(rest.finishReason).toBe('stop');
  });

  it('goes on inside a word the partial text ends in', () => {
    expect(contents(planAnswer(continuing('one two th'), DEFAULT_BEHAVIOUR, 'call').steps)).toEqual([
      'ree',
      ' four',
      ' five',
    ]);
  });

  it('counts max_tokens from where it goes on, and sends no reasoning again', () => {
    const behaviour: MockBehaviour = { ...DEFAULT_BEHAVIOUR, reasoning: 'think first' };
    expect(contents(planAnswer({ messages: [user], max_tokens: 4 }, behaviour, 'call').steps)).toEqual([
      '<reasoning>',
      '<reasoning>',
      'one',
      ' two',
    ]);
    const rest = planAnswer(continuing('one two', { max_tokens: 2 }), behaviour, 'call');
    expect(contents(rest.steps)).toEqual([' three', ' four']);
    expect(rest.finishReason).toBe('length');
    const repeated = planAnswer(
      continuing('token token', { max_tokens: 3 }),
      { ...DEFAULT_BEHAVIOUR, tokens: 1_000_000 },
      'call',
    );
    expect(contents(repeated.steps)).toEqual([' token', ' token', ' token']);
  });
});

describe('failurePoint', () => {
  const breaking = (failAtTokens: number[]): MockBehaviour => ({ ...DEFAULT_BEHAVIOUR, failure: 'drop', failAtTokens });

  it('breaks an answer at positions of the whole answer: each continuation at the next one after its start', () => {
    expect(failurePoint(breaking([3, 5]), 0)).toBe(3);
    expect(failurePoint(breaking([3, 5]), 3)).toBe(2);
    expect(failurePoint(breaking([3, 5]), 5)).toBeUndefined();
  });

  it('breaks every response after failAfterTokens otherwise, and never without a failure', () => {
    expect(failurePoint({ ...DEFAULT_BEHAVIOUR, failure: 'stall', failAfterTokens: 2 }, 7)).toBe(2);
    expect(failurePoint(DEFAULT_BEHAVIOUR, 0)).toBeUndefined();
    expect(failurePoint({ ...DEFAULT_BEHAVIOUR, failure: 'status' }, 0)).toBeUndefined();
  });
});
