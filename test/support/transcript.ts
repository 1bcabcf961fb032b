import { concat, from, lastValueFrom, map, throwError, toArray, type OperatorFunction } from 'rxjs';
import type { EngineEvent, TokenUsage } from '../../src/engine/engine-event.js';
import { makeTimings } from '../../src/engine/engine-event.js';
import { serializeSseFrame, type SseFrame } from '../../src/protocols/sse/sse-frame.js';
import type { StreamEvent } from '../../src/streaming/stream-event.js';

/** The exact SSE text an encoder writes for a scripted event sequence (and an optional failure). */
export async function transcriptOf(
  events: StreamEvent[],
  encoder: OperatorFunction<StreamEvent, SseFrame>,
  failure?: Error,
): Promise<string> {
  const source = failure
    ? concat(
        from(events),
        throwError(() => failure),
      )
    : from(events);
  return (await lastValueFrom(source.pipe(encoder, map(serializeSseFrame), toArray()))).join('');
}

export const usageOf = (prompt: number, completion: number, reasoning = 0): TokenUsage => ({
  promptTokens: prompt,
  completionTokens: completion,
  cachedTokens: 0,
  reasoningTokens: reasoning,
});

export const ackOf = (prompt: number, completion: number): EngineEvent => ({
  type: 'ack',
  usage: usageOf(prompt, completion),
  timings: makeTimings({ promptN: prompt, promptMs: 100, predictedN: completion, predictedMs: completion * 10 }),
});

/**
 * The same events as an engine that counts as it produces sends them: each ack that comes right
 * before an output piece rides that piece instead (EngineEvent's counters). An encoder must write
 * both the same, byte for byte.
 */
export function countersOnOutput(events: StreamEvent[]): StreamEvent[] {
  const folded: StreamEvent[] = [];
  for (let index = 0; index < events.length; index += 1) {
    const event = events[index];
    const next = events[index + 1];
    if (event.type === 'ack' && (next?.type === 'text' || next?.type === 'reasoning' || next?.type === 'tool_call')) {
      folded.push({ ...next, usage: event.usage, timings: event.timings });
      index += 1;
    } else {
      folded.push(event);
    }
  }
  return folded;
}

/** Deterministic ids for goldens: `${prefix}1`, `${prefix}2`, ... */
export function counterIds(): (prefix: string) => string {
  let next = 0;
  return (prefix) => `${prefix}${(next += 1)}`;
}

export const scripts = {
  text: (): StreamEvent[] => [
    { type: 'heartbeat', n: 0 },
    ackOf(3, 0),
    { type: 'heartbeat', n: 1 },
    ackOf(3, 1),
    { type: 'text', text: 'Hello' },
    ackOf(3, 2),
    { type: 'text', text: ' world' },
    { type: 'done', finishReason: 'stop', usage: usageOf(3, 2) },
  ],
  reasoning: (): StreamEvent[] => [
    ackOf(3, 1),
    { type: 'reasoning', text: 'think' },
    ackOf(3, 2),
    { type: 'reasoning', text: ' hard' },
    ackOf(3, 3),
    { type: 'text', text: 'done' },
    { type: 'done', finishReason: 'stop', usage: usageOf(3, 3, 2) },
  ],
  toolCalls: (): StreamEvent[] => [
    ackOf(3, 1),
    { type: 'tool_call', index: 0, id: 'call_a', name: 'get_weather', arguments: '{"city":' },
    ackOf(3, 2),
    { type: 'tool_call', index: 0, arguments: '"Paris"}' },
    ackOf(3, 3),
    { type: 'tool_call', index: 1, id: 'call_b', name: 'get_time', arguments: '{}' },
    { type: 'done', finishReason: 'tool_calls', usage: usageOf(3, 3) },
  ],
  stopSequence: (): StreamEvent[] => [
    ackOf(3, 1),
    { type: 'text', text: 'alpha ' },
    { type: 'done', finishReason: 'stop', stopSequence: 'END', usage: usageOf(3, 2) },
  ],
  length: (): StreamEvent[] => [
    ackOf(3, 1),
    { type: 'text', text: 'cut' },
    { type: 'done', finishReason: 'length', usage: usageOf(3, 1) },
  ],
  failureAfterHeartbeat: (): StreamEvent[] => [{ type: 'heartbeat', n: 0 }, ackOf(3, 0)],
};

/** The JSON payload of every frame of an SSE transcript (frames with an `event:` line). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function payloadsOf(transcript: string): any[] {
  return transcript
    .trim()
    .split('\n\n')
    .map((frame) => JSON.parse(frame.split('\ndata: ')[1]));
}
