import { describe, expect, it } from 'vitest';
import { parseWithBuiltInKinds as parseConfig } from '../../test/support/config-problems.js';
import { MASK, maskedConfig } from './masked-config.js';

describe('maskedConfig', () => {
  process.env.GANTRY_TEST_KEY_VARIABLE = 'sk-from-the-environment';
  const config = parseConfig({
    redis: { url: 'redis://:hunter2@10.0.0.9:6379/1' },
    auth: {
      apiKeys: [
        'sk-literal-secret',
        { env: 'GANTRY_TEST_KEY_VARIABLE' },
        { name: 'team', key: 'sk-team-secret', weight: 2 },
      ],
      limits: { store: 'redis' },
    },
    responses: { encryptionKey: 'an-encryption-key-of-32-characters!!' },
    observability: { tracing: { exporter: 'otlp', otlpEndpoint: 'https://collector:otlp-secret@otel:4318/v1/traces' } },
    models: [
      {
        name: 'fleet',
        engine: 'http',
        upstreams: ['https://user:upstream-pw@vllm:8000/v1'],
        apiKey: 'sk-upstream-secret',
        headers: { 'x-token': 'tok-secret' },
      },
    ],
  });

  it('masks every secret: API keys written in the file, upstream keys, header values, the encryption key, URL passwords', () => {
    const text = JSON.stringify(maskedConfig(config));
    for (const secret of [
      'sk-from-the-environment',
      'sk-literal-secret',
      'sk-team-secret',
      'hunter2',
      'an-encryption-key',
      'otlp-secret',
      'upstream-pw',
      'sk-upstream-secret',
      'tok-secret',
    ]) {
      expect(text).not.toContain(secret);
    }
    const shown = maskedConfig(config) as any;
    expect(shown.auth.apiKeys).toEqual([
      MASK,
      { env: 'GANTRY_TEST_KEY_VARIABLE' },
      expect.objectContaining({ name: 'team', key: MASK, weight: 2 }),
    ]);
    expect(shown.redis.url).toBe(`redis://:${MASK}@10.0.0.9:6379/1`);
    expect(shown.auth.limits.redis).toEqual({
      url: `redis://:${MASK}@10.0.0.9:6379/1`,
      keyPrefix: 'gantry:limits:',
      timeoutMs: 200,
    });
    expect(shown.models[0]).toMatchObject({
      upstreams: [`https://user:${MASK}@vllm:8000/v1`],
      apiKey: MASK,
      headers: { 'x-token': MASK },
    });
  });

  it('masks a URL’s lone user name, which may be a token', () => {
    const withToken = parseConfig({
      models: [{ name: 'fleet', engine: 'http', upstreams: ['https://sk-token-as-user@vllm:8000/v1'] }],
    });
    const shown = maskedConfig(withToken) as any;
    expect(JSON.stringify(shown)).not.toContain('sk-token-as-user');
    expect(shown.models[0].upstreams).toEqual([`https://${MASK}@vllm:8000/v1`]);
  });

  it('keeps everything else as the gateway runs it, defaults included, a model by its name and engine first', () => {
    const shown = maskedConfig(config) as any;
    expect(shown.server).toMatchObject({ host: '127.0.0.1', port: 8000, workers: 1 });
    expect(Object.keys(shown.models[0]).slice(0, 2)).toEqual(['name', 'engine']);
    expect(shown.models[0]).toMatchObject({ maxQueue: 1024, routing: 'least-outstanding', connectTimeoutMs: 5_000 });
    expect(shown.observability.tracing.otlpEndpoint).toBe(`https://collector:${MASK}@otel:4318/v1/traces`);
    // The configuration itself is untouched.
    expect(config.auth.apiKeys[0]).toBe('sk-literal-secret');
  });
});
