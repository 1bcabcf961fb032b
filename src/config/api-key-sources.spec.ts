import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configProblemsOf } from '../../test/support/config-problems.js';
import { resolveApiKeys } from './api-key-sources.js';
import { parseConfig } from './config-loader.js';


describe('auth.apiKeys sources', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-keys-'));
  const keyFile = join(dir, 'keys.txt');
  writeFileSync(keyFile, '# rotated 2026-01\nsk-file-one\n\n  sk-file-two  \r\n');

  it('reads literal keys, environment variables and key files (one key per line, # comments)', () => {
    const { keys, problems } = resolveApiKeys(['sk-literal', { env: 'GANTRY_TEST_KEY' }, { file: keyFile }], { GANTRY_TEST_KEY: ' sk-env ' });
    expect(problems).toEqual([]);
    expect(keys).toEqual(['sk-literal', 'sk-env', 'sk-file-one', 'sk-file-two']);
  });

  it('treats an unset variable, a missing file or an empty file as a problem, never as "no keys"', () => {
    const empty = join(dir, 'empty.txt');
    writeFileSync(empty, '# nothing yet\n\n');
    const { keys, problems } = resolveApiKeys([{ env: 'GANTRY_UNSET' }, { file: join(dir, 'missing.txt') }, { file: empty }], {});
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
    expect(configProblemsOf({ auth: { apiKeys: ['k'], limits: { store: 'redis' } } })[0]).toMatch(/redisUrl must be a redis/);
    expect(configProblemsOf({ auth: { limits: { requestsPerMinute: 5 } } })).toEqual(['auth.limits applies per API key: set auth.apiKeys too']);
    const config = parseConfig({ auth: { apiKeys: ['k'], limits: { concurrentStreams: 2 } } });
    expect(config.auth.limits).toMatchObject({ concurrentStreams: 2, store: 'memory' });
    expect(config.auth).toMatchObject({ protectHealth: false, protectMetrics: false });
  });

  it('defaults the server, limits and shutdown settings so that long streams are never cut', () => {
    const config = parseConfig({});
    expect(config.server).toMatchObject({ requestTimeoutMs: 0, keepAliveTimeoutMs: 65_000, headersTimeoutMs: 60_000, maxBufferedBytesPerStream: 4 * 1024 * 1024 });
    expect(config.shutdown.drainMs).toBe(10_000);
    expect(config.limits).toMatchObject({ maxJsonDepth: 64 });
    expect(config.limits.maxMessages).toBeUndefined();
  });
});
