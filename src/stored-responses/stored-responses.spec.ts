import { firstValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ResponsesRequestDto } from '../protocols/openai-responses/responses-request.dto.js';
import { MemoryResponseStore } from './memory-response-store.js';
import { ResponseScope } from './response-scope.js';
import type { ResponseObject } from './response-store.js';
import { StoredResponses } from './stored-responses.js';

const NO_METRICS = { responseStoreErrors: { inc: () => undefined } } as never;
const request = (fields: Record<string, unknown>) =>
  ({ model: 'stub', input: 'hi', ...fields }) as unknown as ResponsesRequestDto;
const answer = (id: string): ResponseObject => ({
  id,
  object: 'response',
  status: 'completed',
  created_at: Math.floor(Date.now() / 1000),
  completed_at: Math.floor(Date.now() / 1000),
  output: [
    { id: `msg_${id}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `answer ${id}` }] },
  ],
});

describe('StoredResponses', () => {
  afterEach(() => vi.useRealTimers());

  it('writes again the responses of a conversation being continued, so that it outlives the TTL of its first turn', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const store = new MemoryResponseStore({ ttlSeconds: 100, now: () => Date.now() });
    const stored = new StoredResponses(store, NO_METRICS, undefined, { ttlSeconds: 100 });
    await stored.keep(await stored.prepare(request({})), answer('resp_first'));

    vi.advanceTimersByTime(60_000);
    const second = await stored.prepare(request({ previous_response_id: 'resp_first' }));
    await stored.keep(second, answer('resp_second'));
    // 120 s after the first turn was written: alive, because continuing it at 60 s wrote it again.
    vi.advanceTimersByTime(60_000);
    const third = await stored.prepare(request({ previous_response_id: 'resp_second', input: 'again' }));
    expect(third.body.input).toHaveLength(5);
    expect((await stored.retrieve(ResponseScope.OPEN, 'resp_first')).response).not.toHaveProperty(
      'gantry_refreshed_at',
    );
    await store.close();
  });

  it('tells a state larger than the store holds (too_large) from a store failure, and counts no store error for it', async () => {
    const store = new MemoryResponseStore({ maxStoredBytes: 1024 * 1024 });
    let storeErrors = 0;
    const stored = new StoredResponses(store, { responseStoreErrors: { inc: () => (storeErrors += 1) } } as never);
    const prepared = await stored.prepare(request({ background: true }));
    await stored.open(prepared, { ...answer('resp_big'), status: 'in_progress', output: [] });
    const huge = {
      ...answer('resp_big'),
      output: [
        {
          id: 'msg_big',
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'x'.repeat(1100 * 1024) }],
        },
      ],
    };
    expect(await stored.update(ResponseScope.OPEN, huge as ResponseObject, false)).toBe('too_large');
    expect(storeErrors).toBe(0);
    expect(await stored.update(ResponseScope.OPEN, answer('resp_big'), false)).toBe('written');
    await store.close();
  });

  it("names only the client's response id in a follower's error, never the store's scoped id", async () => {
    const store = new MemoryResponseStore();
    const stored = new StoredResponses(store, NO_METRICS);
    const scope = ResponseScope.ofKey('key-a');
    const prepared = await stored.prepare(request({ background: true }), scope);
    await stored.open(prepared, { ...answer('resp_followed'), status: 'in_progress', output: [] });
    await stored.append(scope, 'resp_followed', [], false);
    const frames = firstValueFrom(stored.follow(scope, 'resp_followed', -1).pipe(toArray()));
    // Gone while followed (deleted, expired, let go).
    await store.delete(scope.id('resp_followed'));
    const [error] = await frames;
    expect(error).toMatchObject({ event: 'error', data: expect.stringContaining("'resp_followed'") });
    expect(JSON.stringify(error)).not.toContain('key-a');
    await store.close();
  });

  it('keeps each API key to its own responses', async () => {
    const store = new MemoryResponseStore();
    const stored = new StoredResponses(store, NO_METRICS);
    const [a, b] = [ResponseScope.ofKey('key-a'), ResponseScope.ofKey('key-b')];
    await stored.keep(await stored.prepare(request({}), a), answer('resp_shared_id'));
    expect((await stored.retrieve(a, 'resp_shared_id')).response.id).toBe('resp_shared_id');
    await expect(stored.retrieve(b, 'resp_shared_id')).rejects.toMatchObject({ kind: 'not_found' });
    await expect(
      stored.prepare(request({ input: [{ type: 'item_reference', id: 'msg_resp_shared_id' }] }), b),
    ).rejects.toMatchObject({ kind: 'invalid_request' });
    await store.close();
  });
});
