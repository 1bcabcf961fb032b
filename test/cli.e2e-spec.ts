import type { ChildProcess } from 'node:child_process';
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
    const file = writeConfig('models:\n  - { name: echo, engine: stub }\n  - { name: slow, engine: stub, prefillMs: 1000, tokenIntervalMs: 30 }\n');
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
    expect(cli.output().stderr.trim()).toBe(`Invalid configuration (${file}):\n  - models[1].engine must be one of: stub, http, llama (got "gpt")`);
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
  it("names the new key of each deprecated one the file uses, which still works", async () => {
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
      logLinesOf(cli.output().stdout).filter((line) => line.level === 40 && line.msg.startsWith('No API keys (auth.apiKeys) and listening on 0.0.0.0'));
    const single = startCli(['--port', '0', '--host', '0.0.0.0']);
    await single.listening;
    expect(await eventually(() => open(single).length > 0)).toBe(true);
    const workers = startCli(['--config', writeConfig('server: { workers: 2 }\nmodels:\n  - { name: echo, engine: stub }\n'), '--port', '0', '--host', '0.0.0.0']);
    await workers.listening;
    expect(await eventually(() => open(workers).length > 0)).toBe(true);
    expect([open(single).length, open(workers).length]).toEqual([1, 1]);
  }, 40_000);
});
