import { describe, expect, it } from 'vitest';
import { eventually } from '../../test/support/gateway.js';
import {
  events,
  failureOf,
  follow,
  responseStoreContract,
  sequences,
  startedRecord,
} from '../../test/support/response-store-contract.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { MemoryResponseStoreOptions } from '../stored-responses/memory-response-store.js';
import { InstanceResponses } from './instance-responses.js';
import { IpcChannel, type ChannelMessage } from './ipc-channel.js';
import { serveResponses } from './primary-handlers.js';
import { PrimaryResponseStore } from './primary-response-store.js';

const settle = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

/**
 * A primary's InstanceResponses and `count` workers' stores linked to it by in-memory channels:
 * messages are delivered on a later turn, as copies (JSON), as Node's IPC does.
 */
function instance(count: number, options: MemoryResponseStoreOptions = {}) {
  const responses = new InstanceResponses(options);
  const messages = { toPrimary: 0, toWorkers: 0 };
  const workers = Array.from({ length: count }, (_, index) => {
    const id = index + 1;
    let workerSide: IpcChannel | undefined;
    const copied = (message: ChannelMessage): ChannelMessage => JSON.parse(JSON.stringify(message));
    const primarySide = new IpcChannel((message) => {
      messages.toWorkers += 1;
      setImmediate(() => workerSide!.receive(copied(message)));
    });
    workerSide = new IpcChannel((message) => {
      messages.toPrimary += 1;
      setImmediate(() => primarySide.receive(copied(message)));
    });
    serveResponses(primarySide, id, responses);
    return { id, store: new PrimaryResponseStore(workerSide), link: workerSide };
  });
  return { responses, workers, messages };
}

describe("a worker's response store, kept by the primary (PrimaryResponseStore over IPC, InstanceResponses)", () => {
  responseStoreContract((options) => instance(1, options).workers[0]!.store);

  it('is one store for the instance: kept through one worker, followed, cancelled and deleted through another', async () => {
    const { workers } = instance(2);
    const [a, b] = [workers[0]!.store, workers[1]!.store];
    const record = startedRecord();
    const id = record.response.id;
    await a.create(record);
    expect(await b.get(id)).toEqual(record);
    await a.append(id, events(0, 3), false);
    const follower = follow(b.events(id, 1));
    expect(await eventually(() => follower.seen.length === 2)).toBe(true);
    let cancelled = 0;
    a.cancelRequests(id).subscribe(() => (cancelled += 1));
    await b.requestCancel(id);
    expect(await eventually(() => cancelled === 1)).toBe(true);
    await a.append(id, events(4, 5), true);
    expect(await follower.done).toEqual(sequences(2, 5));
    expect(await b.delete(id)).toBe(true);
    expect(await a.get(id)).toBeUndefined();
  });

  it("sends the events of one append in one message, and ends a dead worker's followers and listeners in the primary at once", async () => {
    const { responses, workers, messages } = instance(2);
    const [writer, reader] = [workers[0]!.store, workers[1]!.store];
    const record = startedRecord();
    const id = record.response.id;
    await writer.create(record);
    await writer.append(id, [], false);
    const follower = follow(reader.events(id, -1));
    reader.cancelRequests(id).subscribe();
    // The follow and the listen reached the primary.
    await settle();
    const before = messages.toWorkers;
    await writer.append(id, events(0, 99), false);
    expect(await eventually(() => follower.seen.length === 100)).toBe(true);
    // The append's reply and one message with its hundred events.
    expect(messages.toWorkers - before).toBe(2);
    expect(responses.releaseWorker(workers[1]!.id)).toBe(2);
    expect(responses.releaseWorker(workers[1]!.id)).toBe(0);
  });

  it('fails calls and followers as an unreachable store (a 503) once the primary is gone', async () => {
    const { workers } = instance(1);
    const { store, link } = workers[0]!;
    const record = startedRecord();
    await store.create(record);
    await store.append(record.response.id, [], false);
    const follower = follow(store.events(record.response.id, -1));
    const failures: string[] = [];
    store.onFailure((operation) => failures.push(operation));
    await settle();
    link.close();
    store.primaryGone();
    for (const failure of [await failureOf(follower.done), await failureOf(store.get(record.response.id))]) {
      expect(failure).toBeInstanceOf(GatewayError);
      expect(failure).toMatchObject({ kind: 'unavailable', code: 'response_store_unavailable' });
    }
    expect(failures).toEqual(['connection']);
  });
});
