import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { logLinesOf, startCli as spawnCli, writeConfig } from './support/cli-process.js';
import { eventually, readJson } from './support/gateway.js';

const running: ChildProcess[] = [];

/** The built CLI as a real process, killed after each test. */
function startCli(args: string[], env: Record<string, string> = {}) {
  const cli = spawnCli(args, env);
  running.push(cli.child);
  return cli;
}

afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
});

describe('gantry --config FILE --port N --host H (npm start -- …)', () => {
  it('serves the models of a YAML file on the given host and port, logging one line with the address', async () => {
    const file = writeConfig(
      'models:\n  - { name: echo, engine: stub }\n  - { name: slow, engine: stub, prefillMs: 1000, tokenIntervalMs: 30 }\n',
    );
    const cli = startCli(['--config', file, '--port', '0', '--host', '127.0.0.1']);
    const url = await cli.listening;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const models = await readJson(await fetch(`${url}/v1/models`));
    expect(models.data.map((model: { id: string }) => model.id)).toEqual(['echo', 'slow']);
    expect(cli.output().stdout.trim().split('\n')).toHaveLength(1);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it('serves the stub model when given no configuration', async () => {
    const cli = startCli(['--port', '0']);
    const url = await cli.listening;
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'stub', messages: [{ role: 'user', content: 'ready' }] }),
    });
    expect((await readJson(response)).choices[0].message.content).toBe('ready');
  });

  it('takes the file from GANTRY_CONFIG', async () => {
    const file = writeConfig('models:\n  - { name: from-env, engine: stub }\n');
    const cli = startCli(['--port', '0'], { GANTRY_CONFIG: file });
    const models = await readJson(await fetch(`${await cli.listening}/v1/models`));
    expect(models.data[0].id).toBe('from-env');
  });

  it('refuses to start on a bad file, naming the field', async () => {
    const file = writeConfig('models:\n  - { name: bad, engine: stub, prefillMs: -5 }\n');
    const cli = startCli(['--config', file, '--port', '0']);
    expect(await cli.exited).toBe(1);
    expect(cli.output().stderr).toContain('models[0].prefillMs must not be less than 0');
  });

  it('refuses an unknown engine kind, naming the kinds there are', async () => {
    const file = writeConfig('models:\n  - { name: echo, engine: stub }\n  - { name: odd, engine: gpt }\n');
    const cli = startCli(['--config', file, '--port', '0']);
    expect(await cli.exited).toBe(1);
    expect(cli.output().stderr.trim()).toBe(
      `Invalid configuration (${file}):\n  - models[1].engine must be one of: stub, http, llama (got "gpt")`,
    );
  });

  it('refuses an unknown flag or a bad port with usage', async () => {
    const unknownFlag = startCli(['--prot', '80']);
    expect(await unknownFlag.exited).toBe(1);
    expect(unknownFlag.output().stderr).toMatch(/Usage: gantry \[--config FILE\]/);
    const badPort = startCli(['--port', 'http']);
    expect(await badPort.exited).toBe(1);
    expect(badPort.output().stderr).toMatch(/--port must be an integer/);
  });
});

describe('warnings at start', () => {
  it('names the new key of each deprecated one the file uses, which still works', async () => {
    const file = writeConfig(
      'auth:\n  apiKeys: [sk-a]\n  limits: { requestsPerMinute: 1, redisTimeoutMs: 150 }\nmodels:\n  - { name: echo, engine: stub }\n',
    );
    const cli = startCli(['--config', file, '--port', '0']);
    const url = await cli.listening;
    const warning =
      "auth.limits.redisTimeoutMs is deprecated and will be removed: set redis.timeoutMs (the Redis of every part) or auth.limits.redis.timeoutMs (this part's own).";
    const warned = () => logLinesOf(cli.output().stdout).some((line) => line.level === 40 && line.msg === warning);
    expect(await eventually(warned)).toBe(true);
    const ask = () => fetch(`${url}/v1/models`, { headers: { authorization: 'Bearer sk-a' } });
    expect((await ask()).status).toBe(200);
    expect((await ask()).status).toBe(429);
  });

  it('warns once, naming auth.apiKeys, when an open gateway listens beyond this machine (one process, or a primary and its workers)', async () => {
    const open = (cli: ReturnType<typeof startCli>) =>
      logLinesOf(cli.output().stdout).filter(
        (line) => line.level === 40 && line.msg.startsWith('No API keys (auth.apiKeys) and listening on 0.0.0.0'),
      );
    const single = startCli(['--port', '0', '--host', '0.0.0.0']);
    await single.listening;
    expect(await eventually(() => open(single).length > 0)).toBe(true);
    const workers = startCli([
      '--config',
      writeConfig('server: { workers: 2 }\nmodels:\n  - { name: echo, engine: stub }\n'),
      '--port',
      '0',
      '--host',
      '0.0.0.0',
    ]);
    await workers.listening;
    expect(await eventually(() => open(workers).length > 0)).toBe(true);
    expect([open(single).length, open(workers).length]).toEqual([1, 1]);
  }, 40_000);
});

describe('gantry check-config FILE (npm start -- check-config FILE)', () => {
  const PLUGIN = join(import.meta.dirname, '..', 'dist', 'examples', 'forward-engine', 'forward-engine.module.js');

  /** Runs the CLI to its end. */
  async function run(args: string[]) {
    const cli = startCli(args);
    const code = await cli.exited;
    return { code, ...cli.output() };
  }

  it('prints the effective configuration, defaults filled in and secrets masked, and exits 0 without listening', async () => {
    const file = writeConfig(
      [
        'server: { host: 0.0.0.0, port: 0 }',
        'redis: { url: "redis://:hunter2@127.0.0.1:1/0" }',
        'responses: { store: redis, encryptionKey: "an-encryption-key-of-32-characters!!" }',
        `plugins: [${PLUGIN}]`,
        'models:',
        '  - { name: fleet, engine: http, upstreams: ["http://127.0.0.1:1/v1"], apiKey: sk-upstream-secret, headers: { x-token: tok-secret } }',
        '  - { name: azure, engine: forward, baseUrl: "https://example.invalid/openai/v1", apiKeyEnv: SURELY_UNSET_KEY }',
        '',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await run(['check-config', file]);
    expect(code, stderr).toBe(0);
    expect(stdout).not.toContain('Gantry listening');
    expect(stdout.split('\n')[0]).toBe(
      `# ${file}: valid. The effective configuration, defaults filled in, secrets masked:`,
    );
    const effective = parse(stdout);
    expect(effective.server).toMatchObject({ host: '0.0.0.0', port: 0, workers: 1, bodyLimitBytes: 8 * 1024 * 1024 });
    expect(effective.models[0]).toMatchObject({
      name: 'fleet',
      maxQueue: 1024,
      routing: 'least-outstanding',
      apiKey: '***',
      headers: { 'x-token': '***' },
    });
    // A plugin's kind validates its entries, defaults included (its engine is never started: the key's variable is unset).
    expect(effective.models[1]).toMatchObject({ name: 'azure', engine: 'forward', authHeader: 'api-key' });
    expect(effective.responses.redis).toEqual({
      url: 'redis://:***@127.0.0.1:1/0',
      keyPrefix: 'gantry:responses:',
      timeoutMs: 1000,
    });
    for (const secret of ['hunter2', 'an-encryption-key', 'sk-upstream-secret', 'tok-secret'])
      expect(stdout + stderr).not.toContain(secret);
    // What a start would warn of, on stderr.
    expect(stderr).toMatch(/^Warning: No API keys \(auth\.apiKeys\) and listening on 0\.0\.0\.0/m);
  });

  it('refuses a bad file with the messages a start gives, and exits 1', async () => {
    const files = [
      writeConfig('server: { prot: 80 }\nmodels:\n  - { name: bad, engine: stub, prefillMs: -5 }\n'),
      writeConfig('models:\n  - { name: odd, engine: gpt }\n'),
      writeConfig(`plugins: [${PLUGIN}]\nmodels:\n  - { name: azure, engine: forward, baseUrl: nope, apiKeyEnv: K }\n`),
      writeConfig(
        'server: { workers: 2 }\nmodels:\n  - { name: local, engine: llama, modelPath: ./m.gguf, threads: 1 }\n',
      ),
      // Not YAML: said by line and column, never with the line, which holds a key.
      writeConfig('auth:\n  apiKeys: ["sk-live-yaml-secret\nmodels: []\n'),
    ];
    const outcomes = await Promise.all(
      files.map((file) => Promise.all([run(['check-config', file]), run(['--config', file, '--port', '0'])])),
    );
    for (const [index, [checked, started]] of outcomes.entries()) {
      const file = files[index]!;
      expect(checked.code).toBe(1);
      expect(started.code).toBe(1);
      expect(checked.stderr).toMatch(
        new RegExp(`^Invalid configuration \\(${file.replaceAll('/', '\\/').replaceAll('.', '\\.')}\\):\\n  - `),
      );
      expect(checked.stderr).toBe(started.stderr);
      expect(checked.stdout).toBe('');
      expect(checked.stderr).not.toContain('sk-live-yaml-secret');
    }
    expect(outcomes.at(-1)![0].stderr).toMatch(/ - not valid YAML at line \d+, column \d+: /);
  }, 90_000);

  it('takes exactly one file, and says what a reload would refuse of one a start takes', async () => {
    const { code, stderr } = await run(['check-config']);
    expect(code).toBe(1);
    expect(stderr).toContain('check-config takes one configuration file: gantry check-config FILE');
    const withoutModels = await run(['check-config', writeConfig('keepalive: { intervalMs: 1000 }\n')]);
    expect(withoutModels.code).toBe(0);
    expect(parse(withoutModels.stdout).models).toEqual([expect.objectContaining({ name: 'stub', engine: 'stub' })]);
    expect(withoutModels.stderr).toMatch(/^Warning: a reload would refuse this file: models is missing/m);
  });
});
