import { concat, from, lastValueFrom, map, Subject, throwError, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../engine/engine-error.js';
import type { EngineEvent, Timings } from '../../engine/engine-event.js';
import { makeTimings } from '../../engine/engine-event.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { serializeSseFrame } from '../sse/sse-frame.js';
import { countersOnOutput, scripts } from '../../../test/support/transcript.js';
import type { ChatStreamOptions } from './chat-stream-writer.js';
import { encodeChatStream } from './encode-chat-stream.js';

const IDENTITY = { id: 'chatcmpl-1', model: 'stub', created: 1700000000 };
const HEAD = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"stub","choices":';
const usage = (prompt: number, completion: number) => ({
  promptTokens: prompt,
  completionTokens: completion,
  cachedTokens: 0,
  reasoningTokens: 0,
});
const timings: Timings = makeTimings({ promptN: 3, promptMs: 100, predictedN: 1, predictedMs: 10 });
const TIMINGS_JSON = JSON.stringify(timings);

async function transcript(
  events: StreamEvent[],
  options: Partial<ChatStreamOptions> = {},
  failure?: Error,
): Promise<string> {
  const source = failure
    ? concat(
        from(events),
        throwError(() => failure),
      )
    : from(events);
  const frames = source.pipe(
    encodeChatStream({ ...IDENTITY, includeUsage: false, continuousUsage: false, timings: false, ...options }),
    map(serializeSseFrame),
    toArray(),
  );
  return (await lastValueFrom(frames)).join('');
}

const ack = (completion: number): EngineEvent => ({ type: 'ack', usage: usage(3, completion), timings });
const done = (completion: number, finishReason: 'stop' | 'length' | 'tool_calls' = 'stop'): EngineEvent => ({
  type: 'done',
  finishReason,
  usage: usage(3, completion),
});
const roleChunk = `data: ${HEAD}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n`;
const deltaChunk = (delta: string, suffix = '') =>
  `data: ${HEAD}[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":null}]${suffix}}\n\n`;
const finishChunk = (reason: string, suffix = '') =>
  `data: ${HEAD}[{"index":0,"delta":{},"logprobs":null,"finish_reason":"${reason}"}]${suffix}}\n\n`;
const heartbeatChunk = (suffix = '') =>
  `data: ${HEAD}[{"index":0,"delta":{},"logprobs":null,"finish_reason":null}]${suffix}}\n\n`;
const DONE = 'data: [DONE]\n\n';

describe('encodeChatStream and counters on output pieces', () => {
  it.each(Object.keys(scripts) as Array<keyof typeof scripts>)(
    '%s: counters an output piece carries are written as an ack right before it would be, every stream option on',
    async (name) => {
      const options = { includeUsage: true, continuousUsage: true, timings: true };
      const folded = countersOnOutput(scripts[name]());
      if (name !== 'failureAfterHeartbeat') expect(folded.length).toBeLessThan(scripts[name]().length);
      const failure = name === 'failureAfterHeartbeat' ? new EngineError('upstream', 'gone') : undefined;
      expect(await transcript(folded, options, failure)).toBe(await transcript(scripts[name](), options, failure));
    },
  );

  it('shows the counters of a piece on its own chunk, and on the heartbeats and chunks after it', async () => {
    const counted: EngineEvent = { type: 'text', text: 'Hi', usage: usage(3, 1), timings };
    const one = ',"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}';
    expect(await transcript([counted, { type: 'heartbeat', n: 0 }], { continuousUsage: true, timings: true })).toBe(
      roleChunk +
        deltaChunk('{"content":"Hi"}', `${one},"timings":${TIMINGS_JSON}`) +
        heartbeatChunk(`${one},"timings":${TIMINGS_JSON}`) +
        DONE,
    );
  });
});

describe('encodeChatStream (golden transcripts)', () => {
  it('plain: role chunk, heartbeats, content, finish, [DONE]', async () => {
    const events: StreamEvent[] = [
      { type: 'heartbeat', n: 0 },
      ack(0),
      { type: 'heartbeat', n: 1 },
      ack(1),
      { type: 'text', text: 'Hello' },
      ack(2),
      { type: 'text', text: ' world' },
      done(2),
    ];
    expect(await transcript(events)).toBe(
      roleChunk +
        heartbeatChunk() +
        heartbeatChunk() +
        deltaChunk('{"content":"Hello"}') +
        deltaChunk('{"content":" world"}') +
        finishChunk('stop') +
        DONE,
    );
  });

  it('with include_usage and continuous_usage_stats: none on the role chunk, zeros until the first ack, a final usage chunk', async () => {
    const events: StreamEvent[] = [
      { type: 'heartbeat', n: 0 },
      ack(0),
      { type: 'heartbeat', n: 1 },
      ack(1),
      { type: 'text', text: 'Hi' },
      done(1),
    ];
    const zero = ',"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}';
    const prefilled = ',"usage":{"prompt_tokens":3,"completion_tokens":0,"total_tokens":3}';
    const one = ',"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}';
    expect(await transcript(events, { includeUsage: true, continuousUsage: true })).toBe(
      roleChunk +
        heartbeatChunk(zero) +
        heartbeatChunk(prefilled) +
        deltaChunk('{"content":"Hi"}', one) +
        finishChunk('stop', one) +
        `data: ${HEAD}[]${one}}\n\n` +
        DONE,
    );
  });

  it('with include_usage only: usage rides the final chunk alone', async () => {
    const events: StreamEvent[] = [ack(1), { type: 'text', text: 'Hi' }, done(1, 'length')];
    expect(await transcript(events, { includeUsage: true })).toBe(
      roleChunk +
        deltaChunk('{"content":"Hi"}') +
        finishChunk('length') +
        `data: ${HEAD}[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}\n\n` +
        DONE,
    );
  });

  it('with timings_per_token: no timings before the first ack, the latest ack after it', async () => {
    const events: StreamEvent[] = [
      { type: 'heartbeat', n: 0 },
      ack(0),
      { type: 'heartbeat', n: 1 },
      { type: 'text', text: 'Hi' },
      done(1),
    ];
    const withTimings = `,"timings":${TIMINGS_JSON}`;
    expect(await transcript(events, { timings: true })).toBe(
      roleChunk +
        heartbeatChunk() +
        heartbeatChunk(withTimings) +
        deltaChunk('{"content":"Hi"}', withTimings) +
        finishChunk('stop', withTimings) +
        DONE,
    );
  });

  it('with reasoning: reasoning_content deltas before the content', async () => {
    const events: StreamEvent[] = [
      ack(1),
      { type: 'reasoning', text: 'think' },
      ack(2),
      { type: 'text', text: 'answer' },
      { type: 'done', finishReason: 'stop', usage: { ...usage(3, 2), reasoningTokens: 1 } },
    ];
    expect(await transcript(events, { includeUsage: true })).toBe(
      roleChunk +
        deltaChunk('{"reasoning_content":"think"}') +
        deltaChunk('{"content":"answer"}') +
        finishChunk('stop') +
        `data: ${HEAD}[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"completion_tokens_details":{"reasoning_tokens":1}}}\n\n` +
        DONE,
    );
  });

  it('with a tool call: the first piece names the call, later pieces carry arguments only', async () => {
    const events: StreamEvent[] = [
      ack(1),
      { type: 'tool_call', index: 0, id: 'call_1', name: 'get_weather', arguments: '{"city":' },
      ack(2),
      { type: 'tool_call', index: 0, arguments: '"Paris"}' },
      done(2, 'tool_calls'),
    ];
    expect(await transcript(events)).toBe(
      roleChunk +
        deltaChunk(
          '{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":"}}]}',
        ) +
        deltaChunk('{"tool_calls":[{"index":0,"function":{"arguments":"\\"Paris\\"}"}}]}') +
        finishChunk('tool_calls') +
        DONE,
    );
  });

  it('with an error after a heartbeat: the error frame, then [DONE], then nothing', async () => {
    const events: StreamEvent[] = [{ type: 'heartbeat', n: 0 }, ack(0)];
    const failure = new EngineError('upstream', 'Upstream closed the connection.');
    expect(await transcript(events, {}, failure)).toBe(
      roleChunk +
        heartbeatChunk() +
        'data: {"error":{"message":"Upstream closed the connection.","type":"upstream_error","param":null,"code":null}}\n\n' +
        DONE,
    );
  });

  it('sends the role chunk with the first event, not on subscription: an acceptance alone brings only it', async () => {
    const frames: string[] = [];
    const source = new Subject<StreamEvent>();
    source
      .pipe(
        encodeChatStream({ ...IDENTITY, includeUsage: false, continuousUsage: true, timings: false }),
        map(serializeSseFrame),
      )
      .subscribe((frame) => frames.push(frame));
    expect(frames).toEqual([]);
    source.next({ type: 'accepted' });
    expect(frames).toEqual([roleChunk]);
  });

  it('still opens before an in-band error that comes first', async () => {
    expect(await transcript([], {}, new EngineError('upstream', 'gone'))).toBe(
      roleChunk + 'data: {"error":{"message":"gone","type":"upstream_error","param":null,"code":null}}\n\n' + DONE,
    );
  });

  it('hides the details of an unexpected failure', async () => {
    const text = await transcript([], {}, new TypeError('secret internals at line 3'));
    expect(text).toContain('"type":"server_error"');
    expect(text).not.toContain('secret internals');
  });
});
