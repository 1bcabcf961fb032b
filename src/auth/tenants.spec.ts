import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/config-loader.js';
import { ModelRegistry } from '../models/model-registry.js';
import { GantryMetrics } from '../observability/metrics/gantry-metrics.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeyRing } from './api-key-ring.js';
import { Callers } from './callers.js';
import { KeyLimiter } from './key-limiter.js';
import { MemoryLimitStore } from './memory-limit-store.js';
import { Tenant } from './tenant.js';

const AUTH = {
  apiKeys: [
    'sk-plain-1',
    'sk-plain-2',
    {
      name: 'team-a',
      key: 'sk-a',
      weight: 3,
      priority: 2,
      models: ['llama-*', 'qwen?'],
      limits: { requestsPerMinute: 2 },
    },
    { name: 'team-b', key: 'sk-b', limits: { concurrentStreams: 5 } },
  ],
  limits: { requestsPerMinute: 1, concurrentStreams: 1, tokensPerDay: 500 },
};

function guarded() {
  const config = parseConfig({ auth: AUTH });
  const ring = ApiKeyRing.fromConfig(config.auth);
  const callers = new Callers();
  const guard = new ApiKeyGuard(
    config,
    ring,
    new KeyLimiter(new MemoryLimitStore(), new GantryMetrics(new ModelRegistry([]))),
    callers,
  );
  const ask = (key: string) => {
    const request = { url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` } };
    const response = Object.assign(new EventEmitter(), { destroyed: false });
    return Promise.resolve()
      .then(() => guard.check(request as never, { raw: response } as never))
      .then(
        () => {
          // The answer left: its concurrent slot goes back.
          response.emit('close');
          return callers.of(request);
        },
        (error: unknown) => error as Error,
      );
  };
  return { ring, ask };
}

describe('tenants of named keys', () => {
  it('identifies each key with its tenant: named keys their own, keys without a name the tenant default', () => {
    const { ring } = guarded();
    const plain = ring.callerOf('sk-plain-1')!;
    const teamA = ring.callerOf('sk-a')!;
    expect(plain.tenant).toMatchObject({ name: 'default', weight: 1, priority: 0 });
    expect(ring.callerOf('sk-plain-2')!.tenant).toBe(plain.tenant);
    expect(teamA.tenant).toMatchObject({ name: 'team-a', weight: 3, priority: 2 });
    // Limits count per key without a name, per tenant for a named key.
    expect(plain.limitKey).toBe(plain.keyId);
    expect(ring.callerOf('sk-plain-2')!.limitKey).not.toBe(plain.limitKey);
    expect(teamA.limitKey).toBe('tenant:team-a');
    expect(ring.identify('sk-a')).toBe(teamA.keyId);
  });

  it("takes a named key's limits field by field over auth.limits", () => {
    const { ring } = guarded();
    expect(ring.callerOf('sk-plain-1')!.tenant.limits).toEqual({
      requestsPerMinute: 1,
      concurrentStreams: 1,
      tokensPerDay: 500,
    });
    expect(ring.callerOf('sk-a')!.tenant.limits).toEqual({
      requestsPerMinute: 2,
      concurrentStreams: 1,
      tokensPerDay: 500,
    });
    expect(ring.callerOf('sk-b')!.tenant.limits).toEqual({
      requestsPerMinute: 1,
      concurrentStreams: 5,
      tokensPerDay: 500,
    });
    expect(new Tenant('x').limits).toBeUndefined();
  });

  it('lets a tenant with `models` use only those names and globs', () => {
    const { ring } = guarded();
    const teamA = ring.callerOf('sk-a')!.tenant;
    expect(['llama-3.1-8b', 'llama-', 'qwen2'].map((model) => teamA.canUse(model))).toEqual([true, true, true]);
    expect(['stub', 'qwen', 'qwen25', 'my-llama-3', 'llamax'].map((model) => teamA.canUse(model))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(new Tenant('dots', 1, 0, undefined, ['a.b']).canUse('axb')).toBe(false);
    expect(ring.callerOf('sk-b')!.tenant.canUse('anything/at-all')).toBe(true);
  });

  it('remembers the caller for the handler and counts a named tenant once for all its keys', async () => {
    const { ask } = guarded();
    expect(await ask('sk-a')).toMatchObject({ tenant: { name: 'team-a' } });
    expect(await ask('sk-a')).toMatchObject({ tenant: { name: 'team-a' } });
    const third = await ask('sk-a');
    expect(third).toMatchObject({
      kind: 'rate_limited',
      code: 'rate_limit_exceeded',
      message: "The tenant 'team-a' is limited to 2 requests per minute.",
    });
    // Keys without a name: each its own window of auth.limits (1 per minute).
    expect(await ask('sk-plain-1')).toMatchObject({ tenant: { name: 'default' } });
    expect(await ask('sk-plain-1')).toMatchObject({ message: 'This API key is limited to 1 requests per minute.' });
    expect(await ask('sk-plain-2')).toMatchObject({ tenant: { name: 'default' } });
  });

  it('swaps its keys and tenants at once on load', () => {
    const { ring } = guarded();
    const config = parseConfig({ auth: { apiKeys: [{ name: 'team-c', key: 'sk-c', weight: 2 }] } });
    ring.load([{ key: 'sk-c', named: config.auth.apiKeys[0] as never }]);
    expect(ring.callerOf('sk-a')).toBeUndefined();
    expect(ring.callerOf('sk-c')!.tenant).toMatchObject({ name: 'team-c', weight: 2, limits: undefined });
  });
});

describe('token budgets', () => {
  const limiterWith = (store = new MemoryLimitStore()) =>
    new KeyLimiter(store, new GantryMetrics(new ModelRegistry([])));
  const refusalOf = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    );

  const budgetOf = (auth: Record<string, unknown>, key: string) =>
    ApiKeyRing.fromConfig(parseConfig({ auth }).auth).callerOf(key)!;
  const flush = () => new Promise((resolve) => setImmediate(resolve));

  it('reserves a request’s worst case, settles it to what was used, and refuses with Retry-After what does not fit', async () => {
    const caller = budgetOf(
      { apiKeys: [{ name: 'team', key: 'sk-1', limits: { tokensPerMinute: 100, tokensPerDay: 1000 } }] },
      'sk-1',
    );
    const limiter = limiterWith();
    const first = await limiter.reserve(caller, { promptTokens: 20, maxTokens: 50 });
    expect(first!.outputTokens).toBe(50);
    // 70 held: a second of 20 + 50 does not fit while the first runs (it would on use alone).
    const refused = await refusalOf(limiter.reserve(caller, { promptTokens: 20, maxTokens: 50 }));
    expect(refused).toMatchObject({
      kind: 'rate_limited',
      code: 'token_limit_exceeded',
      message:
        "The tenant 'team' has not enough left of its 100 tokens per minute for this request's prompt (about 20 tokens) and max_tokens (50); budget returns as the window slides.",
    });
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThanOrEqual(60);
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeLessThanOrEqual(61);
    // Settled to 30 used: 70 left, and it fits.
    first!.settle(30);
    first!.settle(0);
    await flush();
    expect((await limiter.reserve(caller, { promptTokens: 20, maxTokens: 50 }))!.outputTokens).toBe(50);
  });

  it('gives a request without max_tokens what the budget leaves, at most the model’s cap, and refuses one whose prompt does not fit', async () => {
    const caller = budgetOf(
      { apiKeys: ['sk-plain'], limits: { tokensPerMinute: 1000, tokensPerDay: 300 } },
      'sk-plain',
    );
    const limiter = limiterWith();
    expect((await limiter.reserve(caller, { promptTokens: 100, outputCap: 50 }))!.outputTokens).toBe(50);
    expect((await limiter.reserve(caller, { promptTokens: 100 }))!.outputTokens).toBe(50);
    const refused = await refusalOf(limiter.reserve(caller, { promptTokens: 1 }));
    expect(refused).toMatchObject({
      code: 'token_limit_exceeded',
      message: expect.stringContaining('300 tokens per day'),
    });
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(86_000);
    const never = await refusalOf(limiter.reserve(caller, { promptTokens: 10, maxTokens: 400 }));
    expect(never).toMatchObject({
      message:
        "This API key has a budget of 300 tokens per day, less than this request's prompt (about 10 tokens) and max_tokens (400).",
    });
  });
});
