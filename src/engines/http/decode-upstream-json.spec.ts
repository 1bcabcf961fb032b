import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../engine/engine-event.js';
import { decodeUpstreamJson } from './decode-upstream-json.js';
import { UpstreamError } from './upstream-error.js';

/** Feeds a body, split in two pieces, through decodeUpstreamJson with a clock at 40 ms. */
function decode(body: string) {
  const pieces = new Subject<string>();
  const events: EngineEvent[] = [];
  let error: unknown;
  let completed = false;
  pieces.pipe(decodeUpstreamJson(() => 40)).subscribe({
    next: (event) => events.push(event),
    error: (failure) => (error = failure),
    complete: () => (completed = true),
  });
  const half = Math.floor(body.length / 2);
  pieces.next(body.slice(0, half));
  const before = events.length;
  pieces.next(body.slice(half));
  pieces.complete();
  return { events, error, completed, before };
}

const answer = (
  message: string,
  finish = 'stop',
  usage = '{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}',
) =>
  `{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"message":${message},"logprobs":null,"finish_reason":"${finish}","stop_reason":null}],"usage":${usage}}`;

describe('decodeUpstreamJson', () => {
  it('reads a whole answer as one chunk: reasoning (either name) with the usage on it, text, done; nothing before the end', () => {
    for (const field of ['reasoning', 'reasoning_content']) {
      const { events, completed, before } = decode(
        answer(`{"role":"assistant","content":"Paris.","${field}":"Capital of France."}`),
      );
      expect(before).toBe(0);
      expect(completed).toBe(true);
      expect(events.map((event) => event.type)).toEqual(['reasoning', 'text', 'done']);
      expect(events[0]).toMatchObject({
        type: 'reasoning',
        text: 'Capital of France.',
        usage: { promptTokens: 5, completionTokens: 3 },
      });
      expect(events[1]).toEqual({ type: 'text', text: 'Paris.' });
      // The usage has no reasoning count: none is made up from the one "chunk".
      expect(events[2]).toMatchObject({
        type: 'done',
        finishReason: 'stop',
        usage: { promptTokens: 5, completionTokens: 3, reasoningTokens: 0 },
      });
    }
  });

  it('gives each tool call its index, with id, name and the whole arguments', () => {
    const calls =
      '[{"id":"call_a","type":"function","function":{"name":"f","arguments":"{\\"x\\":1}"}},{"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]';
    const { events } = decode(answer(`{"role":"assistant","content":null,"tool_calls":${calls}}`, 'tool_calls'));
    expect(events.filter((event) => event.type === 'tool_call')).toEqual([
      {
        type: 'tool_call',
        index: 0,
        id: 'call_a',
        name: 'f',
        arguments: '{"x":1}',
        usage: expect.objectContaining({ completionTokens: 3 }),
        timings: expect.any(Object),
      },
      { type: 'tool_call', index: 1, id: 'call_b', name: 'g', arguments: '{}' },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'tool_calls' });
  });

  it('fails with an UpstreamError on a malformed body, a non-object or an error object', () => {
    expect(decode('{"id": "chatcmpl-broken", "choices": [').error).toMatchObject({
      message: expect.stringMatching(/malformed JSON answer/),
    });
    expect(decode('[1,2]').error).toBeInstanceOf(UpstreamError);
    const failed = decode('{"error":{"message":"context length exceeded","type":"BadRequestError","code":400}}');
    expect(failed.error).toBeInstanceOf(UpstreamError);
    expect((failed.error as Error).message).toMatch(/context length exceeded/);
    expect(failed.events).toEqual([]);
  });

  it('ends an answer without a finish reason as stop: the body was whole', () => {
    expect(decode('{"choices":[{"index":0,"message":{"content":"cut"}}]}').events.at(-1)).toMatchObject({
      type: 'done',
      finishReason: 'stop',
    });
  });
});
