import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../test/support/gateway.js';
import { MemoryResponseStore, type MemoryResponseStoreOptions } from './memory-response-store.js';
import type { ResponseStore } from './response-store.js';
import {
  event,
  failureOf,
  finishedRecord,
  firstValue,
  follow,
  message,
  newId,
  responseObject,
  responseStoreContract,
  startedRecord,
} from '../../test/support/response-store-contract.js';

const stores: ResponseStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
});

describe('MemoryResponseStore', () => {
  responseStoreContract((options) => new MemoryResponseStore(options));

  /** A memory store on a clock the test moves. */
  function clockedStore(options: MemoryResponseStoreOptions = {}) {
    let now = 1_000_000;
    const responses = new MemoryResponseStore({ ...options, now: () => now });
    stores.push(responses);
    return { responses, advance: (ms: number) => (now += ms) };
  }

  it('forgets everything ttlSeconds after its last write, without waiting for a timer', async () => {
    const { responses, advance } = clockedStore({ ttlSeconds: 60 });
    const quiet = startedRecord();
    const busy = startedRecord();
    await responses.create(quiet);
    await responses.create(busy);
    await responses.append(busy.response.id, [event(0)], false);
    advance(59_000);
    await responses.append(busy.response.id, [event(1)], false);
    advance(2_000);
    expect(await responses.get(quiet.response.id)).toBeUndefined();
    expect((await responses.items(quiet.inputItems.map((item) => item.id))).size).toBe(0);
    expect(await responses.get(busy.response.id)).toEqual(busy);
    expect((await responses.items([busy.inputItems[0]!.id])).size).toBe(1);
    const follower = follow(responses.events(busy.response.id, 0));
    expect(await eventually(() => follower.seen.length === 1)).toBe(true);
    advance(57_000);
    expect(responses.sweep()).toBe(0);
    advance(2_000);
    expect(await responses.get(busy.response.id)).toBeUndefined();
    expect((await failureOf(follower.done)).kind).toBe('not_found');
    expect((await failureOf(firstValue(responses.events(busy.response.id, -1)))).kind).toBe('not_found');
    expect(responses.size).toBe(0);
    expect(responses.bytes).toBe(0);
  });

  it('sweeps expired responses in the background too (the sweep frees their memory)', async () => {
    const { responses, advance } = clockedStore({ ttlSeconds: 1 });
    for (let index = 0; index < 5; index++) await responses.create(startedRecord());
    expect(responses.size).toBe(5);
    advance(1_001);
    expect(responses.sweep()).toBe(5);
    expect(responses.size).toBe(0);
  });

  it('keeps at most maxStoredResponses, letting the least recently written go first', async () => {
    const { responses } = clockedStore({ maxStoredResponses: 3 });
    const [a, b, c, d] = [finishedRecord(), finishedRecord(), finishedRecord(), finishedRecord()];
    await responses.create(a);
    await responses.create(b);
    await responses.create(c);
    await responses.update(responseObject(a.response.id, 'completed'));
    await responses.create(d);
    expect(responses.size).toBe(3);
    expect(await responses.get(b.response.id)).toBeUndefined();
    expect((await responses.items([b.inputItems[0]!.id])).size).toBe(0);
    for (const kept of [a, c, d]) expect(await responses.get(kept.response.id)).toBeDefined();
  });

  it('keeps at most maxStoredBytes of JSON (responses, items and events), letting the least recently written go first', async () => {
    const { responses } = clockedStore({ maxStoredBytes: 1024 * 1024 });
    const big = (text: string) => {
      const record = finishedRecord();
      record.inputItems = [message('user', text.repeat(300 * 1024))];
      return record;
    };
    const [a, b, c] = [big('a'), big('b'), big('c')];
    await responses.create(a);
    await responses.create(b);
    await responses.create(c);
    expect(responses.size).toBe(3);
    expect(responses.bytes).toBeGreaterThan(900 * 1024);
    // Events count too: 200 KB of them on `a` pushes out `b`, the least recently written.
    await responses.append(
      a.response.id,
      Array.from({ length: 100 }, (_, index) => event(index, 'e'.repeat(2_000))),
      false,
    );
    expect(await responses.get(b.response.id)).toBeUndefined();
    expect(await responses.get(a.response.id)).toBeDefined();
    expect(await responses.get(c.response.id)).toBeDefined();
    expect(responses.bytes).toBeLessThanOrEqual(1024 * 1024);
    await responses.delete(a.response.id);
    await responses.delete(c.response.id);
    expect(responses.bytes).toBe(0);
  });

  it('ends the followers of a response it lets go with not_found', async () => {
    const { responses } = clockedStore({ maxStoredResponses: 1 });
    const record = finishedRecord();
    await responses.create(record);
    await responses.append(record.response.id, [], false);
    const follower = follow(responses.events(record.response.id, -1));
    await responses.create(finishedRecord());
    expect((await failureOf(follower.done)).kind).toBe('not_found');
  });

  it('never lets a running response go to make room: a new one that does not fit beside the running ones is refused', async () => {
    const { responses } = clockedStore({ maxStoredResponses: 2 });
    const [running, done] = [startedRecord(), finishedRecord()];
    await responses.create(running);
    await responses.create(done);
    await responses.append(running.response.id, [event(0)], false);
    const follower = follow(responses.events(running.response.id, -1));
    // Room is made from the finished one, however recently written.
    const third = startedRecord();
    await responses.create(third);
    expect(await responses.get(done.response.id)).toBeUndefined();
    expect(await responses.get(running.response.id)).toBeDefined();
    // Both left are running: a new one is refused (503), and neither goes.
    expect(await failureOf(responses.create(finishedRecord()))).toMatchObject({
      kind: 'unavailable',
      code: 'response_store_full',
    });
    expect(responses.size).toBe(2);
    await responses.append(running.response.id, [event(1)], true);
    expect(await follower.done).toEqual([0, 1]);
    // Once it ended, it may go.
    await responses.update(responseObject(running.response.id, 'completed'));
    await responses.create(finishedRecord());
    expect(await responses.get(running.response.id)).toBeUndefined();
  });

  it('refuses a response larger than maxStoredBytes instead of letting everything else go', async () => {
    const { responses } = clockedStore({ maxStoredBytes: 1024 * 1024 });
    const kept = [startedRecord(), finishedRecord()];
    for (const record of kept) await responses.create(record);
    const huge = finishedRecord();
    huge.inputItems = [message('user', 'x'.repeat(1200 * 1024))];
    expect(await failureOf(responses.create(huge))).toMatchObject({
      kind: 'payload_too_large',
      code: 'response_too_large',
    });
    for (const record of kept) expect(await responses.get(record.response.id)).toBeDefined();
    expect(await responses.get(huge.response.id)).toBeUndefined();
    expect((await responses.items([huge.inputItems[0]!.id])).size).toBe(0);
    // An update that makes a kept one that large is refused too: the kept state stays.
    const output = [message('assistant', 'y'.repeat(1200 * 1024))];
    await expect(responses.update(responseObject(kept[0]!.response.id, 'completed', output))).rejects.toMatchObject({
      code: 'response_too_large',
    });
    expect((await responses.get(kept[0]!.response.id))?.response.status).toBe('queued');
  });

  it("makes room fairly: a key writing into a full store lets its own oldest go, not another key's", async () => {
    const { responses } = clockedStore({ maxStoredBytes: 1024 * 1024 });
    const sized = (key: string, kilobytes: number) => {
      const record = finishedRecord(`${key}~${newId('resp')}`);
      record.inputItems = [message('user', 'z'.repeat(kilobytes * 1024))];
      return record;
    };
    // A quiet key's responses, written first (the least recently written of the store)...
    const quiet = [sized('key-quiet', 100), sized('key-quiet', 100)];
    for (const record of quiet) await responses.create(record);
    // ...then a busy key writes far more than the store holds.
    const busy = Array.from({ length: 20 }, () => sized('key-busy', 100));
    for (const record of busy) await responses.create(record);
    for (const record of quiet) expect(await responses.get(record.response.id)).toBeDefined();
    expect(await responses.get(busy[0]!.response.id)).toBeUndefined();
    expect(await responses.get(busy.at(-1)!.response.id)).toBeDefined();
    expect(responses.bytes).toBeLessThanOrEqual(1024 * 1024);
    // The quiet key may take back its share: the biggest holder gives the room.
    const more = [sized('key-quiet', 100), sized('key-quiet', 100)];
    for (const record of more) await responses.create(record);
    for (const record of [...quiet, ...more]) expect(await responses.get(record.response.id)).toBeDefined();
  });

  it("holds shares with running responses: a key over its share in running ones is refused its next, and another key's kept response stays", async () => {
    const { responses } = clockedStore({ maxStoredBytes: 64 * 1024 });
    // Key B keeps one finished response (8 KiB).
    const kept = finishedRecord(`key-b~${newId('resp')}`);
    kept.inputItems = [message('user', 'b'.repeat(8 * 1024))];
    await responses.create(kept);
    // Key A's long background runs, each streaming 20 KiB of events.
    const grow = async (id: string, from: number) => {
      await responses.append(
        id,
        Array.from({ length: 20 }, (_, index) => event(from + index, 'a'.repeat(1000))),
        false,
      );
    };
    const runs = [startedRecord(`key-a~${newId('resp')}`), startedRecord(`key-a~${newId('resp')}`)];
    for (const run of runs) {
      await responses.create(run);
      await grow(run.response.id, 0);
    }
    // A holds more than half the store in running responses: its next run is refused...
    expect(await failureOf(responses.create(startedRecord(`key-a~${newId('resp')}`)))).toMatchObject({
      kind: 'unavailable',
      code: 'response_store_full',
    });
    // ...and its runs keep streaming into a full store at the cost of their own oldest events, not B's.
    for (const run of runs) await grow(run.response.id, 20);
    expect(responses.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(await responses.get(kept.response.id)).toBeDefined();
    // B's own background run is taken.
    await responses.create(startedRecord(`key-b~${newId('resp')}`));
    expect(await responses.get(kept.response.id)).toBeDefined();
  });
});
