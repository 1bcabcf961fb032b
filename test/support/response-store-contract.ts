import { randomUUID } from 'node:crypto';
import type { Observable } from 'rxjs';
import { afterAll, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import type {
  ResponseObject,
  ResponseStore,
  StoredEvent,
  StoredItem,
  StoredResponse,
} from '../../src/stored-responses/response-store.js';
import { eventually } from './gateway.js';

// The contract of a ResponseStore (src/stored-responses/response-store.ts) and the helpers its
// tests share: the memory and Redis stores run it, and so does a worker's store over IPC.
export const newId = (kind: string) => `${kind}_${randomUUID().replaceAll('-', '')}`;

export function message(role: 'user' | 'assistant', text: string): StoredItem {
  return {
    id: newId('msg'),
    type: 'message',
    role,
    content: [{ type: role === 'user' ? 'input_text' : 'output_text', text }],
  };
}

export function responseObject(id: string, status: string, output: StoredItem[] = []): ResponseObject {
  return { id, object: 'response', created_at: 1_700_000_000, status, model: 'stub', output };
}

/** A response as the routes keep it at its start: queued, three input items, no output yet. */
export function startedRecord(id = newId('resp'), previousResponseId: string | null = null): StoredResponse {
  return {
    response: responseObject(id, 'queued'),
    inputItems: [message('user', 'one'), message('assistant', 'two'), message('user', 'three')],
    previousResponseId,
  };
}

/** A response that has ended: one the memory store may let go to make room. */
export function finishedRecord(id = newId('resp')): StoredResponse {
  return { ...startedRecord(id), response: responseObject(id, 'completed') };
}

export function event(sequence: number, delta = 'x'): StoredEvent {
  return {
    sequence,
    event: 'response.output_text.delta',
    data: JSON.stringify({
      type: 'response.output_text.delta',
      sequence_number: sequence,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta,
    }),
  };
}

export const events = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, index) => event(from + index));
export const sequences = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, index) => from + index);

export interface Follower {
  seen: number[];
  /** Settles when the stream completes (with what was seen) or errors. */
  done: Promise<number[]>;
  stop(): void;
}

export function follow(events$: Observable<StoredEvent>): Follower {
  const seen: number[] = [];
  let stop = () => {};
  const done = new Promise<number[]>((resolve, reject) => {
    const subscription = events$.subscribe({
      next: (stored) => {
        expect(JSON.parse(stored.data).sequence_number).toBe(stored.sequence);
        seen.push(stored.sequence);
      },
      error: reject,
      complete: () => resolve(seen),
    });
    stop = () => subscription.unsubscribe();
  });
  done.catch(() => undefined);
  return { seen, done, stop: () => stop() };
}

export async function failureOf(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

export interface StoreOptions {
  maxEventsPerResponse?: number;
}

/**
 * What every ResponseStore does, as tests to call inside a describe (each test uses fresh ids);
 * the stores it makes are closed after the describe's tests.
 */
export function responseStoreContract(makeStore: (options?: StoreOptions) => ResponseStore) {
  const made: ResponseStore[] = [];
  afterAll(async () => {
    await Promise.all(made.map((responses) => responses.close()));
  });
  const store = (options?: StoreOptions) => {
    const responses = makeStore(options);
    made.push(responses);
    return responses;
  };

  it('keeps a response with its input items and the response it continued; an unknown id is absent', async () => {
    const responses = store();
    const first = startedRecord();
    const second = startedRecord(undefined, first.response.id);
    await responses.create(first);
    await responses.create(second);
    expect(await responses.get(first.response.id)).toEqual(first);
    expect(await responses.get(second.response.id)).toEqual(second);
    expect(await responses.get(newId('resp'))).toBeUndefined();
  });

  it('returns copies: a caller changing what it got or gave changes nothing kept', async () => {
    const responses = store();
    const record = startedRecord();
    await responses.create(record);
    const kept = structuredClone(record);
    record.inputItems[0]!.role = 'system';
    const got = (await responses.get(record.response.id))!;
    got.response.status = 'failed';
    expect(await responses.get(record.response.id)).toEqual(kept);
  });

  it('replaces the response on update and finds its output items; an update of an unkept id keeps nothing', async () => {
    const responses = store();
    const record = startedRecord();
    await responses.create(record);
    const answer = message('assistant', 'four');
    const reasoning: StoredItem = { id: newId('rs'), type: 'reasoning', summary: [], encrypted_content: 'sealed' };
    const completed = responseObject(record.response.id, 'completed', [reasoning, answer]);
    await responses.update(completed);
    expect(await responses.get(record.response.id)).toEqual({ ...record, response: completed });
    const found = await responses.items([answer.id, reasoning.id, record.inputItems[1]!.id]);
    expect(Object.fromEntries(found)).toEqual({
      [answer.id]: answer,
      [reasoning.id]: reasoning,
      [record.inputItems[1]!.id]: record.inputItems[1],
    });

    const stray = message('assistant', 'never kept');
    await responses.update(responseObject(newId('resp'), 'completed', [stray]));
    expect((await responses.items([stray.id])).size).toBe(0);
  });

  it('finds items of any kept response by id, input or output, and leaves unknown ids out', async () => {
    const responses = store();
    const first = startedRecord();
    const second = startedRecord();
    await responses.create(first);
    await responses.create(second);
    const call: StoredItem = {
      id: newId('fc'),
      type: 'function_call',
      call_id: 'call_1',
      name: 'lookup',
      arguments: '{}',
    };
    await responses.update(responseObject(second.response.id, 'completed', [call]));
    const wanted = [first.inputItems[2]!.id, call.id, 'msg_unknown', second.inputItems[0]!.id];
    const found = await responses.items(wanted);
    expect([...found.keys()].sort()).toEqual([first.inputItems[2]!.id, call.id, second.inputItems[0]!.id].sort());
    expect(found.get(call.id)).toEqual(call);
    expect(await responses.items([])).toEqual(new Map());
  });

  it('reads items no further than maxBytes: it stops at the one that passes it', async () => {
    const responses = store();
    const record = startedRecord();
    record.inputItems = [
      message('user', 'a'.repeat(1000)),
      message('user', 'b'.repeat(1000)),
      message('user', 'c'.repeat(1000)),
    ];
    await responses.create(record);
    const ids = record.inputItems.map((item) => item.id);
    const size = JSON.stringify(record.inputItems[0]).length;
    expect([...(await responses.items(['msg_unknown', ...ids], size * 2 - 1)).keys()]).toEqual(ids.slice(0, 2));
    expect([...(await responses.items(ids, size - 1)).keys()]).toEqual(ids.slice(0, 1));
    expect((await responses.items(ids, size * 2)).size).toBe(3);
  });

  it('never replaces a final state with another, atomically; the same one may be written again', async () => {
    const responses = store();
    const record = startedRecord();
    await responses.create(record);
    expect(await responses.update(responseObject(record.response.id, 'in_progress'))).toBe(true);
    const failed = {
      ...responseObject(record.response.id, 'failed'),
      error: { code: 'server_error', message: 'left' },
    };
    expect(await responses.update(failed)).toBe(true);
    // A run that could not write meanwhile comes back: neither its running state nor its end replaces the failure.
    const late = [
      responseObject(record.response.id, 'in_progress'),
      responseObject(record.response.id, 'completed', [message('assistant', 'late')]),
    ];
    expect(await Promise.all(late.map((response) => responses.update(response)))).toEqual([false, false]);
    expect((await responses.get(record.response.id))?.response).toEqual(failed);
    // The same state again (a refresh, a write retried after a timeout) is taken.
    expect(await responses.update({ ...failed, refreshed: true })).toBe(true);
    expect(await responses.update(responseObject(newId('resp'), 'completed'))).toBe(false);
  });

  it('forgets a response, its items and its events on delete, once; an item another response also holds stays', async () => {
    const responses = store();
    const record = startedRecord();
    const shared = record.inputItems[0]!;
    await responses.create(record);
    await responses.append(record.response.id, events(0, 2), false);
    const later = startedRecord();
    later.inputItems.push(shared);
    await responses.create(later);

    expect(await responses.delete(record.response.id)).toBe(true);
    expect(await responses.get(record.response.id)).toBeUndefined();
    expect((await responses.items(record.inputItems.map((item) => item.id))).size).toBe(1);
    expect((await responses.items([shared.id])).get(shared.id)).toEqual(shared);
    expect((await failureOf(firstValue(responses.events(record.response.id, -1)))).kind).toBe('not_found');
    expect(await responses.delete(record.response.id)).toBe(false);
    expect(await responses.delete(newId('resp'))).toBe(false);
    expect(await responses.get(later.response.id)).toEqual(later);
  });

  it('replays the kept events after a sequence number, then follows new ones and completes after the final one', async () => {
    const responses = store();
    const record = startedRecord();
    await responses.create(record);
    await responses.append(record.response.id, events(0, 4), false);
    const follower = follow(responses.events(record.response.id, 1));
    expect(await eventually(() => follower.seen.length === 3)).toBe(true);
    expect(follower.seen).toEqual([2, 3, 4]);
    await responses.append(record.response.id, events(5, 6), false);
    await responses.append(record.response.id, events(7, 7), true);
    expect(await follower.done).toEqual(sequences(2, 7));
  });

  it('replays a closed log from the start (after -1) and completes; past its end it completes with nothing', async () => {
    const responses = store();
    const record = startedRecord();
    await responses.create(record);
    await responses.append(record.response.id, events(0, 9), true);
    expect(await follow(responses.events(record.response.id, -1)).done).toEqual(sequences(0, 9));
    expect(await follow(responses.events(record.response.id, 9)).done).toEqual([]);
  });

  it('opens a log with an empty append (a follower waits for the first event) and closes it with the final one', async () => {
    const responses = store();
    const record = startedRecord();
    await responses.create(record);
    expect((await failureOf(firstValue(responses.events(record.response.id, -1)))).kind).toBe('not_found');
    await responses.append(record.response.id, [], false);
    const follower = follow(responses.events(record.response.id, -1));
    await responses.append(record.response.id, events(0, 1), false);
    await responses.append(record.response.id, [event(2)], true);
    expect(await follower.done).toEqual([0, 1, 2]);
  });

  it('gives every follower each event once and in order, whenever it joins', async () => {
    const responses = store();
    const record = startedRecord();
    const id = record.response.id;
    await responses.create(record);
    const followers: { after: number; follower: Follower }[] = [];
    let next = 0;
    for (let batch = 0; batch < 30; batch++) {
      const size = 1 + (batch % 4);
      const appended = responses.append(id, events(next, next + size - 1), batch === 29);
      // Followers join before, during and after appends, from anywhere in the log.
      const after = batch % 3 === 0 ? -1 : next - 2;
      followers.push({ after, follower: follow(responses.events(id, after)) });
      await appended;
      next += size;
    }
    const last = next - 1;
    for (const { after, follower } of followers) expect(await follower.done).toEqual(sequences(after + 1, last));
  });

  it('keeps a large batch whole and in order (a writer catching up after a stall)', async () => {
    const responses = store();
    const record = startedRecord();
    await responses.create(record);
    await responses.append(record.response.id, events(0, 4_999), true);
    expect(await follow(responses.events(record.response.id, -1)).done).toEqual(sequences(0, 4_999));
  });

  it('errors with not_found when there is no log for the id', async () => {
    const responses = store();
    const error = await failureOf(firstValue(responses.events(newId('resp'), -1)));
    expect(error.kind).toBe('not_found');
  });

  it('drops the oldest events past maxEventsPerResponse and refuses a replay that needs them (starting_after)', async () => {
    const responses = store({ maxEventsPerResponse: 16 });
    const record = startedRecord();
    const id = record.response.id;
    await responses.create(record);
    await responses.append(id, events(0, 29), false);
    await responses.append(id, events(30, 39), true);
    const dropped = await failureOf(firstValue(responses.events(id, 10)));
    expect(dropped.kind).toBe('invalid_request');
    expect(dropped.param).toBe('starting_after');
    expect((await failureOf(firstValue(responses.events(id, -1)))).kind).toBe('invalid_request');
    expect(await follow(responses.events(id, 23)).done).toEqual(sequences(24, 39));
  });

  it('refuses an append that leaves a gap or adds to a closed log, and keeps once the events of a batch sent again', async () => {
    const responses = store();
    const record = startedRecord();
    const id = record.response.id;
    await responses.create(record);
    await expect(responses.append(id, [event(1)], false)).rejects.toThrow(/sequence/);
    await responses.append(id, events(0, 2), false);
    // Sent again after a timeout that had run anyway: what the log holds is skipped, the rest kept.
    await responses.append(id, events(0, 2), false);
    await responses.append(id, events(1, 4), false);
    await expect(responses.append(id, [event(5), event(7)], false)).rejects.toThrow(/sequence/);
    await expect(responses.append(id, [event(6)], false)).rejects.toThrow(/sequence/);
    await responses.append(id, [event(5)], true);
    await responses.append(id, [event(5)], true);
    await expect(responses.append(id, [event(6)], false)).rejects.toThrow(/closed|final/);
    expect(await follow(responses.events(id, -1)).done).toEqual(sequences(0, 5));
  });

  it('keeps no events for a response it does not keep (never created, or deleted)', async () => {
    const responses = store();
    const id = newId('resp');
    await responses.append(id, events(0, 1), false);
    expect((await failureOf(firstValue(responses.events(id, -1)))).kind).toBe('not_found');
  });

  it('ends a follower with not_found when its response is deleted', async () => {
    const responses = store();
    const record = startedRecord();
    await responses.create(record);
    await responses.append(record.response.id, events(0, 0), false);
    const follower = follow(responses.events(record.response.id, -1));
    expect(await eventually(() => follower.seen.length === 1)).toBe(true);
    await responses.delete(record.response.id);
    expect((await failureOf(follower.done)).kind).toBe('not_found');
  });

  it('tells cancel listeners once, whether the cancel came before or after they listened', async () => {
    const responses = store();
    const record = startedRecord();
    const id = record.response.id;
    await responses.create(record);
    let early = 0;
    let earlyDone = false;
    const listening = responses
      .cancelRequests(id)
      .subscribe({ next: () => early++, complete: () => (earlyDone = true) });
    await responses.requestCancel(id);
    expect(await eventually(() => earlyDone)).toBe(true);
    expect(early).toBe(1);
    listening.unsubscribe();

    let late = 0;
    let lateDone = false;
    responses.cancelRequests(id).subscribe({ next: () => late++, complete: () => (lateDone = true) });
    expect(await eventually(() => lateDone)).toBe(true);
    expect(late).toBe(1);
    await responses.requestCancel(newId('resp'));
  });
}

export function firstValue<T>(source: Observable<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const subscription = source.subscribe({
      next: (value) => {
        resolve(value);
        queueMicrotask(() => subscription.unsubscribe());
      },
      error: reject,
      complete: () => reject(new Error('completed without a value')),
    });
  });
}
