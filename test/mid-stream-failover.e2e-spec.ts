import Anthropic from '@anthropic-ai/sdk';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockBehaviour } from '../apps/mock-upstream/mock-behaviour.js';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { captureLogs } from './support/log-capture.js';
import { scrape, valueOf } from './support/prometheus.js';

const PROMPT = 'one two three four five six seven eight';
const behaving = (behaviour: Partial<MockBehaviour>) => ({ 'x-mock-behaviour': JSON.stringify(behaviour) });

/** What a client made of one answer, whatever its API. */
interface Answer {
  text: string;
  /** The in-band error (streams) or the error status's message (whole answers). */
  error?: string;
  usage?: { prompt: number; completion: number };
  /** Opening frames seen: the role chunk, `message_start`, `response.created`. */
  openings?: number;
}

type Api = 'chat' | 'responses' | 'messages';
const APIS: Api[] = ['chat', 'responses', 'messages'];
type Ask = (model: string, api: Api, stream: boolean, extra?: Record<string, unknown>) => Promise<Answer>;

describe('mid-stream failover: an answer cut by its replica goes on on another one, in the same stream', () => {
  const { destination, lines } = captureLogs();
  const exporter = new InMemorySpanExporter();
  let replicas: MockUpstream[];
  let oneDown: MockUpstream;
  let spare: MockUpstream;
  let gateway: RunningGateway;
  let ask: Ask;
  const healthy: Partial<Record<`${Api}-${boolean}`, Answer>> = {};

  beforeAll(async () => {
    [oneDown, spare, ...replicas] = await Promise.all([0, 1, 2, 3, 4].map(() => startMockUpstream()));
    // A replica that dies in the middle of every answer, whoever asks.
    oneDown.setBehaviour({ failure: 'drop', failAfterTokens: 3 });
    const fleet = {
      engine: 'http',
      upstreams: replicas.map((replica) => replica.url),
      healthCheckIntervalMs: 0,
      maxFailures: 1000,
      nonStreaming: 'stream',
    };
    const breaking = (name: string, behaviour: Partial<MockBehaviour>, extra: Record<string, unknown> = {}) => ({
      name,
      ...fleet,
      headers: behaving(behaviour),
      ...extra,
    });
    gateway = await startGateway(
      {
        keepalive: { mode: 'chunks', intervalMs: 10_000 },
        observability: { logging: { level: 'info' } },
        models: [
          { name: 'healthy', ...fleet },
          breaking('breaks', { failure: 'drop', failAtTokens: [3] }),
          breaking('stalls', { failure: 'stall', failAtTokens: [3] }, { midStreamFailover: { stallTimeoutMs: 300 } }),
          // Bytes without output: an SSE comment every 100 ms after the third token, watched by progress.
          breaking('drips', { failure: 'drip', failAtTokens: [3] }, { midStreamFailover: { stallTimeoutMs: 300 } }),
          // Tokens every 100 ms: eight take longer than the whole answer may.
          breaking('too-slow', { tokenIntervalMs: 100 }, { answerTimeoutMs: 300 }),
          breaking('breaks-twice', { failure: 'drop', failAtTokens: [2, 5] }),
          breaking('breaks-prefilled', { failure: 'drop', failAtTokens: [3] }),
          breaking('keeps-breaking', { failure: 'drop', failAfterTokens: 2 }),
          breaking('errors-in-band', { failure: 'error', failureStatus: 500, failAtTokens: [4] }),
          breaking('breaks-thinking', { failure: 'drop', failAtTokens: [2], reasoning: 'hmm let me see' }),
          // Cut after its reasoning and three words, on an upstream whose R1 parser files a continuation as reasoning.
          breaking('breaks-after-thinking', {
            failure: 'drop',
            failAtTokens: [5],
            reasoning: 'hmm ok',
            reasoningParser: 'deepseek_r1',
          }),
          // One replica of two is down, and a whole (JSON) answer is asked of the upstream as by default.
          {
            name: 'one-down',
            engine: 'http',
            upstreams: [oneDown.url, spare.url],
            healthCheckIntervalMs: 0,
            maxFailures: 1000,
          },
          // The same pair, on a model that reasons before it answers: the replica dies while it does.
          {
            name: 'one-down-thinking',
            engine: 'http',
            upstreams: [oneDown.url, spare.url],
            healthCheckIntervalMs: 0,
            maxFailures: 1000,
            nonStreaming: 'stream',
            headers: behaving({ reasoning: 'hmm let me see now' }),
          },
        ],
      },
      { observability: { logDestination: destination, spanExporter: exporter } },
    );
    ask = answerer(gateway.url);
    for (const api of APIS)
      for (const stream of [true, false]) healthy[`${api}-${stream}`] = await ask('healthy', api, stream);
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([...(replicas ?? []), oneDown, spare].map((replica) => replica?.close()));
  });

  const reference = (api: Api, stream: boolean) => healthy[`${api}-${stream}`]!;

  it('the healthy reference: the whole echo, with its usage', () => {
    for (const api of APIS) {
      for (const stream of [true, false]) {
        expect(reference(api, stream)).toMatchObject({ text: PROMPT, usage: { prompt: 8, completion: 8 } });
        if (stream) expect(reference(api, stream).openings).toBe(1);
      }
    }
  });

  for (const [model, what] of [
    ['breaks', 'a replica that drops the connection mid-answer'],
    ['stalls', 'a replica that stalls mid-answer (stallTimeoutMs 300)'],
    ['drips', 'a replica that drips SSE comments but no output mid-answer (stallTimeoutMs 300)'],
    ['breaks-twice', 'a continuation that fails again (the second resume)'],
    ['errors-in-band', 'an in-band error frame mid-answer'],
  ] as const) {
    it(`${what}: every API, streamed and not, gets what one healthy replica says`, async () => {
      for (const api of APIS) {
        for (const stream of [true, false]) {
          const answer = await ask(model, api, stream);
          expect({ api, stream, ...answer }).toEqual({ api, stream, ...reference(api, stream) });
        }
      }
    });
  }

  it('answerTimeoutMs caps the whole answer: past it, a timeout error (in-band once streaming), not a continuation', async () => {
    for (const api of APIS) {
      for (const stream of [true, false]) {
        const answer = await ask('too-slow', api, stream);
        expect(answer.error, `${api} ${stream}`).toMatch(/took longer than 300 ms in all \(answerTimeoutMs\)/);
      }
    }
  });

  it('a replica down: streams continue on the other one, whole answers are asked again of it', async () => {
    const before = oneDown.state.abortedRequests;
    for (const api of APIS) {
      for (const stream of [true, false])
        expect({ api, stream, ...(await ask('one-down', api, stream)) }).toEqual({
          api,
          stream,
          ...reference(api, stream),
        });
    }
    expect(oneDown.state.abortedRequests).toBeGreaterThan(before);
    // The continuations went to the spare replica, as vLLM takes them.
    const continued = spare.state.received.filter((request) => request.body.continue_final_message === true);
    expect(continued.length).toBeGreaterThan(0);
    expect(continued[0].body).toMatchObject({
      add_generation_prompt: false,
      messages: [
        { role: 'user', content: PROMPT },
        { role: 'assistant', content: 'one two three' },
      ],
    });
  });

  it('resumes spent: the answer so far, then the error in-band (streams) or as the status (whole answers)', async () => {
    for (const api of APIS) {
      for (const stream of [true, false]) {
        const answer = await ask('keeps-breaking', api, stream);
        expect(answer.error).toMatch(
          /closed the connection before the answer was complete\. It was continued 2 times on other replicas/,
        );
        // Three attempts of two words each: what reached the client is the healthy answer's start.
        if (stream) expect(answer.text).toBe('one two three four five six');
      }
    }
  });

  it('not continued, ended in-band: a response format, a tool call being written, reasoning in progress', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const formatted = await ask('breaks', 'chat', true, {
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema } },
    });
    expect(formatted).toMatchObject({
      text: 'one two three',
      error: expect.stringMatching(/cannot be continued on another replica: it follows a response format/),
    });
    const formattedResponse = await ask('breaks', 'responses', true, {
      text: { format: { type: 'json_schema', name: 'answer', schema } },
    });
    expect(formattedResponse).toMatchObject({ text: 'one two three', error: expect.stringMatching(/response format/) });
    const wholeFormatted = await ask('breaks', 'chat', false, { response_format: { type: 'json_object' } });
    expect(wholeFormatted.error).toMatch(/response format/);

    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const call = await chatStream(gateway.url, 'breaks', {
      messages: [{ role: 'user', content: '{"city":"Lisbon","days":3}' }],
      tools,
    });
    expect(call.error).toMatch(/it was writing a tool call/);
    expect(call.toolArguments.length).toBeGreaterThan(0);

    const thinking = await ask('breaks-thinking', 'chat', true);
    expect(thinking.error).toMatch(/the model was still reasoning/);
  });

  it('a continuation after the reasoning ended is answer text, whatever field the upstream files it in', async () => {
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model: 'breaks-after-thinking',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: PROMPT }],
    });
    let content = '';
    let reasoning = '';
    let reasoningTokens: number | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      content += delta?.content ?? '';
      reasoning += delta?.reasoning_content ?? '';
      if (chunk.usage) reasoningTokens = chunk.usage.completion_tokens_details?.reasoning_tokens;
    }
    expect({ content, reasoning }).toEqual({ content: PROMPT, reasoning: 'hmm ok' });
    expect(reasoningTokens).toBe(2);
  });

  it("a client's own trailing assistant prefill is joined with the partial answer: one message is continued", async () => {
    await chatStream(gateway.url, 'breaks-prefilled', {
      messages: [
        { role: 'user', content: PROMPT },
        { role: 'assistant', content: 'Sure: ' },
      ],
    });
    const continued = replicas
      .flatMap((replica) => replica.state.received)
      .filter((request) => request.body.continue_final_message === true && request.body.model === 'breaks-prefilled');
    expect(continued.length).toBeGreaterThan(0);
    // The mock echoes from the start again after the prefill, so a second continuation may follow.
    expect(continued.map((request) => request.body.messages)).toContainEqual([
      { role: 'user', content: PROMPT },
      { role: 'assistant', content: 'Sure: one two three' },
    ]);
    for (const request of continued) expect(request.body.messages).toHaveLength(2);
  });

  it('reasoning the client is not shown (Messages without thinking) is not output: an answer cut during it is retried whole, with no error', async () => {
    // Round robin over the pair: of two requests, one starts on the replica that dies.
    for (const stream of [true, true, false, false]) {
      const answer = await ask('one-down-thinking', 'messages', stream);
      expect(answer.error, `stream ${stream}`).toBeUndefined();
      expect(answer.text).toBe(healthy[`messages-${stream}`]!.text);
    }
  });

  it('n > 1 is refused before anything is generated, so no answer of several choices is ever cut', async () => {
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const refused = await client.chat.completions
      .create({ model: 'breaks', n: 2, messages: [{ role: 'user', content: PROMPT }] })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400, message: expect.stringMatching(/n must be 1/) });
  });

  it('counts resumes by replica and reason, and failures by why; one log line and one span event per resume', async () => {
    const samples = await scrape(gateway.url);
    const resumes = (labels: Record<string, string>) =>
      samples
        .filter(
          (sample) =>
            sample.name === 'gantry_stream_resumes_total' &&
            Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
        )
        .reduce((sum, sample) => sum + sample.value, 0);
    expect(resumes({ model: 'breaks', reason: 'reset' })).toBe(6);
    expect(resumes({ model: 'stalls', reason: 'stall' })).toBe(6);
    expect(resumes({ model: 'drips', reason: 'stall' })).toBe(6);
    expect(resumes({ model: 'too-slow' })).toBe(0);
    expect(resumes({ model: 'breaks-twice', reason: 'reset' })).toBe(12);
    expect(resumes({ model: 'errors-in-band', reason: 'error' })).toBe(6);
    expect(resumes({ model: 'one-down', replica: oneDown.url })).toBe(3);
    expect(resumes({ model: 'healthy' })).toBe(0);
    expect(valueOf(samples, 'gantry_stream_resume_failures_total', { model: 'keeps-breaking', reason: 'spent' })).toBe(
      6,
    );
    expect(
      valueOf(samples, 'gantry_stream_resume_failures_total', { model: 'breaks', reason: 'not_continuable' }),
    ).toBe(4);
    expect(
      valueOf(samples, 'gantry_stream_resume_failures_total', { model: 'breaks-thinking', reason: 'not_continuable' }),
    ).toBe(1);

    const total = samples
      .filter((sample) => sample.name === 'gantry_stream_resumes_total')
      .reduce((sum, sample) => sum + sample.value, 0);
    const logged = lines.filter((line) =>
      /failed mid-answer \((reset|status|error|stall)[:)].*continuing on .* \(resume \d of 2\)/.test(String(line.msg)),
    );
    expect(logged).toHaveLength(total);
    expect(
      lines.some((line) => line.context === 'Request' && line.model === 'breaks-twice' && line.resumes === 2),
    ).toBe(true);

    expect(
      await eventually(
        () => exporter.getFinishedSpans().filter((span) => span.name === 'chat breaks-twice').length === 6,
      ),
    ).toBe(true);
    const span = exporter.getFinishedSpans().find((candidate) => candidate.name === 'chat breaks-twice')!;
    const events = span.events.filter((event) => event.name === 'gantry.stream.resumed');
    expect(events.map((event) => event.attributes)).toEqual([
      expect.objectContaining({
        'gantry.resume.reason': 'reset',
        'gantry.resume.number': 1,
        'gantry.resume.produced_tokens': 2,
      }),
      expect.objectContaining({
        'gantry.resume.reason': 'reset',
        'gantry.resume.number': 2,
        'gantry.resume.produced_tokens': 5,
      }),
    ]);
    // Nothing is left open on any replica.
    expect(
      await eventually(() => [...replicas, oneDown, spare].every((replica) => replica.state.openRequests === 0)),
    ).toBe(true);
  });
});

describe('mid-stream failover with maxFailures: 1: the replica that cut an answer is ejected, and nothing goes back to it', () => {
  const CONTINUATION_PREFILL_MS = 400;
  let dying: MockUpstream;
  let others: MockUpstream[];
  let pair: MockUpstream[];
  let gateway: RunningGateway;

  beforeAll(async () => {
    [dying, ...others] = await Promise.all([0, 1, 2].map(() => startMockUpstream()));
    pair = await Promise.all([0, 1].map(() => startMockUpstream()));
    // Every answer on these dies after three tokens of its own.
    for (const replica of [dying, ...pair]) replica.setBehaviour({ failure: 'drop', failAfterTokens: 3 });
    // The healthy ones think before they answer: a continuation's prefill is a gap the client sees.
    for (const replica of others) replica.setBehaviour({ prefillMs: CONTINUATION_PREFILL_MS });
    const ejecting = {
      engine: 'http',
      healthCheckIntervalMs: 0,
      maxFailures: 1,
      ejectionBaseMs: 600_000,
      ejectionMaxMs: 600_000,
      nonStreaming: 'stream',
    };
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 10_000 },
      models: [
        // The dying replica first: the first request of the model starts on it.
        { name: 'ejects', upstreams: [dying.url, ...others.map((replica) => replica.url)], ...ejecting },
        { name: 'ejects-pair', upstreams: pair.map((replica) => replica.url), ...ejecting },
      ],
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([dying, ...(others ?? []), ...(pair ?? [])].map((replica) => replica?.close()));
  });

  it("keeps the client's timings across a resume (the first attempt's prefill, one long gap, the client's prompt) and its time to first token, then starts no request on the ejected replica", async () => {
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const sent = performance.now();
    const stream = await openai.chat.completions.create({
      model: 'ejects',
      stream: true,
      messages: [{ role: 'user', content: PROMPT }],
      timings_per_token: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    const contents: Array<{ text: string; at: number; timings: Record<string, number> }> = [];
    let roles = 0;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.role) roles += 1;
      if (delta?.content)
        contents.push({
          text: delta.content,
          at: performance.now() - sent,
          timings: (chunk as unknown as { timings: Record<string, number> }).timings,
        });
    }
    expect(contents.map((content) => content.text).join('')).toBe(PROMPT);
    expect(roles).toBe(1);
    // It started on the dying replica and went on on one of the others.
    expect(dying.state.chatRequests).toBe(1);
    const continuations = others.flatMap((replica) =>
      replica.state.received.filter((request) => request.body.continue_final_message === true),
    );
    expect(continuations).toHaveLength(1);

    const timings = contents.map((content) => content.timings);
    // prompt_n is the client's prompt, and prefill the first attempt's, on every chunk (a continuation's would be 8 + 3 tokens, and 400 ms).
    expect(new Set(timings.map((timing) => timing.prompt_n))).toEqual(new Set([8]));
    expect(new Set(timings.map((timing) => timing.prompt_ms))).toEqual(new Set([timings[0].prompt_ms]));
    expect(timings.map((timing) => timing.predicted_n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // The resume is one long gap between the third and the fourth token: the continuation's prefill at least.
    expect(timings[3].predicted_ms - timings[2].predicted_ms).toBeGreaterThanOrEqual(CONTINUATION_PREFILL_MS);
    // The time to first token is the first attempt's: no later than the client received it.
    const samples = await scrape(gateway.url);
    const ttftSeconds = valueOf(samples, 'gantry_time_to_first_token_seconds_sum', { model: 'ejects' });
    expect(valueOf(samples, 'gantry_time_to_first_token_seconds_count', { model: 'ejects' })).toBe(1);
    expect(ttftSeconds * 1000).toBeLessThanOrEqual(contents[0].at);
    expect(contents[3].at - contents[0].at).toBeGreaterThanOrEqual(CONTINUATION_PREFILL_MS);

    // Ejected: the next requests all start elsewhere (least outstanding would otherwise come back to it).
    for (let index = 0; index < 4; index += 1) {
      const answer = await openai.chat.completions.create({
        model: 'ejects',
        messages: [{ role: 'user', content: PROMPT }],
      });
      expect(answer.choices[0].message.content).toBe(PROMPT);
    }
    expect(dying.state.chatRequests).toBe(1);
    expect(
      valueOf(await scrape(gateway.url), 'gantry_upstream_replica_healthy', { model: 'ejects', replica: dying.url }),
    ).toBe(0);
  });

  it('a continuation never goes back to an ejected replica, even one that failed this very answer: with none left, the answer ends in-band', async () => {
    // Each replica of the pair cuts its part after three tokens and is ejected; back on the first, the answer would have ended well.
    const answer = await chatStream(gateway.url, 'ejects-pair', { messages: [{ role: 'user', content: PROMPT }] });
    expect(answer.text).toBe('one two three four five six');
    expect(answer.error).toMatch(/No other replica could continue the answer/);
    expect(pair.map((replica) => replica.state.chatRequests)).toEqual([1, 1]);
    expect(
      valueOf(await scrape(gateway.url), 'gantry_stream_resume_failures_total', {
        model: 'ejects-pair',
        reason: 'no_replica',
      }),
    ).toBe(1);
  });
});

/** Asks one model through one API with its official SDK, streamed or not, and reads the answer as a client would. */
function answerer(url: string): Ask {
  const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const anthropic = new Anthropic({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
  const messages = [{ role: 'user' as const, content: PROMPT }];
  const failed = (error: unknown): Answer => ({ text: '', error: (error as Error).message });
  return async (model, api, stream, extra = {}) => {
    if (api === 'chat' && stream) {
      const { toolArguments: _ignored, ...answer } = await chatStream(url, model, { messages, ...extra });
      return answer;
    }
    if (api === 'chat') {
      const completion = await openai.chat.completions
        .create({ model, messages, ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch(failed);
      if (!('choices' in completion)) return completion;
      return {
        text: completion.choices[0].message.content ?? '',
        usage: { prompt: completion.usage!.prompt_tokens, completion: completion.usage!.completion_tokens },
      };
    }
    if (api === 'responses' && stream) {
      const events = await openai.responses.create({
        model,
        input: PROMPT,
        stream: true,
        ...extra,
      } as OpenAI.Responses.ResponseCreateParamsStreaming);
      const answer: Answer = { text: '', openings: 0 };
      let sequence = -1;
      for await (const event of events) {
        expect(event.sequence_number).toBe(sequence + 1);
        sequence = event.sequence_number;
        if (event.type === 'response.created') answer.openings! += 1;
        if (event.type === 'response.output_text.delta') answer.text += event.delta;
        if (event.type === 'response.failed') answer.error = event.response.error?.message;
        if (event.type === 'response.completed')
          answer.usage = {
            prompt: event.response.usage!.input_tokens,
            completion: event.response.usage!.output_tokens,
          };
      }
      return answer;
    }
    if (api === 'responses') {
      const response = await openai.responses
        .create({ model, input: PROMPT, ...extra } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
        .catch(failed);
      if ('error' in response && !('output' in response)) return response as Answer;
      const whole = response as OpenAI.Responses.Response;
      return {
        text: whole.output_text,
        usage: { prompt: whole.usage!.input_tokens, completion: whole.usage!.output_tokens },
      };
    }
    if (stream) {
      const answer: Answer = { text: '', openings: 0 };
      const blocks = new Set<number>();
      let prompt = 0;
      try {
        const events = await anthropic.messages.create({ model, max_tokens: 100, messages, stream: true, ...extra });
        for await (const event of events) {
          if (event.type === 'message_start') {
            answer.openings! += 1;
            prompt = event.message.usage.input_tokens;
          }
          if (event.type === 'content_block_start') blocks.add(event.index);
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
            answer.text += event.delta.text;
          if (event.type === 'message_delta') answer.usage = { prompt, completion: event.usage.output_tokens };
        }
      } catch (error) {
        answer.error = (error as Error).message;
      }
      // One text block, however many replicas wrote it.
      if (!answer.error) expect([...blocks]).toEqual([0]);
      return answer;
    }
    const message = await anthropic.messages.create({ model, max_tokens: 100, messages, ...extra }).catch(failed);
    if (!('content' in message)) return message;
    const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    return { text, usage: { prompt: message.usage.input_tokens, completion: message.usage.output_tokens } };
  };
}

/** A streamed chat completion with the openai SDK: its text, tool-call arguments, usage, role chunks and in-band error. */
async function chatStream(
  url: string,
  model: string,
  body: Record<string, unknown>,
): Promise<Answer & { toolArguments: string }> {
  const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const answer: Answer & { toolArguments: string } = { text: '', openings: 0, toolArguments: '' };
  try {
    const stream = await openai.chat.completions.create({
      model,
      stream: true,
      stream_options: { include_usage: true },
      ...body,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.role) answer.openings! += 1;
      answer.text += delta?.content ?? '';
      answer.toolArguments += delta?.tool_calls?.map((call) => call.function?.arguments ?? '').join('') ?? '';
      if (chunk.usage) answer.usage = { prompt: chunk.usage.prompt_tokens, completion: chunk.usage.completion_tokens };
    }
  } catch (error) {
    answer.error = (error as Error).message;
  }
  return answer;
}
