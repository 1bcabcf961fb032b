import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { startGateway, type RunningGateway } from './support/gateway.js';
import { scrape, valueOf } from './support/prometheus.js';
import { chatStream, PROMPT } from './support/failover-answers.js';

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
