import { of, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../engine/engine-error.js';
import { countersOf, type EngineEvent } from '../../engine/engine-event.js';
import { ChatChunkDecoder } from './chat-chunk-decoder.js';
import { decodeUpstreamSse } from './decode-upstream-sse.js';
import { UpstreamError } from './upstream-error.js';

/** A vLLM chunk as `model_dump_json(exclude_unset=True)` writes it. */
const vllm = (choices: string, usage?: string) =>
  `data: {"id":"chatcmpl-7f","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":${choices}${usage ? `,"usage":${usage}` : ''}}\n\n`;
const vllmDelta = (delta: string, usage?: string) =>
  vllm(`[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":null}]`, usage);

/** Feeds body pieces at given times (ms) through decodeUpstreamSse with a fake clock. */
function decode(pieces: Array<[at: number, text: string]>, { split = 0, end = true } = {}) {
  let clock = 0;
  const body = new Subject<string>();
  const events: EngineEvent[] = [];
  let error: unknown;
  let completed = false;
  body.pipe(decodeUpstreamSse(() => clock)).subscribe({
    next: (event) => events.push(event),
    error: (failure) => (error = failure),
    complete: () => (completed = true),
  });
  for (const [at, text] of pieces) {
    clock = at;
    // Split anywhere, even inside a field or a multi-byte character's JSON escape.
    const size = split || text.length;
    for (let start = 0; start < text.length; start += size) body.next(text.slice(start, start + size));
  }
  if (end) body.complete();
  return { events, ...outputsAndCounters(events), error, completed };
}

/** The events but acks, without the counters they carry; and the counters of every event that carries them, in order. */
function outputsAndCounters(events: EngineEvent[]) {
  const outputs = events
    .filter((event) => event.type !== 'ack')
    .map((event) => ('usage' in event && event.type !== 'done' ? withoutCounters(event) : event));
  const counted = events.flatMap((event) => countersOf(event) ?? []);
  return { outputs, counted };
}

function withoutCounters(event: EngineEvent): EngineEvent {
  const { usage: _usage, timings: _timings, ...rest } = event as EngineEvent & { usage?: unknown; timings?: unknown };
  return rest as EngineEvent;
}

describe('decodeUpstreamSse', () => {
  it('reads a vLLM stream with continuous usage: an ack for the role chunk, then each delta with the counters after it', () => {
    const usage = (completion: number) =>
      `{"prompt_tokens":12,"total_tokens":${12 + completion},"completion_tokens":${completion}}`;
    const result = decode(
      [
        [0, ''],
        [400, vllmDelta('{"role":"assistant","content":""}', usage(0)) + vllmDelta('{"content":"Hel"}', usage(1))],
        [450, vllmDelta('{"content":"lo ✓"}', usage(2))],
        [
          500,
          vllm(
            '[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]',
            usage(2),
          ),
        ],
        [500, vllm('[]', usage(2)) + 'data: [DONE]\n\n'],
      ],
      { split: 7 },
    );
    expect(result.error).toBeUndefined();
    expect(result.completed).toBe(true);
    // One event per chunk: the counters ride the delta.
    expect(result.events.map((event) => event.type)).toEqual(['ack', 'text', 'text', 'done']);
    expect(result.events[1]).toMatchObject({
      type: 'text',
      text: 'Hel',
      usage: { promptTokens: 12, completionTokens: 1 },
    });
    expect(result.outputs).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo ✓' },
      {
        type: 'done',
        finishReason: 'stop',
        stopSequence: undefined,
        usage: { promptTokens: 12, completionTokens: 2, cachedTokens: 0, reasoningTokens: 0 },
      },
    ]);
    expect(result.counted[0].usage).toMatchObject({ promptTokens: 12, completionTokens: 0 });
    // Measured here: prefill until the first output, decode from it to the latest one.
    expect(result.counted[2].timings).toMatchObject({
      prompt_n: 12,
      prompt_ms: 400,
      predicted_n: 2,
      predicted_ms: 50,
      predicted_per_token_ms: 25,
    });
  });

  it('reads the clock once per upstream read: the chunks of one read share its arrival time', () => {
    let reads = 0;
    let clock = 0;
    const body = new Subject<string>();
    const events: EngineEvent[] = [];
    body.pipe(decodeUpstreamSse(() => ((reads += 1), clock))).subscribe((event) => events.push(event));
    const readsBefore = reads;
    clock = 100;
    body.next(vllmDelta('{"content":"a"}') + vllmDelta('{"content":"b"}') + vllmDelta('{"content":"c"}'));
    clock = 160;
    body.next(vllmDelta('{"content":"d"}') + vllmDelta('{"content":"e"}'));
    expect(reads - readsBefore).toBe(2);
    const timings = events.flatMap((event) => countersOf(event)?.timings ?? []);
    // Prefill until the first read (100 ms), decode from it to the latest read (60 ms), whatever the chunks in each.
    expect(timings.map((timing) => timing.prompt_ms)).toEqual([100, 100, 100, 100, 100]);
    expect(timings.map((timing) => timing.predicted_ms)).toEqual([0, 0, 0, 60, 60]);
  });

  it('decodes content chunks read without JSON.parse exactly as the parsed chunks, counters and timings included', () => {
    const usage = (completion: number) =>
      `{"prompt_tokens":7,"total_tokens":${7 + completion},"completion_tokens":${completion}}`;
    const payloads = [
      vllmDelta('{"content":""}', usage(0)),
      vllmDelta('{"reasoning":"think"}', usage(1)),
      vllmDelta('{"reasoning_content":"more"}', usage(2)),
      vllmDelta('{"content":"say \\"hi\\""}', usage(3)),
      vllmDelta('{"content":"same"}', usage(3)),
      vllmDelta('{"content":"no usage"}'),
      vllmDelta('{"content":"null usage"}', 'null'),
      vllmDelta('{"content":""}'),
    ].map((frame) => frame.slice('data: '.length, -2));
    let clock = 0;
    const fast = new ChatChunkDecoder(() => clock);
    const parsed = new ChatChunkDecoder(() => clock);
    for (const data of payloads) {
      clock += 10;
      expect(fast.decode(data), data).toEqual(parsed.decodeChunk(JSON.parse(data)));
    }
  });

  it('reads a llama.cpp stream: comment pings, content null, reasoning_content, its own timings', () => {
    const chunk = (choices: string, extra = '') =>
      `data: {"choices":${choices},"created":1767225600,"id":"chatcmpl-Xy","model":"gpt-3.5-turbo","system_fingerprint":"b6100","object":"chat.completion.chunk"${extra}}\n\n`;
    const timings =
      '{"cache_n":3,"prompt_n":9,"prompt_ms":120.5,"prompt_per_token_ms":13.39,"prompt_per_second":74.7,"predicted_n":3,"predicted_ms":30,"predicted_per_token_ms":10,"predicted_per_second":100}';
    const result = decode([
      [0, ':\n\n'],
      [100, ':\n\n'],
      [200, chunk('[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}]')],
      [210, chunk('[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"Let me see."}}]')],
      [220, chunk('[{"finish_reason":null,"index":0,"delta":{"content":"Four"}}]')],
      [230, chunk('[{"finish_reason":null,"index":0,"delta":{"content":"."}}]')],
      [240, chunk('[{"finish_reason":"stop","index":0,"delta":{}}]')],
      [
        240,
        chunk(
          '[]',
          `,"usage":{"completion_tokens":3,"prompt_tokens":12,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":3}},"timings":${timings}`,
        ),
      ],
      [240, 'data: [DONE]\n\n'],
    ]);
    expect(result.outputs.map((event) => event.type)).toEqual(['reasoning', 'text', 'text', 'done']);
    expect(result.outputs[0]).toEqual({ type: 'reasoning', text: 'Let me see.' });
    expect(result.counted.map((counters) => counters.usage.completionTokens)).toEqual([1, 2, 3, 3]);
    expect(result.counted[0].timings).toMatchObject({ prompt_ms: 210, predicted_n: 1, predicted_ms: 0 });
    expect(result.counted.at(-1)!.timings).toEqual(JSON.parse(timings));
    expect(result.outputs.at(-1)).toMatchObject({
      usage: { promptTokens: 12, completionTokens: 3, cachedTokens: 3, reasoningTokens: 1 },
    });
  });

  it('reads `reasoning` and `reasoning_content` alike, once when a server sends both', () => {
    const result = decode([
      [
        0,
        vllmDelta('{"reasoning":"a"}') +
          vllmDelta('{"reasoning_content":"b"}') +
          vllmDelta('{"reasoning":"c","reasoning_content":"c"}'),
      ],
      [0, vllm('[{"index":0,"delta":{},"finish_reason":"length"}]') + 'data: [DONE]\n\n'],
    ]);
    expect(result.outputs).toMatchObject([
      { type: 'reasoning', text: 'a' },
      { type: 'reasoning', text: 'b' },
      { type: 'reasoning', text: 'c' },
      { type: 'done', finishReason: 'length', usage: { completionTokens: 3, reasoningTokens: 3 } },
    ]);
  });

  it('keeps tool-call index, id and name, passing id and name on only once per call', () => {
    const call = (json: string) => vllmDelta(`{"tool_calls":[${json}]}`);
    const result = decode([
      [
        0,
        call('{"id":"chatcmpl-tool-1","type":"function","index":0,"function":{"name":"get_weather","arguments":""}}') +
          call('{"index":0,"function":{"arguments":"{\\"city\\": "}}') +
          call('{"id":"chatcmpl-tool-1","index":0,"function":{"arguments":"\\"Paris\\"}"}}') +
          call('{"id":"chatcmpl-tool-2","type":"function","index":1,"function":{"name":"get_time","arguments":"{}"}}') +
          vllm('[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}]') +
          'data: [DONE]\n\n',
      ],
    ]);
    expect(result.outputs).toEqual([
      { type: 'tool_call', index: 0, id: 'chatcmpl-tool-1', name: 'get_weather', arguments: '' },
      { type: 'tool_call', index: 0, id: undefined, name: undefined, arguments: '{"city": ' },
      { type: 'tool_call', index: 0, id: undefined, name: undefined, arguments: '"Paris"}' },
      { type: 'tool_call', index: 1, id: 'chatcmpl-tool-2', name: 'get_time', arguments: '{}' },
      expect.objectContaining({ type: 'done', finishReason: 'tool_calls' }),
    ]);
  });

  it('holds a call back until its name arrives, so the first piece always names the call', () => {
    const call = (json: string) => vllmDelta(`{"tool_calls":[${json}]}`);
    const result = decode([
      [
        0,
        call('{"id":"call_x","type":"function","index":0,"function":{"arguments":"{\\"a\\""}}') +
          call('{"index":0,"function":{"name":"late_name","arguments":":1"}}') +
          call('{"index":0,"function":{"arguments":"}"}}') +
          vllm('[{"index":0,"delta":{},"finish_reason":"tool_calls"}]') +
          'data: [DONE]\n\n',
      ],
    ]);
    expect(result.outputs).toEqual([
      { type: 'tool_call', index: 0, id: 'call_x', name: 'late_name', arguments: '{"a":1' },
      { type: 'tool_call', index: 0, arguments: '}' },
      expect.objectContaining({ type: 'done', finishReason: 'tool_calls' }),
    ]);
  });

  it('reports the matched stop string and accepts a finished stream that lacks [DONE]', () => {
    const result = decode([
      [0, vllmDelta('{"content":"one"}')],
      [0, vllm('[{"index":0,"delta":{"content":""},"finish_reason":"stop","stop_reason":"END"}]')],
    ]);
    expect(result.completed).toBe(true);
    expect(result.outputs.at(-1)).toMatchObject({ type: 'done', finishReason: 'stop', stopSequence: 'END' });
  });

  it('turns in-band error frames into typed errors (vLLM nested, vLLM before 0.10.1 flat, TGI string)', () => {
    const errorOf = (frame: string) => decode([[0, vllmDelta('{"content":"a"}') + frame]]).error as UpstreamError;
    const nested = errorOf(
      'data: {"error":{"message":"context too long","type":"BadRequestError","param":null,"code":400}}\n\ndata: [DONE]\n\n',
    );
    expect(nested).toBeInstanceOf(EngineError);
    expect(nested).toMatchObject({
      kind: 'invalid_request',
      message: 'context too long',
      retryable: false,
      replicaFault: false,
    });
    // Not the client's own error: its status only (the text may quote anything).
    expect(
      errorOf('data: {"object":"error","message":"engine died","type":"InternalServerError","code":500}\n\n'),
    ).toMatchObject({
      kind: 'upstream',
      message: 'The upstream reported an error (500 Internal Server Error).',
    });
    // TGI's validation errors are its 422s.
    expect(errorOf('data: {"error":"Input validation error","error_type":"validation"}\n\n')).toMatchObject({
      kind: 'invalid_request',
      message: 'Input validation error',
    });
    expect(errorOf('data: {"error":"something broke"}\n\n')).toMatchObject({
      kind: 'upstream',
      message: 'The upstream reported an error.',
    });
  });

  it('redacts the message of an error frame it passes on', () => {
    const events = of('data: {"error":{"message":"bad key sk-secret-1 in request","code":400}}\n\n');
    let error: unknown;
    events
      .pipe(decodeUpstreamSse(() => 0, { redact: (text) => text.replace('sk-secret-1', '[redacted]') }))
      .subscribe({ error: (failure) => (error = failure) });
    expect(error).toMatchObject({ kind: 'invalid_request', message: 'bad key [redacted] in request' });
  });

  it('fails on malformed JSON, and on a stream that ends before it finished', () => {
    const malformed = decode([
      [0, vllmDelta('{"content":"a"}') + 'data: {"choices":[{"delta":\n\n' + vllmDelta('{"content":"b"}')],
    ]);
    expect(malformed.error).toMatchObject({ kind: 'upstream', message: expect.stringMatching(/malformed/) });
    expect(malformed.outputs).toEqual([{ type: 'text', text: 'a' }]);

    const cut = decode([[0, vllmDelta('{"role":"assistant","content":""}') + vllmDelta('{"content":"a"}')]]);
    expect(cut.error).toMatchObject({
      kind: 'upstream',
      message: expect.stringMatching(/closed the stream before it finished/),
      retryable: true,
    });
  });

  it('ignores everything after [DONE]', () => {
    const result = decode([
      [0, vllm('[{"index":0,"delta":{},"finish_reason":"stop"}]') + 'data: [DONE]\n\ndata: {oops\n\n'],
    ]);
    expect(result.error).toBeUndefined();
    expect(result.events.map((event) => event.type)).toEqual(['done']);
  });
});
