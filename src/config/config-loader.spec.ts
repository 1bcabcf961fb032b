import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configProblemsOf, parseWithBuiltInKinds as parseConfig } from '../../test/support/config-problems.js';
import { HttpModelConfig } from '../engines/http/http-model-config.js';
import { LlamaModelConfig } from '../engines/llama/llama-model-config.js';
import { StubModelConfig } from '../engines/stub/stub-model-config.js';
import { loadConfig } from './config-loader.js';

describe('configuration', () => {
  it('defaults to the stub model on 127.0.0.1:8000 with chunk keep-alives every 15 s', () => {
    const config = loadConfig({});
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8000 });
    expect(config.keepalive).toEqual({ mode: 'chunks', intervalMs: 15_000 });
    expect(config.models.map((model) => [model.name, model.engine])).toEqual([['stub', 'stub']]);
  });

  it('reads engine keys beside name and engine, with defaults for the rest', () => {
    const config = parseConfig({ models: [{ name: 'slow', engine: 'stub', prefillMs: 1000, tokenIntervalMs: 30 }] });
    const model = config.models[0] as StubModelConfig;
    expect(model).toBeInstanceOf(StubModelConfig);
    expect(model).toMatchObject({ name: 'slow', prefillMs: 1000, tokenIntervalMs: 30, failWith: 'internal' });
    // The admission defaults are the config class's, for every kind: a queue of 1024, no concurrency limit of its own.
    expect(model).toMatchObject({ maxQueue: 1024, queueOrder: 'fair' });
    expect(model.maxConcurrency).toBeUndefined();
  });

  it('reads an http model with its timeouts and pool defaults, and names a bad upstream', () => {
    const config = parseConfig({
      models: [{ name: 'fleet', engine: 'http', upstreams: ['http://10.0.0.5:8000/v1', 'http://vllm-b:8000/v1'] }],
    });
    const model = config.models[0] as HttpModelConfig;
    expect(model).toBeInstanceOf(HttpModelConfig);
    expect(model).toMatchObject({
      continuousUsage: true,
      bodyTimeoutMs: 600_000,
      healthCheckIntervalMs: 5_000,
      maxFailures: 3,
    });
    expect(configProblemsOf({ models: [{ name: 'fleet', engine: 'http', upstreams: [] }] })).toEqual([
      'models[0].upstreams should not be empty',
    ]);
    expect(configProblemsOf({ models: [{ name: 'fleet', engine: 'http', upstreams: ['10.0.0.5:8000'] }] })).toEqual([
      'models[0].upstreams must hold http(s) URLs such as http://10.0.0.5:8000/v1',
    ]);
    expect(
      configProblemsOf({
        models: [{ name: 'fleet', engine: 'http', upstreams: ['http://a/v1'], headers: { 'x-n': 1 } }],
      }),
    ).toEqual(['models[0].headers must be a mapping of names to string values']);
  });

  it("reads an http model's disableReasoningWith, and refuses one that is empty or names a field Gantry writes", () => {
    const fleet = { name: 'fleet', engine: 'http', upstreams: ['http://a/v1'] };
    const hint = { chat_template_kwargs: { enable_thinking: false } };
    expect(parseConfig({ models: [{ ...fleet, disableReasoningWith: hint }] }).models[0]).toMatchObject({
      disableReasoningWith: hint,
    });
    for (const disableReasoningWith of [{}, { max_tokens: 0 }, 'no-thinking', [hint]]) {
      expect(configProblemsOf({ models: [{ ...fleet, disableReasoningWith }] })).toEqual([
        expect.stringMatching(
          /^models\[0\]\.disableReasoningWith must be a mapping of request fields such as .*none of Gantry's own \(model, messages, /,
        ),
      ]);
    }
  });

  it('turns mid-stream failover on by default, fills the keys a model leaves out, and names a bad one', () => {
    const fleet = { name: 'fleet', engine: 'http', upstreams: ['http://a/v1'] };
    expect((parseConfig({ models: [fleet] }).models[0] as HttpModelConfig).midStreamFailover).toEqual({
      enabled: true,
      maxResumes: 2,
      stallTimeoutMs: 15_000,
    });
    expect(
      (parseConfig({ models: [{ ...fleet, midStreamFailover: { stallTimeoutMs: 300 } }] }).models[0] as HttpModelConfig)
        .midStreamFailover,
    ).toEqual({
      enabled: true,
      maxResumes: 2,
      stallTimeoutMs: 300,
    });
    expect(configProblemsOf({ models: [{ ...fleet, midStreamFailover: { maxResumes: -1 } }] })).toEqual([
      'models[0].midStreamFailover.maxResumes must not be less than 0',
    ]);
    expect(configProblemsOf({ models: [{ ...fleet, midStreamFailover: { retries: 2 } }] })[0]).toMatch(
      /^models\[0\]\.midStreamFailover\.retries: unknown field/,
    );
  });

  it('names the field at fault', () => {
    expect(configProblemsOf({ models: [{ name: 'a', engine: 'stub', prefillMs: -1 }] })).toEqual([
      'models[0].prefillMs must not be less than 0',
    ]);
    expect(configProblemsOf({ keepalive: { mode: 'loud' } })[0]).toMatch(/^keepalive\.mode must be one of/);
    expect(configProblemsOf({ server: { port: 'eighty' } })).toContain('server.port must be an integer number');
  });

  it('rejects unknown keys, unknown engines and duplicate names', () => {
    expect(configProblemsOf({ models: [{ name: 'a', engine: 'stub', prefilMs: 5 }] })[0]).toMatch(
      /^models\[0\]\.prefilMs: unknown field/,
    );
    expect(configProblemsOf({ models: [{ name: 'a', engine: 'gpt' }] })).toEqual([
      'models[0].engine must be one of: stub, http, llama (got "gpt")',
    ]);
    expect(
      configProblemsOf({
        models: [
          { name: 'a', engine: 'stub' },
          { name: 'a', engine: 'stub' },
        ],
      }),
    ).toEqual(['models must have unique names']);
  });

  it('reads llama models with their defaults and checks gpuLayers', () => {
    const config = parseConfig({ models: [{ name: 'local', engine: 'llama', modelPath: './m.gguf', threads: 1 }] });
    const model = config.models[0] as LlamaModelConfig;
    expect(model).toBeInstanceOf(LlamaModelConfig);
    expect(model).toMatchObject({
      modelPath: './m.gguf',
      contextSize: 4096,
      sequences: 4,
      gpuLayers: 'auto',
      gpu: 'auto',
      threads: 1,
    });
    expect(
      parseConfig({ models: [{ name: 'cpu', engine: 'llama', modelPath: 'm', gpu: false, gpuLayers: 0 }] }).models[0],
    ).toMatchObject({
      gpu: false,
      gpuLayers: 0,
    });
    expect(configProblemsOf({ models: [{ name: 'x', engine: 'llama', modelPath: 'm', gpuLayers: 'most' }] })).toEqual([
      'models[0].gpuLayers must be "auto" or an integer >= 0',
    ]);
    expect(configProblemsOf({ models: [{ name: 'x', engine: 'llama' }] })).toContain(
      'models[0].modelPath must be a string',
    );
  });

  it('loads a YAML file and lets flags override it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gantry-config-'));
    const file = join(dir, 'gantry.yaml');
    writeFileSync(file, 'server: { port: 9000 }\nkeepalive: { mode: comments, intervalMs: 500 }\n');
    const config = loadConfig({ file, host: '0.0.0.0' });
    expect(config.server).toMatchObject({ host: '0.0.0.0', port: 9000 });
    expect(config.keepalive).toEqual({ mode: 'comments', intervalMs: 500 });
    expect(() => loadConfig({ file: join(dir, 'missing.yaml') })).toThrow(/cannot read the file/);
    writeFileSync(file, 'server: [unclosed\n');
    expect(() => loadConfig({ file })).toThrow(/not valid YAML/);
  });

  it('refuses an empty file, and a file without models where a reload asks for them', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gantry-config-')), 'gantry.yaml');
    for (const empty of ['', '\n', '# only a comment\n']) {
      writeFileSync(file, empty);
      expect(() => loadConfig({ file })).toThrow(`Invalid configuration (${file}):\n  - the file is empty`);
    }
    writeFileSync(file, 'server: { port: 9000 }\n');
    expect(loadConfig({ file }).models.map((model) => model.name)).toEqual(['stub']);
    expect(() => loadConfig({ file }, { requireModels: true })).toThrow('models is missing');
  });

  it('takes responses.encryptionKey from outside the file (GANTRY_RESPONSES_ENCRYPTION_KEY), validated as in the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gantry-config-'));
    const file = join(dir, 'gantry.yaml');
    writeFileSync(file, 'responses: { encryptionKey: the-one-in-the-file-0123456789abcdef }\n');
    const secret = 'a-secret-from-the-environment-0123456789';
    expect(loadConfig({ file, responsesEncryptionKey: secret }).responses.encryptionKey).toBe(secret);
    expect(loadConfig({ responsesEncryptionKey: secret }).responses.encryptionKey).toBe(secret);
    expect(() => loadConfig({ file, responsesEncryptionKey: 'short' })).toThrow(/at least 32 characters/);
  });
});
