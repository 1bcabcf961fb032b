import { describe, expect, it } from 'vitest';
import { fromAnthropicToolUseId, toAnthropicToolUseId } from './tool-use-id.js';

describe('Anthropic tool-use ids', () => {
  const engineIds = [
    'call_stub1_0',
    'chatcmpl-tool-6f1e0c9d2b4a48f1a3c2e7d9b0a1c2d3',
    'call_0a1b2c3d4e5f6a7b8c9d0e1f',
    'Ab3dE9gH1',
    'x',
    '\u0000lead',
    'é😀',
  ];

  it('look like Anthropic’s: toolu_01 then base62', () => {
    for (const id of engineIds) expect(toAnthropicToolUseId(id)).toMatch(/^toolu_01[0-9A-Za-z]+$/);
    expect(toAnthropicToolUseId('call_stub1_0')).toHaveLength('toolu_01A09q90qw90lq917835lq9'.length);
  });

  it('give the engine its own id back, without any state', () => {
    for (const id of engineIds) expect(fromAnthropicToolUseId(toAnthropicToolUseId(id))).toBe(id);
  });

  it('are the same for the same engine id, and differ between ids', () => {
    expect(toAnthropicToolUseId('call_1')).toBe(toAnthropicToolUseId('call_1'));
    expect(toAnthropicToolUseId('call_1')).not.toBe(toAnthropicToolUseId('call_2'));
  });

  it('pass ids Gantry did not make through unchanged', () => {
    for (const id of [
      'toolu_01A09q90qw90lq917835lq9',
      'toolu_01D7FLrfh4GYq7yT1ULFeyMV',
      'call_abc',
      'toolu_01',
      'toolu_01abc',
      '',
      'toolu_01' + 'z'.repeat(2000),
    ]) {
      expect(fromAnthropicToolUseId(id)).toBe(id);
    }
  });

  it('refuse an id whose check characters were altered', () => {
    const id = toAnthropicToolUseId('call_stub1_0');
    const altered = id.slice(0, -1) + (id.endsWith('0') ? '1' : '0');
    expect(fromAnthropicToolUseId(altered)).toBe(altered);
  });

  it('leave an over-long engine id as it is, so that it still maps back (and costs no quadratic encoding)', () => {
    const longest = 'c'.repeat(512);
    expect(fromAnthropicToolUseId(toAnthropicToolUseId(longest))).toBe(longest);
    expect(toAnthropicToolUseId(longest)).toMatch(/^toolu_01/);
    const tooLong = 'call_' + 'x'.repeat(100_000);
    expect(toAnthropicToolUseId(tooLong)).toBe(tooLong);
    expect(fromAnthropicToolUseId(tooLong)).toBe(tooLong);
  });
});
