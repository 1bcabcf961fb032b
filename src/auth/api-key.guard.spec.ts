import { type ExecutionContext, Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../config/config-loader.js';
import { ModelRegistry } from '../models/model-registry.js';
import { GantryMetrics } from '../observability/metrics/gantry-metrics.js';
import { ApiKeyGuard, presentedKey } from './api-key.guard.js';
import { ApiKeyRing } from './api-key-ring.js';
import { Callers } from './callers.js';
import { KeyLimiter } from './key-limiter.js';
import { LimitStore, type LimitStoreOperation, type Reservation, type WindowCount } from './limit-store.js';
import { MemoryLimitStore } from './memory-limit-store.js';

/** A fake raw response: an emitter with the `destroyed` flag the limiter reads. */
class FakeResponse extends EventEmitter {
  destroyed = false;
}

function contextFor(url: string, headers: Record<string, string>, response = new FakeResponse()): ExecutionContext {
  const http = { getRequest: () => ({ url, headers }), getResponse: () => ({ raw: response }) };
  return { switchToHttp: () => http } as unknown as ExecutionContext;
}

function metricsWithoutModels(): GantryMetrics {
  return new GantryMetrics(new ModelRegistry([]));
}

function guardFor(
  auth: Record<string, unknown>,
  store: LimitStore = new MemoryLimitStore(),
  metrics = metricsWithoutModels(),
): ApiKeyGuard {
  const config = parseConfig({ auth });
  return new ApiKeyGuard(config, ApiKeyRing.fromConfig(config.auth), new KeyLimiter(store, metrics), new Callers());
}

/** A store that is down: every call fails, and is counted. */
class FailingStore extends LimitStore {
  readonly calls: string[] = [];
  async hit(): Promise<WindowCount> {
    this.calls.push('hit');
    throw new Error('Redis did not answer within 200 ms');
  }
  async acquire(): Promise<string | undefined> {
    this.calls.push('acquire');
    throw new Error('Redis did not answer within 200 ms');
  }
  async release(): Promise<void> {
    this.calls.push('release');
    throw new Error('Redis did not answer within 200 ms');
  }
  async reserve(): Promise<Reservation> {
    this.calls.push('reserve');
    throw new Error('Redis did not answer within 200 ms');
  }
  async settle(): Promise<void> {
    this.calls.push('settle');
    throw new Error('Redis did not answer within 200 ms');
  }
  async close(): Promise<void> {}
  /** A failure of its own, in the background. */
  failInBackground(operation: LimitStoreOperation): void {
    this.reportFailure(operation, new Error('connect ECONNREFUSED 127.0.0.1:6399'));
  }
}

/** The guard's verdict as a promise, whether it came synchronously or not. */
function activate(guard: ApiKeyGuard, context: ExecutionContext): Promise<boolean> {
  return Promise.resolve().then(() => guard.canActivate(context));
}

/** The verdict on a generation (the generation routes call `check`, which holds a stream slot). */
function generate(guard: ApiKeyGuard, context: ExecutionContext): Promise<boolean> {
  const http = context.switchToHttp();
  return Promise.resolve().then(() => guard.check(http.getRequest(), http.getResponse()));
}

async function refusal(guard: ApiKeyGuard, context: ExecutionContext, verdict = activate): Promise<unknown> {
  return verdict(guard, context).then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('ApiKeyRing', () => {
  it('identifies an accepted key by a stable id that does not contain it', () => {
    const ring = new ApiKeyRing(['sk-alpha', 'sk-beta']);
    const id = ring.identify('sk-beta');
    expect(id).toMatch(/^key-[0-9a-f]{16}$/);
    expect(id).toBe(new ApiKeyRing(['sk-beta']).identify('sk-beta'));
    expect(id).not.toContain('beta');
    expect(ring.identify('sk-alpha')).not.toBe(id);
    expect(ring.identify('sk-gamma')).toBeUndefined();
    expect(ring.identify('')).toBeUndefined();
    expect(ring.identify('sk-beta ')).toBeUndefined();
    expect(new ApiKeyRing([]).isOpen).toBe(true);
  });
});

describe('presentedKey', () => {
  it('reads a Bearer token first, then x-api-key', () => {
    expect(presentedKey({ authorization: 'Bearer sk-1' })).toBe('sk-1');
    expect(presentedKey({ authorization: 'bearer   sk-1 ' })).toBe('sk-1');
    expect(presentedKey({ 'x-api-key': 'sk-2' })).toBe('sk-2');
    expect(presentedKey({ authorization: 'Basic abc', 'x-api-key': 'sk-2' })).toBe('sk-2');
    expect(presentedKey({ authorization: 'Bearer sk-1', 'x-api-key': 'sk-2' })).toBe('sk-1');
    expect(presentedKey({ authorization: 'Bearer' })).toBeUndefined();
    expect(presentedKey({})).toBeUndefined();
  });
});

describe('ApiKeyGuard', () => {
  it('lets everything through when no keys are configured', async () => {
    await expect(activate(guardFor({}), contextFor('/v1/chat/completions', {}))).resolves.toBe(true);
  });

  it('refuses a missing or wrong key with an authentication error, and accepts a right one', async () => {
    const guard = guardFor({ apiKeys: ['sk-right'] });
    expect(await refusal(guard, contextFor('/v1/messages', {}))).toMatchObject({
      kind: 'authentication',
      code: 'missing_api_key',
    });
    const wrong = await refusal(guard, contextFor('/v1/messages', { 'x-api-key': 'sk-wrong' }));
    expect(wrong).toMatchObject({ kind: 'authentication', code: 'invalid_api_key' });
    expect((wrong as Error).message).not.toContain('sk-wrong');
    await expect(activate(guard, contextFor('/v1/messages', { 'x-api-key': 'sk-right' }))).resolves.toBe(true);
    await expect(activate(guard, contextFor('/v1/responses', { authorization: 'Bearer sk-right' }))).resolves.toBe(
      true,
    );
  });

  it('leaves probes and /metrics open unless protectHealth / protectMetrics say otherwise', async () => {
    const open = guardFor({ apiKeys: ['k'] });
    for (const url of ['/health', '/ready', '/metrics', '/health?verbose=1']) {
      await expect(activate(open, contextFor(url, {}))).resolves.toBe(true);
    }
    const closed = guardFor({ apiKeys: ['k'], protectHealth: true, protectMetrics: true });
    for (const url of ['/health', '/ready', '/metrics']) {
      expect(await refusal(closed, contextFor(url, {}))).toMatchObject({ kind: 'authentication' });
    }
  });

  it('limits requests per minute per key, with Retry-After', async () => {
    const guard = guardFor({ apiKeys: ['a', 'b'], limits: { requestsPerMinute: 2 } });
    await activate(guard, contextFor('/v1/responses', { 'x-api-key': 'a' }));
    await activate(guard, contextFor('/v1/responses', { 'x-api-key': 'a' }));
    const third = await refusal(guard, contextFor('/v1/responses', { 'x-api-key': 'a' }));
    expect(third).toMatchObject({ kind: 'rate_limited', code: 'rate_limit_exceeded' });
    expect((third as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThanOrEqual(59);
    await expect(activate(guard, contextFor('/v1/responses', { 'x-api-key': 'b' }))).resolves.toBe(true);
  });

  it('holds a concurrent slot for a generation until the response closes; Nest’s routes hold none', async () => {
    const guard = guardFor({ apiKeys: ['a'], limits: { concurrentStreams: 1 } });
    const first = new FakeResponse();
    await generate(guard, contextFor('/v1/messages', { 'x-api-key': 'a' }, first));
    expect(await refusal(guard, contextFor('/v1/messages', { 'x-api-key': 'a' }), generate)).toMatchObject({
      kind: 'rate_limited',
      code: 'concurrency_limit_exceeded',
      retryAfterSeconds: 1,
    });
    for (const url of [
      '/v1/messages/count_tokens',
      '/v1/responses/input_tokens',
      '/v1/models',
      '/v1/responses/resp_1',
    ]) {
      await expect(activate(guard, contextFor(url, { 'x-api-key': 'a' }))).resolves.toBe(true);
    }
    first.emit('close');
    await new Promise((resolve) => setImmediate(resolve));
    await expect(generate(guard, contextFor('/v1/messages', { 'x-api-key': 'a' }))).resolves.toBe(true);
  });

  describe('when the limit store fails', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('lets the request through after one failed call, counts every failure by operation, and warns once per interval', async () => {
      const warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const store = new FailingStore();
      const metrics = metricsWithoutModels();
      const guard = guardFor(
        { apiKeys: ['a'], limits: { requestsPerMinute: 1, concurrentStreams: 1 } },
        store,
        metrics,
      );
      for (let index = 0; index < 5; index += 1) {
        await expect(generate(guard, contextFor('/v1/messages', { 'x-api-key': 'a' }))).resolves.toBe(true);
      }
      // The window failed, so no slot was asked for: one wait per request at most.
      expect(store.calls).toEqual(['hit', 'hit', 'hit', 'hit', 'hit']);
      store.failInBackground('connection');
      store.failInBackground('renew');
      const text = await metrics.registry.metrics();
      expect(text).toContain('gantry_limit_store_errors_total{operation="hit"} 5');
      expect(text).toContain('gantry_limit_store_errors_total{operation="connection"} 1');
      expect(text).toContain('gantry_limit_store_errors_total{operation="renew"} 1');
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0][0])).toMatch(
        /^The limit store failed \(hit: Redis did not answer within 200 ms\); requests are let through/,
      );
    });

    it('leaves token budgets to the reservation: a generation asks the store nothing of them', async () => {
      const store = new FailingStore();
      const guard = guardFor({ apiKeys: ['a'], limits: { tokensPerMinute: 10 } }, store);
      await expect(generate(guard, contextFor('/v1/messages', { 'x-api-key': 'a' }))).resolves.toBe(true);
      expect(store.calls).toEqual([]);
    });

    it('lets the request through without a slot when only the acquire fails', async () => {
      vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const store = new FailingStore();
      const guard = guardFor({ apiKeys: ['a'], limits: { concurrentStreams: 1 } }, store);
      const response = new FakeResponse();
      await expect(generate(guard, contextFor('/v1/messages', { 'x-api-key': 'a' }, response))).resolves.toBe(true);
      response.emit('close');
      await new Promise((resolve) => setImmediate(resolve));
      expect(store.calls).toEqual(['acquire']);
    });
  });
});
