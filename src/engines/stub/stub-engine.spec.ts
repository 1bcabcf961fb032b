import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { plainToInstance } from 'class-transformer';
import { generationRequest, userMessage } from '../../../test/support/requests.js';
import { EngineError } from '../../engine/engine-error.js';
import { countersOf, type EngineEvent } from '../../engine/engine-event.js';
import type { GenerationRequest } from '../../engine/generation-request.js';
import { StubModelConfig } from './stub-model-config.js';
import { StubEngine } from './stub-engine.js';
import { EMPTY_PROMPT_ANSWER } from './stub-script.js';

function stubConfig(keys: Partial<StubModelConfig> = {}): StubModelConfig {
  return plainToInstance(StubModelConfig, { name: 'stub', engine: 'stub', ...keys }, { exposeDefaultValues: true });
}

function run(keys: Partial<StubModelConfig>, request: GenerationRequest) {
  const scheduler = new VirtualTimeScheduler();
  const engine = new StubEngine(stubConfig(keys), scheduler);
  const events: Array<{ at: number; event: EngineEvent }> = [];
  let error: unknown;
  let completed = false;
  engine.generate(request).subscribe({
    next: (event) => events.push({ at: scheduler.now(), event }),
    error: (failure) => (error = failure),
    complete: () => (completed = true),
  });
  scheduler.flush();
  const text = (type: string) =>
    events.flatMap(({ event }) => (event.type === type && 'text' in event ? [event.text] : [])).join('');
  const done = events.map(({ event }) => event).find((event) => event.type === 'done');
  return { engine, events, error, completed, text, done };
}

describe('StubEngine', () => {
  it('echoes the last user message one word per token and counts usage', () => {
    const request = generationRequest({
      messages: [{ role: 'system', content: 'be brief' }, userMessage('first'), userMessage('Hello  there\nworld')],
    });
    const result = run({}, request);
    expect(result.text('text')).toBe('Hello there world');
    expect(result.events.filter(({ event }) => event.type === 'text')).toHaveLength(3);
    expect(result.done).toEqual({
      type: 'done',
      finishReason: 'stop',
      stopSequence: undefined,
      usage: { promptTokens: 6, completionTokens: 3, cachedTokens: 0, reasoningTokens: 0 },
    });
    expect(result.completed).toBe(true);
  });

  it('answers a fixed sentence when the prompt has no text', () => {
    expect(run({}, generationRequest({ messages: [userMessage('   ')] })).text('text')).toBe(EMPTY_PROMPT_ANSWER);
  });

  it('stops at max tokens with finish reason length', () => {
    const result = run({}, generationRequest({ sampling: { stop: [], maxTokens: 2 } }));
    expect(result.text('text')).toBe('Hello there');
    expect(result.done).toMatchObject({ finishReason: 'length', usage: { completionTokens: 2 } });
  });

  it('honours stop strings, even across words, and reports the one that matched', () => {
    const request = generationRequest({ messages: [userMessage('one two three four')], sampling: { stop: ['o th'] } });
    const result = run({}, request);
    expect(result.text('text')).toBe('one tw');
    expect(result.done).toMatchObject({ finishReason: 'stop', stopSequence: 'o th' });
  });

  it('waits prefillMs for the first ack, then tokenIntervalMs between tokens, each carrying the counters', () => {
    const result = run({ prefillMs: 1000, tokenIntervalMs: 30 }, generationRequest());
    const acks = result.events.filter(({ event }) => event.type === 'ack');
    expect(acks.map(({ at }) => at)).toEqual([1000]);
    expect(acks[0].event).toMatchObject({
      usage: { promptTokens: 3, completionTokens: 0 },
      timings: { prompt_n: 3, predicted_n: 0 },
    });
    const texts = result.events.filter(({ event }) => event.type === 'text');
    expect(texts.map(({ at }) => at)).toEqual([1030, 1060, 1090]);
    expect(texts.map(({ event }) => countersOf(event)?.usage.completionTokens)).toEqual([1, 2, 3]);
    expect(texts.at(-1)!.event).toMatchObject({ timings: { predicted_n: 3 } });
  });

  it('sends the counters of a token whose text a stop string holds back as an ack', () => {
    const result = run(
      {},
      generationRequest({ messages: [userMessage('one two three four')], sampling: { stop: ['o th'] } }),
    );
    expect(result.events.map(({ event }) => event.type)).toEqual(['accepted', 'ack', 'text', 'text', 'ack', 'done']);
    expect(result.events[4].event).toMatchObject({ type: 'ack', usage: { completionTokens: 3 } });
  });

  it('streams the configured reasoning before the answer and counts it', () => {
    const result = run({ reasoning: 'let me think' }, generationRequest());
    const kinds = result.events.map(({ event }) => event.type).filter((type) => type !== 'ack');
    expect(kinds).toEqual(['accepted', 'reasoning', 'reasoning', 'reasoning', 'text', 'text', 'text', 'done']);
    expect(result.text('reasoning')).toBe('let me think');
    expect(result.done).toMatchObject({ usage: { completionTokens: 6, reasoningTokens: 3 } });
  });

  it('tells its acceptance at once, before prefill, with the prompt’s count', () => {
    const result = run({ prefillMs: 100 }, generationRequest({ messages: [userMessage('one two three')] }));
    expect(result.events[0]).toEqual({
      at: 0,
      event: { type: 'accepted', usage: { promptTokens: 3, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0 } },
    });
    expect(result.events[1]).toMatchObject({ at: 100, event: { type: 'ack' } });
  });

  it('fails after failAfterTokens tokens with the configured kind', () => {
    const result = run({ failAfterTokens: 2, failWith: 'overloaded' }, generationRequest());
    expect(result.text('text')).toBe('Hello there');
    expect(result.error).toBeInstanceOf(EngineError);
    expect((result.error as EngineError).kind).toBe('overloaded');
    expect(result.done).toBeUndefined();
  });

  it('calls the named tool with the JSON object of the last user message, in fragments', () => {
    const request = generationRequest({
      messages: [userMessage('{"city":"Paris","unit":"celsius"}')],
      tools: [{ name: 'lookup' }, { name: 'get_weather' }],
      toolChoice: { name: 'get_weather' },
    });
    const result = run({}, request);
    const calls = result.events.flatMap(({ event }) => (event.type === 'tool_call' ? [event] : []));
    expect(calls.length).toBeGreaterThan(2);
    expect(calls[0]).toMatchObject({ index: 0, name: 'get_weather', id: expect.stringMatching(/^call_/) });
    expect(calls.slice(1).every((call) => call.id === undefined && call.name === undefined)).toBe(true);
    expect(JSON.parse(calls.map((call) => call.arguments).join(''))).toEqual({ city: 'Paris', unit: 'celsius' });
    expect(result.done).toMatchObject({ finishReason: 'tool_calls' });
    expect(result.text('text')).toBe('');
  });

  it('makes one call per object of a JSON array, or only the first without parallel tool calls', () => {
    const base = {
      messages: [userMessage('[{"a":1},{"a":2}]')],
      tools: [{ name: 'first' }],
      toolChoice: 'required' as const,
    };
    const indexes = (request: GenerationRequest) =>
      new Set(run({}, request).events.flatMap(({ event }) => (event.type === 'tool_call' ? [event.index] : [])));
    expect(indexes(generationRequest(base))).toEqual(new Set([0, 1]));
    expect(indexes(generationRequest({ ...base, parallelToolCalls: false }))).toEqual(new Set([0]));
  });

  it('answers with the tool results when the conversation ends with them', () => {
    const request = generationRequest({
      messages: [
        userMessage('{"city":"Paris"}'),
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
        },
        { role: 'tool', toolCallId: 'call_1', content: 'sunny, 21 C' },
      ],
      tools: [{ name: 'get_weather' }],
      toolChoice: 'required',
    });
    const result = run({}, request);
    expect(result.text('text')).toBe('sunny, 21 C');
    expect(result.done).toMatchObject({ finishReason: 'stop' });
  });

  it('clears its timers when unsubscribed during prefill and during decoding', () => {
    for (const unsubscribeAt of [500, 1045]) {
      const scheduler = new VirtualTimeScheduler();
      const engine = new StubEngine(stubConfig({ prefillMs: 1000, tokenIntervalMs: 30 }), scheduler);
      const seen: string[] = [];
      const subscription = engine.generate(generationRequest()).subscribe((event) => seen.push(event.type));
      expect(engine.pendingTimers).toBe(1);
      expect(engine.activeGenerations).toBe(1);
      scheduler.schedule(() => subscription.unsubscribe(), unsubscribeAt);
      scheduler.flush();
      expect(engine.pendingTimers).toBe(0);
      expect(engine.activeGenerations).toBe(0);
      expect(seen).not.toContain('done');
    }
  });
});
