import { describe, expect, it } from 'vitest';
import { configProblemsOf } from '../../test/support/config-problems.js';
import { parseConfig } from './config-loader.js';
import { startWarnings } from './config-warnings.js';

const KEYS = { apiKeys: ['sk-a'] };

describe('the redis section: one Redis for every part on store: redis', () => {
  it('gives the limits and the stored responses the same Redis, each with its own key prefix and timeout', () => {
    const config = parseConfig({
      redis: { url: 'redis://:secret@10.0.0.9:6379/2' },
      auth: { ...KEYS, limits: { store: 'redis', tokensPerDay: 1000 } },
      responses: { store: 'redis' },
    });
    expect(config.redis).toEqual({ url: 'redis://:secret@10.0.0.9:6379/2', keyPrefix: 'gantry:' });
    expect(config.auth.limits!.redis).toEqual({
      url: 'redis://:secret@10.0.0.9:6379/2',
      keyPrefix: 'gantry:limits:',
      timeoutMs: 200,
    });
    expect(config.responses.redis).toEqual({
      url: 'redis://:secret@10.0.0.9:6379/2',
      keyPrefix: 'gantry:responses:',
      timeoutMs: 1_000,
    });
    expect(startWarnings(config)).toEqual([]);
  });

  it("takes the section's prefix and timeout for every part, and a part's own keys over them", () => {
    const config = parseConfig({
      redis: { url: 'redis://shared:6379', keyPrefix: 'team-a:', timeoutMs: 300 },
      auth: { ...KEYS, limits: { store: 'redis', redis: { url: 'rediss://limits:6380', timeoutMs: 50 } } },
      responses: { store: 'redis', redis: { keyPrefix: 'conversations:' } },
    });
    expect(config.auth.limits!.redis).toEqual({
      url: 'rediss://limits:6380',
      keyPrefix: 'team-a:limits:',
      timeoutMs: 50,
    });
    expect(config.responses.redis).toEqual({ url: 'redis://shared:6379', keyPrefix: 'conversations:', timeoutMs: 300 });
  });

  it('is needed only by a part on Redis, and read the same a second time (a worker reads what its primary resolved)', () => {
    expect(parseConfig({}).redis).toEqual({ keyPrefix: 'gantry:' });
    expect(parseConfig({ auth: { ...KEYS, limits: { store: 'memory' } } }).auth.limits!.redis).toBeUndefined();
    const resolved = parseConfig({ redis: { url: 'redis://a:6379' }, responses: { store: 'redis' } });
    const again = parseConfig(JSON.parse(JSON.stringify(resolved)));
    expect(again.responses.redis).toEqual(resolved.responses.redis);
  });

  it('refuses a part on Redis with none configured, and a URL, prefix or timeout that is not one', () => {
    expect(configProblemsOf({ auth: { ...KEYS, limits: { store: 'redis' } }, responses: { store: 'redis' } })).toEqual([
      'auth.limits.store is redis but no Redis is configured: set redis.url (redis://host:6379 or rediss://...), or auth.limits.redis.url',
      'responses.store is redis but no Redis is configured: set redis.url (redis://host:6379 or rediss://...), or responses.redis.url',
    ]);
    expect(
      configProblemsOf({
        redis: { url: 'localhost:6379', keyPrefix: 'a b', timeoutMs: 0 },
        responses: { redis: { url: 'http://x' } },
      }),
    ).toEqual([
      'responses.redis.url must be a redis:// or rediss:// URL (redis://[:password@]host:port[/db])',
      'redis.url must be a redis:// or rediss:// URL (redis://[:password@]host:port[/db])',
      'redis.keyPrefix must not be empty or contain spaces',
      'redis.timeoutMs must not be less than 1',
    ]);
  });

  it("keeps the parts' former keys working, as the part's own, with a warning naming the new keys", () => {
    const config = parseConfig({
      redis: { url: 'redis://shared:6379' },
      auth: {
        ...KEYS,
        limits: {
          store: 'redis',
          redisUrl: 'redis://old-limits:6379',
          redisKeyPrefix: 'old:limits:',
          redisTimeoutMs: 75,
        },
      },
      responses: { store: 'redis', redisTimeoutMs: 900 },
    });
    expect(config.auth.limits!.redis).toEqual({
      url: 'redis://old-limits:6379',
      keyPrefix: 'old:limits:',
      timeoutMs: 75,
    });
    expect(config.responses.redis).toEqual({
      url: 'redis://shared:6379',
      keyPrefix: 'gantry:responses:',
      timeoutMs: 900,
    });
    expect(config.auth.limits).not.toHaveProperty('redisUrl');
    expect(startWarnings(config)).toEqual([
      "auth.limits.redisUrl is deprecated and will be removed: set redis.url (the Redis of every part) or auth.limits.redis.url (this part's own).",
      "auth.limits.redisKeyPrefix is deprecated and will be removed: set redis.keyPrefix (the Redis of every part) or auth.limits.redis.keyPrefix (this part's own).",
      "auth.limits.redisTimeoutMs is deprecated and will be removed: set redis.timeoutMs (the Redis of every part) or auth.limits.redis.timeoutMs (this part's own).",
      "responses.redisTimeoutMs is deprecated and will be removed: set redis.timeoutMs (the Redis of every part) or responses.redis.timeoutMs (this part's own).",
    ]);
    // A former key alone still configures its part, as it did.
    expect(parseConfig({ responses: { store: 'redis', redisUrl: 'redis://only:6379' } }).responses.redis).toEqual({
      url: 'redis://only:6379',
      keyPrefix: 'gantry:responses:',
      timeoutMs: 1_000,
    });
  });
});
