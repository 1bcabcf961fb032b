import { describe, expect, it } from 'vitest';
import {
  BLOCK_TOKENS,
  MockPrefixCache,
  planPrefill,
  PrefillLane,
  renderPrompt,
  tokensOf,
} from './mock-prefix-cache.js';

const SYSTEM = 'Rules of the house. '.repeat(40);
const body = (model: string, ...turns: string[]) => ({
  model,
  messages: [
    { role: 'system', content: SYSTEM },
    ...turns.map((content, index) => ({ role: index % 2 === 0 ? 'user' : 'assistant', content })),
  ],
});
const wholeBlocks = (tokens: number) => Math.floor(tokens / BLOCK_TOKENS) * BLOCK_TOKENS;
const served = (cache: MockPrefixCache, request: ReturnType<typeof body>, capacity = 100_000) => {
  const lookup = cache.lookup(request, capacity);
  lookup.store();
  return lookup;
};

describe('the mock prefix cache', () => {
  it('finds what an earlier request of the same model left, in whole blocks only', () => {
    const cache = new MockPrefixCache();
    const first = served(cache, body('m', 'Hello there, a question.'));
    expect(first).toMatchObject({
      cachedTokens: 0,
      promptTokens: tokensOf(renderPrompt(body('m', 'Hello there, a question.'))),
    });
    const second = served(cache, body('m', 'Hello there, a question.', 'An answer.', 'A follow-up.'));
    expect(second.cachedTokens).toBe(wholeBlocks(first.promptTokens));
    // The same prompt again: all its whole blocks (a part-filled last block is computed again, as in vLLM).
    expect(served(cache, body('m', 'Hello there, a question.')).cachedTokens).toBe(wholeBlocks(first.promptTokens));
    // Another model shares nothing; another first turn shares the system prompt's blocks only.
    expect(served(cache, body('other', 'Hello there, a question.')).cachedTokens).toBe(0);
    const sibling = served(cache, body('m', 'A different question.'));
    expect(sibling.cachedTokens).toBeGreaterThan(0);
    expect(sibling.cachedTokens).toBeLessThanOrEqual(tokensOf(`<|system|>${SYSTEM}<|end|>`));
    expect(cache.hits).toBeLessThan(cache.queries);
  });

  it('keeps at most its capacity, evicting the least recently used blocks', () => {
    const cache = new MockPrefixCache();
    const capacity = 16 * BLOCK_TOKENS;
    // Each is '<|user|>' + 640 characters + '<|end|>': 10 whole blocks of 64 characters.
    const plain = (letter: string) => ({ model: 'm', messages: [{ role: 'user', content: letter.repeat(640) }] });
    served(cache, plain('a'), capacity);
    served(cache, plain('b'), capacity);
    // 20 blocks for room for 16: the oldest four (the start of 'a') went, and a prefix is found from its first block.
    expect(cache.lookup(plain('a'), capacity).cachedTokens).toBe(0);
    expect(cache.lookup(plain('b'), capacity).cachedTokens).toBe(10 * BLOCK_TOKENS);
  });

  it('plans a prefill that costs only the tokens not cached, and keeps the blocks only once prefilled', () => {
    const cache = new MockPrefixCache();
    const behaviour = { prefillMs: 5, prefillPerTokenMs: 0.5, prefixCacheTokens: 100_000 };
    const request = body('m', 'Hello there, a question.');
    const cold = planPrefill(request, behaviour, cache)!;
    // Each plan here gets a fresh prefill lane (planPrefill's default), so nothing queues before it.
    expect(cold.prefillMs).toBeCloseTo(5 + 0.5 * cold.promptTokens, 6);
    // Not prefilled (the client hung up): nothing was kept.
    expect(planPrefill(request, behaviour, cache)!.cachedTokens).toBe(0);
    planPrefill(request, behaviour, cache)!.prefilled();
    const warm = planPrefill(request, behaviour, cache)!;
    expect(warm.cachedTokens).toBe(wholeBlocks(warm.promptTokens));
    expect(warm.prefillMs).toBeCloseTo(5 + 0.5 * (warm.promptTokens - wholeBlocks(warm.promptTokens)), 6);
    // Without a cache every token costs; with neither key the mock behaves as before.
    const uncached = planPrefill(request, { ...behaviour, prefixCacheTokens: 0 }, cache)!;
    expect(uncached.cachedTokens).toBeUndefined();
    expect(uncached.prefillMs).toBeCloseTo(5 + 0.5 * cold.promptTokens, 6);
    expect(planPrefill(request, { prefillMs: 5, prefillPerTokenMs: 0, prefixCacheTokens: 0 }, cache)).toBeUndefined();
  });

  it('computes one prefill at a time: concurrent ones queue behind each other', () => {
    const lane = new PrefillLane();
    expect(lane.reserve(30, 1000)).toBe(30);
    // Arrives while the first computes: starts at 1030, done at 1050.
    expect(lane.reserve(20, 1010)).toBe(40);
    expect(lane.reserve(5, 2000)).toBe(5);
  });
});
