import { describe, expect, it } from 'vitest';
import { inputItemProblem } from './responses-input.js';

describe('inputItemProblem', () => {
  it.each([
    [
      'a reasoning item as Codex sends it back',
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 's' }], content: null, encrypted_content: 'blob' },
    ],
    ['a reasoning item without sealed content', { type: 'reasoning', summary: [], encrypted_content: null }],
    [
      'a namespaced function call',
      { type: 'function_call', call_id: 'c', name: 'read_file', namespace: 'mcp__files__', arguments: '{}' },
    ],
    ['a custom tool call', { type: 'custom_tool_call', call_id: 'c', name: 'apply_patch', input: '*** Begin Patch' }],
    ['a custom tool output', { type: 'custom_tool_call_output', call_id: 'c', output: 'done' }],
    [
      'a function output with an image',
      {
        type: 'function_call_output',
        call_id: 'c',
        output: [
          { type: 'input_text', text: 'x' },
          { type: 'input_image', image_url: 'data:,' },
        ],
      },
    ],
  ])('accepts %s', (_, item) => {
    expect(inputItemProblem(item)).toBeUndefined();
  });

  it.each([
    ['sealed content that is not a string', { type: 'reasoning', encrypted_content: 5 }, /encrypted_content/],
    [
      'a namespace that is not a string',
      { type: 'function_call', call_id: 'c', name: 'f', namespace: 3, arguments: '{}' },
      /namespace/,
    ],
    ['a custom call without input', { type: 'custom_tool_call', call_id: 'c', name: 'apply_patch' }, /input/],
    ['a custom output without call_id', { type: 'custom_tool_call_output', output: 'done' }, /call_id/],
    ['an item reference without an id', { type: 'item_reference' }, /item_reference needs the id/],
  ])('refuses %s', (_, item, message) => {
    expect(inputItemProblem(item)).toMatch(message);
  });
});
