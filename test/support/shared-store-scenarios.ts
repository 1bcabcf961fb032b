import type OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { expect, it } from 'vitest';
import { eventually } from './gateway.js';

type Item = Record<string, any>;
export const SENTENCE = 'one two three four five six seven eight nine ten eleven twelve';
export const textOf = (response: { output: unknown[] }) =>
  (response.output as Item[])
    .filter((item) => item.type === 'message')
    .flatMap((item) => item.content.map((part: Item) => part.text))
    .join('');

/** Two sides of one response store: a client of each, and the running requests of a model that side A reports. */
export interface SharedStoreSides {
  a: OpenAI;
  b: OpenAI;
  runningOnA(model: string): Promise<number>;
}

/**
 * The tests of two gateways (replicas on one Redis, or workers of one instance) that share one
 * response store, each request of a test sent to the side it names. Models: `stub`, `slow` (a
 * background stream long enough to join), `stuck` (never answers).
 */
export function sharedStoreScenarios(side: string, sides: () => SharedStoreSides): void {
  it(`creates on one ${side} and reads, lists and continues on the other, and back`, async () => {
    const { a, b } = sides();
    const created = await a.responses.create({ model: 'stub', input: 'remember the lighthouse' });
    const read = await b.responses.retrieve(created.id);
    expect(read).toMatchObject({ id: created.id, status: 'completed', store: true });
    expect(textOf(read)).toBe('remember the lighthouse');
    expect((await b.responses.inputItems.list(created.id)).data).toMatchObject([
      { type: 'message', content: [{ type: 'input_text', text: 'remember the lighthouse' }] },
    ]);

    const continued = await b.responses.create({
      model: 'stub',
      input: 'what did I say',
      previous_response_id: created.id,
    });
    expect(textOf(continued)).toBe('what did I say');
    // The stub counts every word of its prompt: the first turn's input and output reached it.
    expect(continued.usage!.input_tokens).toBe(3 + 3 + 4);
    const third = await a.responses.create({ model: 'stub', input: 'again', previous_response_id: continued.id });
    expect(third.usage!.input_tokens).toBe(3 + 3 + 4 + 4 + 1);
  });

  it(`follows on one ${side} a background stream that runs on the other: gapless, nothing missed`, async () => {
    const { a, b } = sides();
    const stream = await a.responses.create({ model: 'slow', input: SENTENCE, background: true, stream: true });
    const seen: ResponseStreamEvent[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (event.type === 'response.output_text.delta') break;
    }
    const id = (seen[0] as Extract<ResponseStreamEvent, { type: 'response.created' }>).response.id;
    const resumed = await b.responses.retrieve(id, { stream: true, starting_after: seen.at(-1)!.sequence_number });
    for await (const event of resumed) seen.push(event);

    expect(seen.map((event) => `${event.sequence_number} ${event.type}`)).toEqual(
      seen.map((event, index) => `${index} ${event.type}`),
    );
    expect(seen.at(-1)!.type).toBe('response.completed');
    expect(seen.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('')).toBe(
      SENTENCE,
    );
    expect(textOf(await b.responses.retrieve(id))).toBe(SENTENCE);
    // A resume point past 2^53 is a 400 naming it, not a store failure.
    await expect(b.responses.retrieve(id, { stream: true, starting_after: 2 ** 53 + 2 })).rejects.toMatchObject({
      status: 400,
      error: { param: 'starting_after' },
    });
  });

  it(`cancels on one ${side} a background response that runs on the other: its engine work stops`, async () => {
    const { a, b, runningOnA } = sides();
    const created = await a.responses.create({ model: 'stuck', input: 'wait', background: true });
    expect(await eventually(async () => (await runningOnA('stuck')) === 1, 10_000)).toBe(true);

    const cancelled = await b.responses.cancel(created.id);
    expect(cancelled).toMatchObject({ id: created.id, status: 'cancelled' });
    expect(await eventually(async () => (await runningOnA('stuck')) === 0, 10_000)).toBe(true);
    expect((await a.responses.retrieve(created.id)).status).toBe('cancelled');
  });

  it(`deletes on one ${side}: the other no longer finds it`, async () => {
    const { a, b } = sides();
    const created = await a.responses.create({ model: 'stub', input: 'to be deleted' });
    await b.responses.delete(created.id);
    await expect(a.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      a.responses.create({ model: 'stub', input: 'x', previous_response_id: created.id }),
    ).rejects.toMatchObject({ status: 400 });
  });
}
