import { describe, expect, it } from 'vitest';
import { classifyChatData, completionTokensOf } from './chat-frame.js';
import { SseReader, type SseMessage } from './sse-reader.js';

function read(pieces: string[]): { messages: SseMessage[]; comments: string[] } {
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  const reader = new SseReader(
    (message) => messages.push(message),
    (comment) => comments.push(comment),
  );
  for (const piece of pieces) reader.feed(piece);
  return { messages, comments };
}

describe('SseReader', () => {
  it('dispatches each frame at its blank line, however the text is split', () => {
    const wire = 'data: {"a":1}\n\nevent: ping\ndata: {"type":"ping"}\n\n: keep-alive\n\ndata: [DONE]\n\n';
    const whole = read([wire]);
    const bytewise = read([...wire]);
    expect(whole.messages).toEqual([
      { event: 'message', data: '{"a":1}' },
      { event: 'ping', data: '{"type":"ping"}' },
      { event: 'message', data: '[DONE]' },
    ]);
    expect(whole.comments).toEqual(['keep-alive']);
    expect(bytewise).toEqual(whole);
  });

  it('reads CRLF line ends, joins data lines, and takes the space after the colon as optional', () => {
    const { messages } = read(['data:one\r\ndata: two\r\n\r\n', 'data\n\n']);
    expect(messages).toEqual([
      { event: 'message', data: 'one\ntwo' },
      { event: 'message', data: '' },
    ]);
  });

  it('does not dispatch a frame without data, nor one the body cut short', () => {
    const { messages } = read(['event: ping\n\n', 'id: 7\n\n', 'data: half']);
    expect(messages).toEqual([]);
  });
});

describe('classifyChatData', () => {
  const chunk = (choice: string) =>
    `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[${choice}]}`;

  it('tells tokens, heartbeats, the end and errors apart', () => {
    expect(
      classifyChatData(chunk('{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}')),
    ).toBe('token');
    expect(classifyChatData(chunk('{"index":0,"delta":{"reasoning_content":"hm"},"finish_reason":null}'))).toBe(
      'token',
    );
    expect(classifyChatData(chunk('{"index":0,"delta":{},"finish_reason":null}'))).toBe('heartbeat');
    expect(classifyChatData('[DONE]')).toBe('done');
    expect(classifyChatData('{"error":{"message":"boom","type":"server_error"}}')).toBe('error');
  });

  it('counts the role, finish and usage chunks as other frames', () => {
    expect(
      classifyChatData(
        chunk('{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}'),
      ),
    ).toBe('other');
    expect(classifyChatData(chunk('{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}'))).toBe('other');
    expect(classifyChatData(chunk('{"index":0,"delta":{"content":""},"finish_reason":"length"}'))).toBe('other');
  });

  it('reads completion tokens from the usage chunk only', () => {
    const usage =
      '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":256,"total_tokens":259}}';
    expect(completionTokensOf(usage)).toBe(256);
    expect(completionTokensOf(chunk('{"index":0,"delta":{"content":"x"}}'))).toBeUndefined();
  });
});
