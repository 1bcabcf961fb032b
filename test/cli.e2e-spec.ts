import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readJson } from './support/gateway.js';

// The CLI as operators run it: the built entry point (npm test builds first), a real process.
const ENTRY = join(import.meta.dirname, '..', 'dist', 'src', 'main.js');
const running: ChildProcess[] = [];

function startCli(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [ENTRY, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const match = /Gantry listening on (http:\/\/\S+)/.exec(stdout);
      if (match) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
  listening.catch(() => undefined);
  return { child, exited, listening, output: () => ({ stdout, stderr }) };
}

function writeConfig(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'gantry-cli-')), 'gantry.yaml');
  writeFileSync(file, text);
  return file;
}

afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
});

describe('npm start -- --config FILE --port N --host H', () => {
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

  it('refuses an unknown flag or a bad port with usage', async () => {
    const unknownFlag = startCli(['--prot', '80']);
    expect(await unknownFlag.exited).toBe(1);
    expect(unknownFlag.output().stderr).toMatch(/Usage: npm start/);
    const badPort = startCli(['--port', 'http']);
    expect(await badPort.exited).toBe(1);
    expect(badPort.output().stderr).toMatch(/--port must be an integer/);
  });
});
