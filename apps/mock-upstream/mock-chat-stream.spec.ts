import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { planAnswer } from './mock-answer.js';
import { DEFAULT_BEHAVIOUR } from './mock-behaviour.js';
import { streamAnswer } from './mock-chat-stream.js';

/** The turn of the event loop each chunk was written in (a `setImmediate` counter runs beside the stream). */
async function turnsOfWrites(chunksPerWrite: number): Promise<number[]> {
  let turn = 0;
  let counting = true;
  const count = () => {
    turn += 1;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  const turns: number[] = [];
  const response = {
    writeHead: () => response,
    flushHeaders: () => undefined,
    write: () => {
      turns.push(turn);
      return true;
    },
    end: () => undefined,
  } as unknown as ServerResponse;
  const behaviour = { ...DEFAULT_BEHAVIOUR, tokens: 48, chunksPerWrite };
  await streamAnswer({
    response,
    answer: planAnswer({ messages: [{ role: 'user', content: 'hi' }] }, behaviour, 'call'),
    behaviour,
    id: 'chatcmpl-1',
    created: 1,
    model: 'mock',
    signal: new AbortController().signal,
    onDecoding: () => undefined,
    failureMessage: '',
    includeUsage: false,
    continuousUsage: false,
  });
  counting = false;
  return turns;
}

const chunksPerTurn = (turns: number[]) =>
  [...new Set(turns)].map((turn) => turns.filter((other) => other === turn).length);

describe('streamAnswer', () => {
  it('writes its chunks in bursts of chunksPerWrite (16 by default), each burst in one turn of the event loop', async () => {
    // The role chunk goes with the first burst, the finish chunk with the last.
    expect(chunksPerTurn(await turnsOfWrites(DEFAULT_BEHAVIOUR.chunksPerWrite))).toEqual([17, 16, 17]);
  });

  it('writes one chunk per turn with chunksPerWrite 1, as an engine that sends each token as it is made', async () => {
    expect(chunksPerTurn(await turnsOfWrites(1))).toEqual([2, ...Array(46).fill(1), 2]);
  });
});
