import { describe, expect, it } from 'vitest';
import { parseConfig } from './config-loader.js';
import { applyLiveKeys, canonicalJson, changedPaths, keysNeedingRestart, liveKeysChanged } from './config-changes.js';

describe('configuration changes (a reload)', () => {
  it('compares values whatever their keys order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}',
    );
  });

  it('names the dotted path of each changed leaf, arrays compared whole', () => {
    expect(changedPaths({ a: { b: 1, c: [1, 2] }, d: 'x' }, { a: { b: 2, c: [1, 2] }, d: 'x', e: true })).toEqual([
      'a.b',
      'e',
    ]);
    expect(changedPaths({ list: [1, 2] }, { list: [2, 1] })).toEqual(['list']);
    expect(changedPaths({ a: 1 }, { a: 1 })).toEqual([]);
  });

  it('names the changed keys a running gateway does not apply, never the models, never a value', () => {
    const running = parseConfig({
      auth: { apiKeys: ['sk-old-secret'] },
      responses: { store: 'off' },
      models: [{ name: 'a', engine: 'stub' }],
    });
    const next = parseConfig({
      server: { port: 9001, workers: 2 },
      responses: { store: 'off' },
      keepalive: { intervalMs: 500 },
      auth: { apiKeys: ['sk-new-secret'] },
      models: [{ name: 'b', engine: 'stub', maxConcurrency: 3 }],
    });
    const keys = keysNeedingRestart(running, next);
    expect(keys).toEqual(['keepalive.intervalMs', 'server.port', 'server.workers']);
    expect([...keys, ...liveKeysChanged(running, next)].join(' ')).not.toContain('secret');
    expect(
      keysNeedingRestart(
        running,
        parseConfig({
          auth: { apiKeys: ['sk-old-secret'] },
          responses: { store: 'off' },
          models: [{ name: 'z', engine: 'stub' }],
        }),
      ),
    ).toEqual([]);
  });

  it('applies the API keys, their tenants and the limit values live, and keeps where limits are counted until a restart', () => {
    const running = parseConfig({ auth: { apiKeys: ['sk-a'] }, responses: { store: 'off' } });
    const next = parseConfig({
      auth: {
        apiKeys: ['sk-a', { name: 'team', key: 'sk-b', weight: 3, limits: { tokensPerDay: 10 } }],
        protectMetrics: true,
        limits: { tokensPerMinute: 500, store: 'redis' },
      },
      redis: { url: 'redis://10.0.0.9:6379' },
      responses: { store: 'off' },
    });
    expect(liveKeysChanged(running, next)).toEqual([
      'auth.apiKeys',
      'auth.limits.tokensPerMinute',
      'auth.protectMetrics',
    ]);
    expect(keysNeedingRestart(running, next)).toEqual(['auth.limits.redis', 'auth.limits.store', 'redis.url']);
    applyLiveKeys(running, next);
    expect(running.auth.apiKeys).toBe(next.auth.apiKeys);
    expect(running.auth.protectMetrics).toBe(true);
    // The limit values apply; the store stays the one built at start.
    expect(running.auth.limits).toMatchObject({ tokensPerMinute: 500, store: 'memory' });
    expect(running.auth.limits!.redis).toBeUndefined();
    // Nothing left to apply, and the store's change still waits for a restart.
    expect(liveKeysChanged(running, next)).toEqual([]);
    expect(keysNeedingRestart(running, next)).toEqual(['auth.limits.redis', 'auth.limits.store', 'redis.url']);
  });
});
