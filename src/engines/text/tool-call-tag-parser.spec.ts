import { describe, expect, it } from 'vitest';
import { ToolCallTagParser } from './tool-call-tag-parser.js';

function parse(pieces: string[]) {
  let next = 0;
  const parser = new ToolCallTagParser({ newCallId: () => `call_${++next}` });
  const perPiece = pieces.map((piece) => parser.push(piece));
  const all = [...perPiece.flat(), ...parser.flush()];
  const text = all.flatMap((piece) => (piece.type === 'text' ? [piece.text] : [])).join('');
  const calls = all.filter((piece) => piece.type === 'tool_call');
  return { text, calls, perPiece };
}

const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';

describe('ToolCallTagParser', () => {
  it('turns a tagged JSON call into one tool_call piece with id, name and arguments', () => {
    expect(parse([CALL])).toEqual({
      text: '',
      calls: [{ type: 'tool_call', index: 0, id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      perPiece: expect.any(Array),
    });
  });

  it('finds calls whose tags and JSON are split across tokens, and shows no part of them', () => {
    const pieces = [...CALL.match(/.{1,3}/gs)!];
    const result = parse(pieces);
    expect(result.text).toBe('');
    expect(result.calls).toMatchObject([{ name: 'get_weather', arguments: '{"city":"Paris"}' }]);
  });

  it('keeps text before the call and numbers parallel calls, dropping the whitespace between them', () => {
    const second = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>';
    const result = parse(['Let me check.\n', CALL, '\n', second, '\n']);
    expect(result.text).toBe('Let me check.');
    expect(
      result.calls.map((call) => [call.type === 'tool_call' && call.index, call.type === 'tool_call' && call.name]),
    ).toEqual([
      [0, 'get_weather'],
      [1, 'get_time'],
    ]);
  });

  it('gives a body that is not a call back as text, tags included', () => {
    expect(parse(['<tool_call>not json</tool_call> ok'])).toMatchObject({
      text: '<tool_call>not json</tool_call> ok',
      calls: [],
    });
  });

  it('accepts an unclosed call at the end of the output when its JSON is complete', () => {
    expect(parse(['<tool_call>{"name": "f", "arguments": "{\\"a\\":1}"}']).calls).toMatchObject([
      { name: 'f', arguments: '{"a":1}' },
    ]);
  });

  it('holds back a possible opening tag, then releases it when it is not one', () => {
    const result = parse(['see <tool', '_tip> here']);
    expect(result.perPiece[0]).toEqual([{ type: 'text', text: 'see' }]);
    expect(result.text).toBe('see <tool_tip> here');
  });
});
