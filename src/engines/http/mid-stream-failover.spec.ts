import { describe, expect, it } from 'vitest';
import { generationRequest } from '../../../test/support/requests.js';
import { EngineError } from '../../engine/engine-error.js';
import { makeTimings, type EngineEvent, type TokenUsage } from '../../engine/engine-event.js';
import type { GenerationRequest } from '../../engine/generation-request.js';
import { continuationTermsOf, MidStreamFailover, type Continuation } from './mid-stream-failover.js';
import { toUpstreamChatRequest } from './upstream-chat-request.js';
import {
  upstreamFrameError,
  upstreamStallError,
  upstreamStatusError,
  upstreamTransportError,
} from './upstream-error.js';

const reset = () =>
  upstreamTransportError(Object.assign(new Error('socket'), { code: 'UND_ERR_SOCKET' }), {
    headersTimeoutMs: 0,
    bodyTimeoutMs: 0,
  });
const usage = (promptTokens: number, completionTokens: number, extra: Partial<TokenUsage> = {}): TokenUsage => ({
  promptTokens,
  completionTokens,
  cachedTokens: 0,
  reasoningTokens: 0,
  ...extra,
});
const ack = (counters: TokenUsage, promptMs = 0, predictedMs = 0): EngineEvent => ({
  type: 'ack',
  usage: counters,
  timings: makeTimings({
    promptN: counters.promptTokens,
    promptMs,
    predictedN: counters.completionTokens,
    predictedMs,
  }),
});
const text = (piece: string): EngineEvent => ({ type: 'text', text: piece });

function failoverFor(overrides: Partial<GenerationRequest> = {}, maxResumes = 2) {
  const request = generationRequest({ sampling: { stop: [], maxTokens: 10, seed: 7 }, ...overrides });
  const body = toUpstreamChatRequest(request, { upstreamModel: 'org/model', continuousUsage: true, whole: false });
  const failover = new MidStreamFailover(continuationTermsOf(request), JSON.stringify(body), { maxResumes }, 1000);
  return { failover, body };
}

/** The first attempt: two chunks of text with continuous usage, 50 ms of prefill then 20 ms of decoding. */
function answerTwoWords(failover: MidStreamFailover): void {
  for (const event of [
    ack(usage(12, 1, { cachedTokens: 4 }), 50, 0),
    text('Hello'),
    ack(usage(12, 2, { cachedTokens: 4 }), 50, 20),
    text(' there'),
  ]) {
    expect(failover.pass(event)).toBe(event);
  }
}

function continued(failover: MidStreamFailover, error: unknown = reset(), now = 5000): Continuation {
  const decision = failover.decide(error, now);
  expect(decision.kind).toBe('continue');
  return decision as Continuation;
}

describe('MidStreamFailover', () => {
  it('continues from the partial text: a final assistant message to continue, the tokens left, the rest of the body as it was', () => {
    const { failover, body } = failoverFor();
    answerTwoWords(failover);
    const continuation = continued(failover);
    expect(continuation).toMatchObject({ reason: 'reset', resume: 1, producedTokens: 2 });
    expect(continuation.body).toEqual({
      ...body,
      messages: [
        { role: 'user', content: 'Hello there world' },
        { role: 'assistant', content: 'Hello there' },
      ],
      continue_final_message: true,
      add_generation_prompt: false,
      max_tokens: 8,
    });
    expect(continuation.body.seed).toBe(7);
    // The latest output's time as the client's timings tell it: start + prefill + decode so far.
    expect(continuation.startedAt).toBe(1000 + 50 + 20);
  });

  it("states a continuation's counters as the client's: its prompt, each output token once, its timings", () => {
    const { failover } = failoverFor();
    answerTwoWords(failover);
    continued(failover);
    // The continuation's own decoder: a prompt holding the partial answer, a fresh count, a fresh cache figure.
    const restated = failover.pass(ack(usage(14, 1, { cachedTokens: 13, reasoningTokens: 0 }), 300, 0));
    expect(restated).toMatchObject({ type: 'ack', usage: usage(12, 3, { cachedTokens: 4 }) });
    const timings = (restated as Extract<EngineEvent, { type: 'ack' }>).timings;
    expect(timings).toMatchObject({ prompt_n: 12, prompt_ms: 50, predicted_n: 3, predicted_ms: 20 + 300, cache_n: 4 });
    expect(failover.pass(text(' world'))).toEqual(text(' world'));
    expect(failover.pass({ type: 'done', finishReason: 'stop', usage: usage(14, 2, { cachedTokens: 13 }) })).toEqual({
      type: 'done',
      finishReason: 'stop',
      usage: usage(12, 4, { cachedTokens: 4 }),
    });
  });

  it('reads and restates the counters an output piece carries as those of an ack before it', () => {
    const { failover } = failoverFor();
    const counted = (piece: string, counters: TokenUsage, promptMs: number, predictedMs: number): EngineEvent => {
      const { usage: carried, timings } = ack(counters, promptMs, predictedMs) as Extract<EngineEvent, { type: 'ack' }>;
      return { type: 'text', text: piece, usage: carried, timings };
    };
    const first = counted('Hello', usage(12, 1, { cachedTokens: 4 }), 50, 0);
    const second = counted(' there', usage(12, 2, { cachedTokens: 4 }), 50, 20);
    expect(failover.pass(first)).toBe(first);
    expect(failover.pass(second)).toBe(second);
    const continuation = continued(failover);
    expect(continuation).toMatchObject({ producedTokens: 2, startedAt: 1000 + 50 + 20 });
    const restated = failover.pass(counted(' world', usage(14, 1, { cachedTokens: 13 }), 300, 0));
    expect(restated).toMatchObject({ type: 'text', text: ' world', usage: usage(12, 3, { cachedTokens: 4 }) });
    expect(restated).toMatchObject({
      timings: { prompt_n: 12, prompt_ms: 50, predicted_n: 3, predicted_ms: 20 + 300, cache_n: 4 },
    });
  });

  it('counts across two resumes, and the second continues the text of both attempts before it', () => {
    const { failover } = failoverFor();
    answerTwoWords(failover);
    continued(failover);
    failover.pass(ack(usage(14, 1), 300, 0));
    failover.pass(text(' world'));
    const second = continued(failover, upstreamStallError(300));
    expect(second).toMatchObject({ reason: 'stall', resume: 2, producedTokens: 3 });
    expect((second.body.messages as unknown[]).at(-1)).toEqual({ role: 'assistant', content: 'Hello there world' });
    expect(second.body.max_tokens).toBe(7);
    expect(failover.pass(ack(usage(15, 2), 10, 5))).toMatchObject({ usage: usage(12, 5, { cachedTokens: 4 }) });
  });

  it('takes the prompt from the continuation, less the partial answer, when the first attempt never reported it', () => {
    const { failover } = failoverFor();
    // Usage only at the end (no continuous usage): the decoder counted one token per chunk.
    failover.pass(ack(usage(0, 1)));
    failover.pass(text('Hello'));
    continued(failover);
    expect(
      failover.pass({ type: 'done', finishReason: 'stop', usage: usage(13, 2, { cachedTokens: 20 }) }),
    ).toMatchObject({
      usage: usage(12, 3, { cachedTokens: 12 }),
    });
  });

  it('continues a long answer with every piece of its text, in order', () => {
    const { failover } = failoverFor({ sampling: { stop: [] } });
    const pieces = Array.from({ length: 600 }, (_, index) => ` w${index}`);
    failover.pass(ack(usage(12, 600)));
    for (const piece of pieces) failover.pass(text(piece));
    expect((continued(failover).body.messages as unknown[]).at(-1)).toEqual({
      role: 'assistant',
      content: pieces.join(''),
    });
  });

  it('asks for no token limit when the client set none', () => {
    const { failover } = failoverFor({ sampling: { stop: [] } });
    answerTwoWords(failover);
    expect(continued(failover).body.max_tokens).toBeUndefined();
  });

  it('finishes with `length` when the answer had used its whole token budget', () => {
    const { failover } = failoverFor({ sampling: { stop: [], maxTokens: 2 } });
    answerTwoWords(failover);
    expect(failover.decide(reset(), 5000)).toEqual({
      kind: 'finish',
      event: { type: 'done', finishReason: 'length', usage: usage(12, 2, { cachedTokens: 4 }) },
    });
  });

  it('ends with the failure, saying why, once the resumes are spent', () => {
    const { failover } = failoverFor({}, 1);
    answerTwoWords(failover);
    continued(failover);
    const decision = failover.decide(reset(), 6000);
    expect(decision).toMatchObject({ kind: 'end', failure: 'spent' });
    expect((decision as { error: EngineError }).error).toMatchObject({
      kind: 'upstream',
      message:
        'The upstream closed the connection before the answer was complete. It was continued 1 time on other replicas, as many as midStreamFailover.maxResumes allows.',
    });
    const none = failoverFor({}, 0).failover;
    answerTwoWords(none);
    expect(none.decide(reset(), 5000)).toMatchObject({
      kind: 'end',
      failure: 'spent',
      error: { message: expect.stringMatching(/maxResumes is 0/) },
    });
  });

  it('does not continue a response format, a tool call being written, or reasoning in progress', () => {
    for (const responseFormat of [
      { type: 'json_object' as const },
      { type: 'json_schema' as const, name: 'answer', schema: {} },
    ]) {
      const { failover } = failoverFor({ sampling: { stop: [], responseFormat } });
      answerTwoWords(failover);
      expect(failover.decide(reset(), 5000)).toMatchObject({
        kind: 'end',
        failure: 'not_continuable',
        error: { message: expect.stringMatching(/response format/) },
      });
    }
    const tool = failoverFor().failover;
    tool.pass(ack(usage(12, 1)));
    tool.pass({ type: 'tool_call', index: 0, id: 'call_1', name: 'lookup', arguments: '{"q":' });
    expect(tool.decide(reset(), 5000)).toMatchObject({
      kind: 'end',
      failure: 'not_continuable',
      error: { message: expect.stringMatching(/tool call/) },
    });
    const thinking = failoverFor().failover;
    thinking.pass(ack(usage(12, 1)));
    thinking.pass({ type: 'reasoning', text: 'Let me see' });
    expect(thinking.decide(reset(), 5000)).toMatchObject({
      kind: 'end',
      failure: 'not_continuable',
      error: { message: expect.stringMatching(/still reasoning/) },
    });
    // Reasoning done and the answer begun: the text is continued.
    thinking.pass({ type: 'text', text: 'Yes' });
    expect(continued(thinking).body.messages).toContainEqual({ role: 'assistant', content: 'Yes' });
  });

  it("ends with a failure that is the request's own, as before failover; on a continuation, as the continuation's failure", () => {
    const { failover } = failoverFor();
    answerTwoWords(failover);
    const ownFault = upstreamFrameError({ error: { message: 'bad', code: 400 } });
    expect(failover.decide(ownFault, 5000)).toEqual({ kind: 'end', error: ownFault });
    continued(failover);
    const refused = failover.decide(
      upstreamStatusError(400, '{"error":{"message":"continue_final_message is not supported"}}'),
      6000,
    );
    expect(refused).toMatchObject({ kind: 'end', failure: 'refused', error: { kind: 'upstream' } });
    expect((refused as { error: Error }).error.message).toBe(
      'The answer was cut and its continuation on another replica failed: The upstream answered 400: continue_final_message is not supported',
    );
  });
});
