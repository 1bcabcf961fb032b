import { describe, expect, it } from 'vitest';
import { RawOutputParser, type RawOutputParserOptions } from './raw-output-parser.js';

function run(pieces: string[], options: Partial<RawOutputParserOptions> = {}) {
  const parser = new RawOutputParser({ stops: [], toolCalls: true, newCallId: () => 'call_1', ...options });
  const deltas = [];
  for (const piece of pieces) {
    const step = parser.push(piece);
    deltas.push(...step.deltas);
    if (step.stop) return { deltas, stop: step.stop };
  }
  return { deltas: [...deltas, ...parser.finish()], stop: undefined };
}

describe('RawOutputParser', () => {
  it('splits reasoning, answer and a tool call from one token stream', () => {
    const pieces = [
      '<think>',
      'look it up',
      '</think>',
      'Checking.',
      '<tool_',
      'call>{"name":"f","arguments":{"x":1}}</tool_call>',
    ];
    expect(run(pieces).deltas).toEqual([
      { type: 'reasoning', text: 'look it up' },
      { type: 'text', text: 'Checking.' },
      { type: 'tool_call', index: 0, id: 'call_1', name: 'f', arguments: '{"x":1}' },
    ]);
  });

  it('stops at a client stop string split across tokens and reports it', () => {
    const result = run(['Hello wo', 'rl', 'd and more'], { stops: ['world'] });
    expect(result.deltas.map((delta) => delta.type === 'text' && delta.text).join('')).toBe('Hello ');
    expect(result.stop).toEqual({ sequence: 'world', requested: true });
  });

  it('ends at a template end-of-turn text without calling it a client stop', () => {
    const result = run(['Done.<|im', '_end|>', 'junk'], { hiddenStops: ['<|im_end|>'] });
    expect(result.deltas).toEqual([{ type: 'text', text: 'Done.' }]);
    expect(result.stop).toEqual({ sequence: '<|im_end|>', requested: false });
  });

  it('matches stop strings inside the reasoning too, releasing what was held', () => {
    const result = run(['<think>abc', ' STOP'], { stops: ['STOP'] });
    expect(result.deltas).toEqual([{ type: 'reasoning', text: 'abc' }]);
    expect(result.stop?.sequence).toBe('STOP');
  });

  it('leaves tool-call tags as text when the request offered no tools', () => {
    const result = run(['<tool_call>{"name":"f"}</tool_call>'], { toolCalls: false });
    expect(result.deltas).toEqual([{ type: 'text', text: '<tool_call>{"name":"f"}</tool_call>' }]);
  });
});
