import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configProblemsOf } from '../../test/support/config-problems.js';
import { resolveApiKeyEntries } from './api-key-entries.js';
import { parseConfig } from './config-loader.js';

describe('auth.apiKeys sources', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-keys-'));
  const keyFile = join(dir, 'keys.txt');
  writeFileSync(keyFile, '# rotated 2026-01\nsk-file-one\n\n  sk-file-two  \r\n');

  it('reads literal keys, environment variables and key files (one key per line, # comments)', () => {
    const resolved = resolveApiKeyEntries(['sk-literal', { env: 'GANTRY_TEST_KEY' }, { file: keyFile }], {
      GANTRY_TEST_KEY: ' sk-env ',
    });
    const { problems } = resolved;
    const keys = resolved.keys.map(({ key }) => key);
    expect(problems).toEqual([]);
    expect(keys).toEqual(['sk-literal', 'sk-env', 'sk-file-one', 'sk-file-two']);
  });

  it('treats an unset variable, a missing file or an empty file as a problem, never as "no keys"', () => {
    const empty = join(dir, 'empty.txt');
    writeFileSync(empty, '# nothing yet\n\n');
    const { keys, problems } = resolveApiKeyEntries(
      [{ env: 'GANTRY_UNSET' }, { file: join(dir, 'missing.txt') }, { file: empty }],
      {},
    );
    expect(keys).toEqual([]);
    expect(problems).toEqual([
      'auth.apiKeys[0]: the environment variable GANTRY_UNSET is not set or empty',
      `auth.apiKeys[1]: cannot read the key file ${join(dir, 'missing.txt')} (ENOENT)`,
      `auth.apiKeys[2]: the key file ${empty} holds no key`,
    ]);
  });

  it('refuses to start on a source that resolves to nothing, or on a malformed entry', () => {
    expect(configProblemsOf({ auth: { apiKeys: [{ env: 'GANTRY_SURELY_UNSET_VARIABLE' }] } })).toEqual([
      'auth.apiKeys[0]: the environment variable GANTRY_SURELY_UNSET_VARIABLE is not set or empty',
    ]);
    expect(configProblemsOf({ auth: { apiKeys: [{ vault: 'x' }] } })[0]).toMatch(/apiKeys entries must each be a key/);
    expect(configProblemsOf({ auth: { apiKeys: [''] } })[0]).toMatch(/apiKeys entries must each be a key/);
  });

  it('validates limits: a redis store needs a URL, limits need keys', () => {
    expect(configProblemsOf({ auth: { apiKeys: ['k'], limits: { store: 'redis' } } })[0]).toMatch(
      /auth.limits.store is redis but no Redis is configured: set redis.url/,
    );
    expect(configProblemsOf({ auth: { limits: { requestsPerMinute: 5 } } })).toEqual([
      'auth.limits applies per API key: set auth.apiKeys too',
    ]);
    const config = parseConfig({ auth: { apiKeys: ['k'], limits: { concurrentStreams: 2 } } });
    expect(config.auth.limits).toMatchObject({ concurrentStreams: 2, store: 'memory' });
    expect(config.auth).toMatchObject({ protectHealth: false, protectMetrics: false });
  });

  it('defaults the server, limits and shutdown settings so that long streams are never cut', () => {
    const config = parseConfig({});
    expect(config.server).toMatchObject({
      requestTimeoutMs: 0,
      keepAliveTimeoutMs: 65_000,
      headersTimeoutMs: 60_000,
      maxBufferedBytesPerStream: 4 * 1024 * 1024,
    });
    expect(config.shutdown.drainMs).toBe(10_000);
    expect(config.limits).toMatchObject({ maxJsonDepth: 64, maxMessages: 2000 });
  });
});

describe('auth.apiKeys named keys (tenants)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-tenants-'));
  const teamFile = join(dir, 'team-b.keys');
  writeFileSync(teamFile, 'sk-b-one\n# old one removed\nsk-b-two\n');

  it('reads a named key with its defaults, beside plain keys, and a file of several keys of one tenant', () => {
    const config = parseConfig({
      auth: {
        apiKeys: [
          'sk-plain',
          { name: 'team-a', key: 'sk-a', weight: 3, priority: 1, models: ['llama-*'], limits: { tokensPerDay: 1000 } },
          { name: 'team-b', key: { file: teamFile } },
        ],
        limits: { requestsPerMinute: 60 },
      },
    });
    expect(config.auth.apiKeys[1]).toMatchObject({
      name: 'team-a',
      weight: 3,
      priority: 1,
      models: ['llama-*'],
      limits: { tokensPerDay: 1000 },
    });
    expect(config.auth.apiKeys[2]).toMatchObject({ name: 'team-b', weight: 1, priority: 0 });
    const { keys, problems } = resolveApiKeyEntries(config.auth.apiKeys);
    expect(problems).toEqual([]);
    expect(keys.map(({ key, named }) => [key, named?.name])).toEqual([
      ['sk-plain', undefined],
      ['sk-a', 'team-a'],
      ['sk-b-one', 'team-b'],
      ['sk-b-two', 'team-b'],
    ]);
  });

  it('refuses a key listed twice, a name used twice or the reserved name, naming where (never the key)', () => {
    const twice = join(dir, 'twice.keys');
    writeFileSync(twice, 'sk-dup\nsk-other\nsk-dup\n');
    const problems = configProblemsOf({
      auth: {
        apiKeys: [
          'sk-same',
          { name: 'team-a', key: 'sk-same' },
          { name: 'team-a', key: 'sk-x' },
          { name: 'default', key: 'sk-y' },
          { name: 'c', key: { file: twice } },
        ],
      },
    });
    expect(problems).toEqual([
      'auth.apiKeys[1].key: the same key as auth.apiKeys[0] (each key may be listed once)',
      'auth.apiKeys[2].name: team-a is already the name of auth.apiKeys[1] (names must be unique)',
      'auth.apiKeys[3].name: default is the tenant of the keys without a name; choose another name',
      `auth.apiKeys[4].key (${twice} line 3): the same key as auth.apiKeys[4].key (${twice} line 1) (each key may be listed once)`,
    ]);
    expect(problems.join('\n')).not.toMatch(/sk-/);
  });

  it('names the field at fault in a named key', () => {
    expect(
      configProblemsOf({
        auth: {
          apiKeys: [
            {
              name: 'bad name',
              key: 'k1',
              weight: 0,
              priority: 1.5,
              models: [],
              limits: { tokensPerMinute: 0 },
              colour: 'red',
            },
          ],
        },
      }),
    ).toEqual([
      'auth.apiKeys[0].colour: unknown field (should not exist)',
      'auth.apiKeys[0].name must be 1-64 letters, digits, . _ or -, starting with a letter or digit',
      'auth.apiKeys[0].weight must not be less than 0.001',
      'auth.apiKeys[0].priority must be an integer number',
      'auth.apiKeys[0].models should not be empty',
      'auth.apiKeys[0].limits.tokensPerMinute must not be less than 1',
    ]);
    expect(configProblemsOf({ auth: { apiKeys: [{ name: 'a', key: { vault: 'x' } }] } })).toEqual([
      'auth.apiKeys[0].key must be a key (a non-empty string), { env: NAME } or { file: PATH }',
    ]);
    expect(
      configProblemsOf({ auth: { apiKeys: [{ name: 'a', key: { env: 'GANTRY_SURELY_UNSET_TENANT_KEY' } }] } }),
    ).toEqual(['auth.apiKeys[0].key: the environment variable GANTRY_SURELY_UNSET_TENANT_KEY is not set or empty']);
  });

  it('reads token limits in auth.limits too', () => {
    const config = parseConfig({ auth: { apiKeys: ['k'], limits: { tokensPerMinute: 5000, tokensPerDay: 100_000 } } });
    expect(config.auth.limits).toMatchObject({ tokensPerMinute: 5000, tokensPerDay: 100_000, store: 'memory' });
  });
});
