import { describe, expect, it } from 'vitest';
import { completionLogprobsOf } from './completion-logprobs.js';

describe('an upstream completion’s logprobs', () => {
  it('passes on the four lists, top_logprobs filled with nulls where absent', () => {
    const lists = { tokens: ['a'], token_logprobs: [-0.5], text_offset: [0] };
    expect(completionLogprobsOf({ ...lists, top_logprobs: [{ a: -0.5 }] })).toEqual({
      ...lists,
      top_logprobs: [{ a: -0.5 }],
    });
    expect(completionLogprobsOf(lists)).toEqual({ ...lists, top_logprobs: [null] });
  });

  it('drops null and any other shape', () => {
    expect(completionLogprobsOf(null)).toBeUndefined();
    expect(completionLogprobsOf({ content: [{ token: 'a', logprob: -1 }] })).toBeUndefined();
    expect(completionLogprobsOf({ tokens: ['a', 'b'], token_logprobs: [-1], text_offset: [0, 1] })).toBeUndefined();
  });
});
