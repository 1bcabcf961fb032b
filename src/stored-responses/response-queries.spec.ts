import { describe, expect, it } from 'vitest';
import { inputItemsPage, startingAfter } from './response-queries.js';

const items = ['a', 'b', 'c'].map((id) => ({ id, type: 'message' }));

describe('inputItemsPage', () => {
  it('lists newest first by default, 20 at most, and pages with after', () => {
    expect(inputItemsPage(items, {})).toMatchObject({ object: 'list', first_id: 'c', last_id: 'a', has_more: false });
    expect(inputItemsPage(items, { limit: '2', order: 'asc' })).toMatchObject({
      data: [{ id: 'a' }, { id: 'b' }],
      has_more: true,
    });
    expect(inputItemsPage(items, { limit: '2', order: 'asc', after: 'b' })).toMatchObject({
      data: [{ id: 'c' }],
      has_more: false,
    });
  });

  it('refuses a bad limit, order or after with a 400 naming it', () => {
    expect(() => inputItemsPage(items, { limit: '0' })).toThrow(
      expect.objectContaining({ kind: 'invalid_request', param: 'limit' }),
    );
    expect(() => inputItemsPage(items, { order: 'up' })).toThrow(expect.objectContaining({ param: 'order' }));
    expect(() => inputItemsPage(items, { after: 'z' })).toThrow(expect.objectContaining({ param: 'after' }));
  });
});

describe('startingAfter', () => {
  it('reads a sequence number, -1 when absent, and refuses anything else', () => {
    expect(startingAfter(undefined)).toBe(-1);
    expect(startingAfter('7')).toBe(7);
    expect(() => startingAfter('x')).toThrow(expect.objectContaining({ param: 'starting_after' }));
    expect(() => startingAfter('1.5')).toThrow(expect.objectContaining({ param: 'starting_after' }));
    // Past 2^53 a number names no one sequence (and Redis no stream entry): a 400, not a store failure.
    for (const past of ['9007199254740992', '9007199254740993', '1e21', '-2']) {
      expect(() => startingAfter(past), past).toThrow(
        expect.objectContaining({ kind: 'invalid_request', param: 'starting_after' }),
      );
    }
    expect(startingAfter(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
  });
});
