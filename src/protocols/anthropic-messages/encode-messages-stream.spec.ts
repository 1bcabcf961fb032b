import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { countersOnOutput, payloadsOf, scripts, transcriptOf } from '../../../test/support/transcript.js';
import { EngineError } from '../../engine/engine-error.js';
import { encodeMessagesStream } from './encode-messages-stream.js';
import { fromAnthropicToolUseId } from './tool-use-id.js';

const encoder = () => encodeMessagesStream({ id: 'msg_1', model: 'stub', inputTokens: 3 });
const golden = (name: string) => `./__golden__/${name}.sse`;

describe('encodeMessagesStream and counters on output pieces', () => {
  it.each(Object.keys(scripts) as Array<keyof typeof scripts>)(
    '%s: the same events as with the acks apart',
    async (name) => {
      const failure = name === 'failureAfterHeartbeat' ? new EngineError('upstream', 'gone') : undefined;
      expect(await transcriptOf(countersOnOutput(scripts[name]()), encoder(), failure)).toBe(
        await transcriptOf(scripts[name](), encoder(), failure),
      );
    },
  );
});

describe('encodeMessagesStream (golden transcripts)', () => {
  it('text with pings before the first output', async () => {
    await expect(await transcriptOf(scripts.text(), encoder())).toMatchFileSnapshot(golden('text'));
  });

  it('a thinking block (with its signature) before the text block', async () => {
    await expect(await transcriptOf(scripts.reasoning(), encoder())).toMatchFileSnapshot(golden('thinking'));
  });

  it('one tool_use block per tool call (Anthropic-shaped ids), arguments as input_json_delta', async () => {
    await expect(await transcriptOf(scripts.toolCalls(), encoder())).toMatchFileSnapshot(golden('tool-use'));
  });

  it('message_start carries the input tokens counted before the stream; message_delta repeats them', async () => {
    const events = payloadsOf(
      await transcriptOf(scripts.text(), encodeMessagesStream({ id: 'msg_1', model: 'stub', inputTokens: 42 })),
    );
    expect(events[0].message.usage).toEqual({ input_tokens: 42, output_tokens: 0 });
    expect(events.find((event) => event.type === 'message_delta').usage).toEqual({
      input_tokens: 42,
      output_tokens: 2,
    });
  });

  it('message_start carries the engine’s split into fresh and cached tokens when it comes with the acceptance, and message_delta agrees', async () => {
    const split = { promptTokens: 115, completionTokens: 0, cachedTokens: 114, reasoningTokens: 0 };
    const events = payloadsOf(
      await transcriptOf(
        [
          { type: 'accepted', usage: split },
          ...scripts.text().slice(1, -1),
          { type: 'done', finishReason: 'stop', usage: { ...split, completionTokens: 2 } },
        ],
        encodeMessagesStream({ id: 'msg_1', model: 'stub', inputTokens: 115 }),
      ),
    );
    expect(events[0].message.usage).toEqual({ input_tokens: 1, output_tokens: 0, cache_read_input_tokens: 114 });
    expect(events.find((event) => event.type === 'message_delta').usage).toEqual({
      input_tokens: 1,
      output_tokens: 2,
      cache_read_input_tokens: 114,
    });
  });

  it('opens with the first event, not on subscription: a heartbeat first gives message_start then ping', async () => {
    const frames: string[] = [];
    const source = new Subject<StreamEvent>();
    source.pipe(encoder()).subscribe((frame) => frames.push('event' in frame ? String(frame.event) : ''));
    expect(frames).toEqual([]);
    source.next({ type: 'heartbeat', n: 0 });
    expect(frames).toEqual(['message_start', 'ping']);
  });

  it('stop_sequence with the matched string', async () => {
    await expect(await transcriptOf(scripts.stopSequence(), encoder())).toMatchFileSnapshot(golden('stop-sequence'));
  });

  it('max_tokens', async () => {
    await expect(await transcriptOf(scripts.length(), encoder())).toMatchFileSnapshot(golden('max-tokens'));
  });

  it('an error after a ping: event error, and no message_stop', async () => {
    const failure = new EngineError('overloaded', 'The engine is overloaded.');
    const text = await transcriptOf(scripts.failureAfterHeartbeat(), encoder(), failure);
    await expect(text).toMatchFileSnapshot(golden('error'));
    expect(text).not.toContain('message_stop');
  });
});

describe('encodeMessagesStream with interleaved tool calls', () => {
  it('keeps one tool_use block per call and routes every piece to its call', async () => {
    const text = await transcriptOf(
      [
        { type: 'tool_call', index: 0, id: 'a', name: 'f', arguments: '{"x":' },
        { type: 'tool_call', index: 1, id: 'b', name: 'g', arguments: '{"y":' },
        { type: 'tool_call', index: 0, arguments: '1}' },
        { type: 'tool_call', index: 1, arguments: '2}' },
        {
          type: 'done',
          finishReason: 'tool_calls',
          usage: { promptTokens: 1, completionTokens: 4, cachedTokens: 0, reasoningTokens: 0 },
        },
      ],
      encoder(),
    );
    const events = payloadsOf(text);
    const starts = events.filter((event) => event.type === 'content_block_start');
    expect(
      starts.map((event) => [event.index, event.content_block.name, fromAnthropicToolUseId(event.content_block.id)]),
    ).toEqual([
      [0, 'f', 'a'],
      [1, 'g', 'b'],
    ]);
    const inputOf = (index: number) =>
      JSON.parse(
        events
          .filter((event) => event.type === 'content_block_delta' && event.index === index)
          .map((event) => event.delta.partial_json)
          .join(''),
      );
    expect([inputOf(0), inputOf(1)]).toEqual([{ x: 1 }, { y: 2 }]);
  });
});
