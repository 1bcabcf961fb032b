import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockBehaviour } from '../apps/mock-upstream/mock-behaviour.js';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { captureLogs } from './support/log-capture.js';
import { scrape, valueOf } from './support/prometheus.js';
import {
  answerer,
  APIS,
  behaving,
  chatStream,
  PROMPT,
  type Answer,
  type Api,
  type Ask,
} from './support/failover-answers.js';

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
