import { Subject } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StreamEvent } from '../../streaming/stream-event.js';
import {
  ackOf,
  counterIds,
  countersOnOutput,
  payloadsOf,
  scripts,
  transcriptOf,
  usageOf,
} from '../../../test/support/transcript.js';
import { EngineError } from '../../engine/engine-error.js';
import { encodeResponsesStream } from './encode-responses-stream.js';
import { responseEnvelope } from './response-object.js';
import type { ResponsesRequestDto } from './responses-request.dto.js';

const request = {
  model: 'stub',
  input: 'hi',
  tools: [{ type: 'function', name: 'get_weather' }],
} as ResponsesRequestDto;
const encoder = (body: ResponsesRequestDto = request) =>
  encodeResponsesStream(responseEnvelope('resp_1', 1700000000, body, fakeSealer), counterIds());
/** Deterministic stand-in for the cipher, so that goldens stay byte-stable. */
const fakeSealer = { seal: (text: string) => `sealed(${text})` };

const withSummary = { ...request, reasoning: { summary: 'auto' } } as ResponsesRequestDto;
const codexTools = {
  model: 'stub',
  input: 'hi',
  tools: [
    { type: 'web_search', external_web_access: false },
    {
      type: 'namespace',
      name: 'mcp__files__',
      description: 'Files.',
      tools: [{ type: 'function', name: 'read_file', parameters: { type: 'object' } }],
    },
    { type: 'custom', name: 'apply_patch', description: 'Patches files.' },
  ],
} as ResponsesRequestDto;
const namespacedAndCustomCalls = [
  ackOf(3, 1),
  { type: 'tool_call', index: 0, id: 'call_a', name: 'mcp__files__read_file', arguments: '{"path":' },
  { type: 'tool_call', index: 0, arguments: '"README.md"}' },
  ackOf(3, 2),
  { type: 'tool_call', index: 1, id: 'call_b', name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n' },
  { type: 'tool_call', index: 1, arguments: '*** End Patch"}' },
  { type: 'done', finishReason: 'tool_calls', usage: usageOf(3, 4) },
] as Parameters<typeof transcriptOf>[0];
const golden = (name: string) => `./__golden__/${name}.sse`;

beforeAll(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(1700000005_000));
});
afterAll(() => vi.useRealTimers());

function sequenceNumbers(text: string): number[] {
  return [...text.matchAll(/"sequence_number":(\d+)/g)].map((match) => Number(match[1]));
}

describe('encodeResponsesStream and counters on output pieces', () => {
  it.each(Object.keys(scripts) as Array<keyof typeof scripts>)(
    '%s: the same events as with the acks apart',
    async (name) => {
      const failure = name === 'failureAfterHeartbeat' ? new EngineError('upstream', 'gone') : undefined;
      expect(await transcriptOf(countersOnOutput(scripts[name]()), encoder(), failure)).toBe(
        await transcriptOf(scripts[name](), encoder(), failure),
      );
    },
  );

  it('reports the latest counters a piece carried in a failed response', async () => {
    const cut: StreamEvent[] = [
      ackOf(3, 1),
      { type: 'text', text: 'half' },
      ackOf(3, 2),
      { type: 'text', text: ' more' },
    ];
    const failed = payloadsOf(
      await transcriptOf(countersOnOutput(cut), encoder(), new EngineError('upstream', 'gone')),
    ).at(-1);
    expect(failed).toMatchObject({
      type: 'response.failed',
      response: { usage: { input_tokens: 3, output_tokens: 2 } },
    });
  });
});

describe('encodeResponsesStream (golden transcripts)', () => {
  it('a message with in_progress heartbeats before it', async () => {
    const text = await transcriptOf(scripts.text(), encoder());
    await expect(text).toMatchFileSnapshot(golden('text'));
    expect(sequenceNumbers(text)).toEqual(sequenceNumbers(text).map((_, index) => index));
  });

  it('a reasoning item (reasoning_text family) before the message', async () => {
    await expect(await transcriptOf(scripts.reasoning(), encoder())).toMatchFileSnapshot(golden('reasoning'));
  });

  it('a reasoning item that also streams as a summary, when reasoning.summary is set', async () => {
    const text = await transcriptOf(scripts.reasoning(), encoder(withSummary));
    await expect(text).toMatchFileSnapshot(golden('reasoning-summary'));
    expect(sequenceNumbers(text)).toEqual(sequenceNumbers(text).map((_, index) => index));
  });

  it('a namespaced function call and a custom tool call, under the names the client gave them', async () => {
    await expect(await transcriptOf(namespacedAndCustomCalls, encoder(codexTools))).toMatchFileSnapshot(
      golden('namespaced-and-custom-calls'),
    );
  });

  it('function calls with arguments deltas and done events carrying the name', async () => {
    await expect(await transcriptOf(scripts.toolCalls(), encoder())).toMatchFileSnapshot(golden('function-calls'));
  });

  it('response.incomplete on length', async () => {
    await expect(await transcriptOf(scripts.length(), encoder())).toMatchFileSnapshot(golden('incomplete'));
  });

  it('response.failed after a heartbeat, as the last event', async () => {
    const text = await transcriptOf(
      scripts.failureAfterHeartbeat(),
      encoder(),
      new EngineError('upstream', 'Upstream went away.'),
    );
    await expect(text).toMatchFileSnapshot(golden('failed'));
    expect(text.trim().split('\n\n').at(-1)).toMatch(/^event: response\.failed\n/);
  });
});

describe('encodeResponsesStream with interleaved tool calls', () => {
  it('keeps one function_call item per call, and the final response has every call whole', async () => {
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
    expect(events.filter((event) => event.type === 'response.output_item.added')).toHaveLength(2);
    const final = events.at(-1);
    expect(final.type).toBe('response.completed');
    expect(
      final.response.output.map((item: { name: string; call_id: string; arguments: string }) => [
        item.name,
        item.call_id,
        JSON.parse(item.arguments),
      ]),
    ).toEqual([
      ['f', 'a', { x: 1 }],
      ['g', 'b', { y: 2 }],
    ]);
  });
});

describe('encodeResponsesStream endings', () => {
  const lastEvent = async (events: Parameters<typeof transcriptOf>[0], failure?: Error) => {
    const text = await transcriptOf(events, encoder(), failure);
    return payloadsOf(text).at(-1);
  };

  it('keeps the text streamed before a failure in the failed response', async () => {
    const failed = await lastEvent([{ type: 'text', text: 'Hello' }], new EngineError('upstream', 'gone'));
    expect(failed.type).toBe('response.failed');
    expect(failed.response.output).toEqual([
      {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        status: 'incomplete',
        content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }],
      },
    ]);
  });

  it('opens with the first event, not on subscription: an acceptance brings response.created and response.in_progress only', async () => {
    const types: string[] = [];
    const source = new Subject<StreamEvent>();
    source.pipe(encoder()).subscribe((frame) => types.push('event' in frame ? String(frame.event) : ''));
    expect(types).toEqual([]);
    source.next({ type: 'accepted' });
    expect(types).toEqual(['response.created', 'response.in_progress']);
  });

  it('ends a filtered answer as incomplete, for content_filter', async () => {
    const usage = { promptTokens: 1, completionTokens: 1, cachedTokens: 0, reasoningTokens: 0 };
    const filtered = await lastEvent([
      { type: 'text', text: 'Hm' },
      { type: 'done', finishReason: 'content_filter', usage },
    ]);
    expect(filtered).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'content_filter' } },
    });
  });
});

describe('encodeResponsesStream reasoning summaries', () => {
  it('order the summary family inside the reasoning item: part added, deltas, text done, part done', async () => {
    const events = payloadsOf(await transcriptOf(scripts.reasoning(), encoder(withSummary)));
    const types = events.map((event) => event.type);
    const reasoningDone = types.indexOf('response.output_item.done');
    const family = [
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
    ].map((type) => types.indexOf(type));
    expect(family).toEqual([...family].sort((a, b) => a - b));
    expect(family[0]).toBeGreaterThan(types.indexOf('response.output_item.added'));
    expect(family[3]).toBeLessThan(reasoningDone);
    expect(
      events.filter((event) => event.type === 'response.reasoning_summary_text.delta').map((event) => event.delta),
    ).toEqual(['think', ' hard']);
    expect(events[reasoningDone].item.summary).toEqual([{ type: 'summary_text', text: 'think hard' }]);
    expect(events.at(-1).response.reasoning).toEqual({ effort: null, summary: 'auto' });
  });

  it('send none of them without reasoning.summary (generate_summary, the older name, counts too)', async () => {
    const plain = payloadsOf(await transcriptOf(scripts.reasoning(), encoder()));
    expect(plain.some((event) => event.type.startsWith('response.reasoning_summary'))).toBe(false);
    const older = payloadsOf(
      await transcriptOf(
        scripts.reasoning(),
        encoder({ ...request, reasoning: { generate_summary: 'concise' } } as ResponsesRequestDto),
      ),
    );
    expect(older.filter((event) => event.type === 'response.reasoning_summary_text.delta')).toHaveLength(2);
  });
});

describe('encodeResponsesStream sealed reasoning', () => {
  const sealing = {
    ...request,
    include: ['reasoning.encrypted_content', 'message.output_text.logprobs', 'something.new'],
  } as ResponsesRequestDto;

  it('puts encrypted_content on the finished reasoning item and the final response, when included', async () => {
    const events = payloadsOf(await transcriptOf(scripts.reasoning(), encoder(sealing)));
    const added = events.find((event) => event.type === 'response.output_item.added');
    expect(added.item.encrypted_content).toBeUndefined();
    const done = events.find((event) => event.type === 'response.output_item.done');
    expect(done.item.encrypted_content).toBe('sealed(think hard)');
    expect(events.at(-1).response.output[0].encrypted_content).toBe('sealed(think hard)');
  });

  it('leaves it out when not included, and seals what was streamed before a failure', async () => {
    const events = payloadsOf(await transcriptOf(scripts.reasoning(), encoder()));
    expect(events.at(-1).response.output[0]).not.toHaveProperty('encrypted_content');
    const failed = payloadsOf(
      await transcriptOf([{ type: 'reasoning', text: 'half' }], encoder(sealing), new EngineError('upstream', 'gone')),
    ).at(-1);
    expect(failed.response.output[0]).toMatchObject({ status: 'incomplete', encrypted_content: 'sealed(half)' });
  });
});

describe('encodeResponsesStream tool calls under the client names', () => {
  it('ends with the namespaced call and the custom call whole, and no arguments events for the custom one', async () => {
    const events = payloadsOf(await transcriptOf(namespacedAndCustomCalls, encoder(codexTools)));
    expect(events.at(-1).response.output).toEqual([
      {
        id: 'fc_1',
        type: 'function_call',
        call_id: 'call_a',
        name: 'read_file',
        namespace: 'mcp__files__',
        arguments: '{"path":"README.md"}',
        status: 'completed',
      },
      {
        id: 'ctc_2',
        type: 'custom_tool_call',
        call_id: 'call_b',
        name: 'apply_patch',
        input: '*** Begin Patch\n*** End Patch',
        status: 'completed',
      },
    ]);
    const custom = events.filter((event) => event.item_id === 'ctc_2').map((event) => event.type);
    expect(custom).toEqual(['response.custom_tool_call_input.delta', 'response.custom_tool_call_input.done']);
  });

  it('keeps a name the client never offered as a plain function call', async () => {
    const events = payloadsOf(
      await transcriptOf(
        [
          { type: 'tool_call', index: 0, id: 'c', name: 'invented', arguments: '{}' },
          { type: 'done', finishReason: 'tool_calls', usage: usageOf(1, 1) },
        ],
        encoder(codexTools),
      ),
    );
    expect(events.at(-1).response.output[0]).toEqual({
      id: 'fc_1',
      type: 'function_call',
      call_id: 'c',
      name: 'invented',
      arguments: '{}',
      status: 'completed',
    });
  });

  it('keeps what was streamed of a custom call cut short by a failure', async () => {
    const failed = payloadsOf(
      await transcriptOf(
        [{ type: 'tool_call', index: 0, id: 'c', name: 'apply_patch', arguments: '{"input":"*** Be' }],
        encoder(codexTools),
        new EngineError('upstream', 'gone'),
      ),
    ).at(-1);
    expect(failed.response.output[0]).toMatchObject({
      type: 'custom_tool_call',
      status: 'incomplete',
      input: '{"input":"*** Be',
    });
  });
});

describe('encodeResponsesStream failure codes', () => {
  it('names a prompt over the context context_length_exceeded, as agents look for it', async () => {
    const tooLong = new EngineError('invalid_request', 'The prompt is 9000 tokens; this model holds 4096.', {
      code: 'context_length_exceeded',
    });
    const failed = payloadsOf(await transcriptOf([], encoder(), tooLong)).at(-1);
    expect(failed).toMatchObject({
      type: 'response.failed',
      response: { status: 'failed', error: { code: 'context_length_exceeded' } },
    });
    const other = payloadsOf(await transcriptOf([], encoder(), new EngineError('invalid_request', 'bad template'))).at(
      -1,
    );
    expect(other.response.error.code).toBe('invalid_prompt');
  });
});
