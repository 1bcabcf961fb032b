import { describe, expect, it, vi } from 'vitest';
import { configProblemsOf, parseWithBuiltInKinds } from '../../test/support/config-problems.js';
import { ReplicaPool } from '../engines/http/replica-pool.js';
import { ConfigError } from './config-error.js';
import { configFromText } from './config-loader.js';
import { maskedConfig } from './masked-config.js';
import { MASK, maskedUrl } from './masked-url.js';

const SECRET = 'sk-live-0123456789secret';

/** The ConfigError a text is refused with, as a start, `check-config` and a reload read it. */
function refusalOf(text: string): ConfigError {
  try {
    configFromText(text, { file: 'gantry.yaml' });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('no secret in a configuration error', () => {
  it('says where a file is not YAML by line and column only, never quoting the line (which may hold a key)', () => {
    const broken: Array<[string, RegExp]> = [
      [`auth:\n  apiKeys: ["${SECRET}\n`, /^not valid YAML at line 3, column 1: Missing closing "quote/],
      [`models:\n  - { name: x, engine: http, apiKey: ${SECRET}\n`, /^not valid YAML at line 3, column 1: /],
      [
        `auth:\n  apiKeys: [a]\n  apiKeys: [${SECRET}]\n`,
        /^not valid YAML at line 3, column 3: Map keys must be unique/,
      ],
      [`auth:\n\tapiKeys: [${SECRET}]\n`, /^not valid YAML at line 2, column 1: /],
      // A key that begins with `*` reads as an alias: yaml's own message would quote its name.
      [`auth:\n  apiKeys: [*${SECRET}]\n`, /^not valid YAML: an alias \(\*name\) names no anchor/],
    ];
    // An unknown tag is only a warning to yaml, which would print it with the line: nothing is printed.
    const warnings = vi.spyOn(process, 'emitWarning');
    expect(configFromText(`auth:\n  apiKeys: [!${SECRET} x]\n`, { file: 'gantry.yaml' }).auth.apiKeys).toEqual(['x']);
    expect(warnings).not.toHaveBeenCalled();
    warnings.mockRestore();
    for (const [text, message] of broken) {
      const refusal = refusalOf(text);
      expect(refusal.message).not.toContain(SECRET);
      expect(refusal.message).not.toContain('0123456789');
      expect(refusal.problems).toEqual([expect.stringMatching(message)]);
      expect(refusal.unfinished).toBe(true);
    }
  });

  it('refuses a malformed Redis URL (a bad port) at load, without quoting it', () => {
    for (const url of [
      `redis://:${SECRET}@10.0.0.9:99999/0`,
      `redis://:${SECRET}@10.0.0.9:63a9`,
      `redis://:${SECRET}@:6379`,
      `http://:${SECRET}@10.0.0.9:6379`,
    ]) {
      for (const raw of [
        { redis: { url } },
        { responses: { store: 'redis', redis: { url } } },
        { auth: { apiKeys: ['k'], limits: { store: 'redis', redis: { url } } } },
      ]) {
        const problems = configProblemsOf(raw);
        expect(problems.join('\n')).not.toContain(SECRET);
        expect(problems).toEqual([expect.stringMatching(/url must be a redis:\/\/ or rediss:\/\/ URL/)]);
      }
    }
    expect(parseWithBuiltInKinds({ redis: { url: `rediss://:${SECRET}@cache.internal:6380/2` } }).redis.url).toBe(
      `rediss://:${SECRET}@cache.internal:6380/2`,
    );
  });

  it('refuses a malformed upstream URL at load, without quoting it', () => {
    for (const url of [
      `http://vllm:99999/v1?key=${SECRET}`,
      `http://vllm:80a/v1?key=${SECRET}`,
      `vllm:8000/v1?key=${SECRET}`,
    ]) {
      const problems = configProblemsOf({ models: [{ name: 'fleet', engine: 'http', upstreams: [url] }] });
      expect(problems.join('\n')).not.toContain(SECRET);
      expect(problems).toEqual([expect.stringMatching(/upstreams must hold http\(s\) URLs/)]);
    }
  });

  it('masks the values of every URL’s query string wherever a configuration is shown: check-config, replica names', () => {
    const config = parseWithBuiltInKinds({
      observability: { tracing: { exporter: 'otlp', otlpEndpoint: `https://otel:4318/v1/traces?token=${SECRET}` } },
      models: [
        {
          name: 'fleet',
          engine: 'http',
          upstreams: [`https://vllm:8000/v1?api-key=${SECRET}&region=eu`, `https://user:${SECRET}@vllm-2:8000/v1`],
        },
      ],
    });
    const shown = maskedConfig(config) as any;
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    expect(shown.models[0].upstreams).toEqual([
      `https://vllm:8000/v1?api-key=${MASK}&region=${MASK}`,
      `https://user:${MASK}@vllm-2:8000/v1`,
    ]);
    expect(shown.observability.tracing.otlpEndpoint).toBe(`https://otel:4318/v1/traces?token=${MASK}`);
    expect(maskedUrl('https://vllm:8000/v1')).toBe('https://vllm:8000/v1');
    expect(maskedUrl('not a url ?x=1')).toBe('not a url ?x=1');

    // Logs, /ready and the per-replica metrics name a replica by its label.
    const pool = new ReplicaPool(config.models[0] ? (config.models[0] as any).upstreams : [], {
      maxFailures: 3,
      baseMs: 1_000,
      maxMs: 10_000,
    });
    expect(pool.replicas.map((replica) => replica.label)).toEqual([
      `https://vllm:8000/v1?api-key=${MASK}&region=${MASK}`,
      'https://vllm-2:8000/v1',
    ]);
  });
});
