import { describe, expect, it } from 'vitest';
import { conversationOf, storedInputItems } from './conversation-items.js';
import type { StoredResponse } from './response-store.js';

const counter = () => {
  let next = 0;
  return (prefix: string) => `${prefix}${(next += 1)}`;
};

describe('storedInputItems', () => {
  it('makes a string input one user message with an input_text part', () => {
    expect(storedInputItems('hi', counter())).toEqual([
      {
        id: 'msg_1',
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: 'hi' }],
        status: 'completed',
      },
    ]);
  });

  it('gives each item a new id of its kind (not the one it came with), and writes message text as parts', () => {
    const items = storedInputItems(
      [
        { role: 'assistant', content: 'before' },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}', id: 'fc_given' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
        { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'r' }] },
      ],
      counter(),
    );
    expect(items.map((item) => item.id)).toEqual(['msg_1', 'fc_2', 'fco_3', 'rs_4']);
    expect(items[0]).toMatchObject({ role: 'assistant', content: [{ type: 'output_text', text: 'before' }] });
  });
});

describe('conversationOf', () => {
  const record = (input: string, output: unknown[], previous: string | null): StoredResponse => ({
    response: { id: `resp_${input}`, status: 'completed', output },
    inputItems: [{ id: `msg_${input}`, type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }],
    previousResponseId: previous,
  });

  it('lays the chain out oldest first: each input, then its output; sealed copies of kept reasoning left out', () => {
    const reasoning = {
      id: 'rs_1',
      type: 'reasoning',
      summary: [],
      content: [{ type: 'reasoning_text', text: 'why' }],
      encrypted_content: 'sealed',
    };
    const answer = { id: 'msg_a', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'A' }] };
    const chain = [record('second', [], 'resp_first'), record('first', [reasoning, answer], null)];
    expect(conversationOf(chain).map((item) => (item as { id: string }).id)).toEqual([
      'msg_first',
      'rs_1',
      'msg_a',
      'msg_second',
    ]);
    expect(conversationOf(chain)[1]).not.toHaveProperty('encrypted_content');
  });
});
