import { describe, expect, it } from 'vitest';
import { configProblemsOf } from '../../test/support/config-problems.js';
import { parseConfig } from './config-loader.js';

describe('the responses section', () => {
  it('is optional: without it there is no encryption key (a random one is made at start)', () => {
    expect(parseConfig({}).responses.encryptionKey).toBeUndefined();
  });

  it('takes an encryption key of at least 32 characters', () => {
    const key = 'n2Vf0c0M1kq3bqkO5xR3b1m4sQmR7yYzq0Xc8wq3E1g=';
    expect(parseConfig({ responses: { encryptionKey: key } }).responses.encryptionKey).toBe(key);
  });

  it('refuses a short key or an unknown store, without echoing the key', () => {
    const problems = configProblemsOf({ responses: { encryptionKey: 'short-secret', store: 'maybe' } });
    expect(problems.join('\n')).toMatch(/encryptionKey must be at least 32 characters/);
    expect(problems.join('\n')).toMatch(/responses\.store must be one of the following values: memory, redis, off/);
    expect(problems.join('\n')).not.toContain('short-secret');
  });

  it('keeps stored responses in memory by default, bounded', () => {
    expect(parseConfig({}).responses).toMatchObject({
      store: 'memory',
      ttlSeconds: 86_400,
      maxStoredResponses: 10_000,
      maxEventsPerResponse: 100_000,
      maxStoredBytes: 256 * 1024 * 1024,
      maxResolvedInputBytes: 16 * 1024 * 1024,
    });
    expect(parseConfig({}).responses.redis).toBeUndefined();
  });

  it('takes a shared Redis store (the redis section), or none', () => {
    const redis = parseConfig({
      redis: { url: 'redis://10.0.0.9:6379' },
      responses: { store: 'redis', ttlSeconds: 3_600 },
    });
    expect(redis.responses).toMatchObject({
      store: 'redis',
      ttlSeconds: 3_600,
      redis: { url: 'redis://10.0.0.9:6379', keyPrefix: 'gantry:responses:', timeoutMs: 1_000 },
    });
    expect(parseConfig({ responses: { store: 'off' } }).responses.store).toBe('off');
  });

  it('refuses a Redis store without a redis:// URL', () => {
    expect(configProblemsOf({ responses: { store: 'redis' } })).toEqual([
      'responses.store is redis but no Redis is configured: set redis.url (redis://host:6379 or rediss://...), or responses.redis.url',
    ]);
    expect(configProblemsOf({ redis: { url: 'http://10.0.0.9:6379' }, responses: { store: 'redis' } })).toEqual([
      'redis.url must be a redis:// or rediss:// URL (redis://[:password@]host:port[/db])',
    ]);
  });

  it('refuses bounds that would keep nothing or time out at once', () => {
    const problems = configProblemsOf({
      responses: {
        ttlSeconds: 0,
        maxStoredResponses: 0,
        maxEventsPerResponse: 15,
        maxStoredBytes: 1_000,
        maxResolvedInputBytes: 1_000,
        redisTimeoutMs: 5,
        redisKeyPrefix: 'a b',
      },
    });
    expect(problems).toEqual([
      'responses.ttlSeconds must not be less than 1',
      'responses.maxStoredResponses must not be less than 1',
      'responses.maxEventsPerResponse must not be less than 16',
      'responses.maxStoredBytes must be at least 1048576 (1 MiB)',
      'responses.maxResolvedInputBytes must be at least 1024',
      'responses.redisTimeoutMs must not be less than 10',
      'responses.redisKeyPrefix must not be empty or contain spaces',
    ]);
    expect(configProblemsOf({ responses: { ttlSeconds: 1.5 } })).toEqual([
      'responses.ttlSeconds must be an integer number',
    ]);
  });
});
