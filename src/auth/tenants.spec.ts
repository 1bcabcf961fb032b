import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/config-loader.js';
import type { ModelRegistry } from '../models/model-registry.js';
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
    new KeyLimiter(new MemoryLimitStore(), new GantryMetrics({ list: () => [] } as unknown as ModelRegistry)),
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
    new KeyLimiter(store, new GantryMetrics({ list: () => [] } as unknown as ModelRegistry));
  const response = () => Object.assign(new EventEmitter(), { destroyed: false }) as never;
  const refusalOf = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    );

  it('admits while a budget has tokens left, charges them when known, and refuses with Retry-After once spent', async () => {
    const config = parseConfig({
      auth: { apiKeys: [{ name: 'team', key: 'sk-1', limits: { tokensPerMinute: 100, tokensPerDay: 1000 } }] },
    });
    const caller = ApiKeyRing.fromConfig(config.auth).callerOf('sk-1')!;
    const store = new MemoryLimitStore();
    const limiter = limiterWith(store);
    await limiter.admit(caller, response());
    limiter.charge(caller, 99);
    // Under the limit: admitted (a request's own tokens are known only at its end).
    await limiter.admit(caller, response());
    limiter.charge(caller, 51);
    await new Promise((resolve) => setImmediate(resolve));
    const refused = await refusalOf(limiter.admit(caller, response()));
    expect(refused).toMatchObject({
      kind: 'rate_limited',
      code: 'token_limit_exceeded',
      message: "The tenant 'team' has used its 100 tokens per minute; budget returns when the window closes.",
    });
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThanOrEqual(59);
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(await store.peek(['tpm:tenant:team', 'tpd:tenant:team'])).toMatchObject([{ count: 150 }, { count: 150 }]);
  });

  it('names the day budget and waits for its window when that is the one spent', async () => {
    const config = parseConfig({
      auth: { apiKeys: ['sk-plain'], limits: { tokensPerMinute: 1000, tokensPerDay: 10 } },
    });
    const caller = ApiKeyRing.fromConfig(config.auth).callerOf('sk-plain')!;
    const limiter = limiterWith();
    limiter.charge(caller, 10);
    await new Promise((resolve) => setImmediate(resolve));
    const refused = await refusalOf(limiter.admit(caller, response()));
    expect(refused).toMatchObject({
      code: 'token_limit_exceeded',
      message: 'This API key has used its 10 tokens per day; budget returns when the window closes.',
    });
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(86_000);
  });
});
