import { describe, expect, it } from 'vitest';
import { checkToolChoice } from './tool-choice.js';

describe('checkToolChoice', () => {
  it('defaults to auto with tools and none without', () => {
    expect(checkToolChoice(undefined, ['a'], 'tool_choice')).toBe('auto');
    expect(checkToolChoice(undefined, [], 'tool_choice')).toBe('none');
  });

  it('keeps required and a named tool that exists', () => {
    expect(checkToolChoice('required', ['a'], 'tool_choice')).toBe('required');
    expect(checkToolChoice({ name: 'b' }, ['a', 'b'], 'tool_choice')).toEqual({ name: 'b' });
  });

  it('refuses required without tools and a name not among them, naming the field', () => {
    expect(() => checkToolChoice('required', [], 'tool_choice')).toThrow(/requires a tool/);
    let refusal: unknown;
    try {
      checkToolChoice({ name: 'c' }, ['a'], 'tool_choice.name');
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({ kind: 'invalid_request', param: 'tool_choice.name' });
  });
});
