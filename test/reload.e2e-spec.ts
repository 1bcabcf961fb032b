import { writeFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { logLinesOf, startCli as spawnCli, writeConfig, type CliProcess } from './support/cli-process.js';
import { eventually, readJson } from './support/gateway.js';
import { parsePrometheus, valueOf } from './support/prometheus.js';
import { CHAT } from './support/protocol-streams.js';
import { openChatStream, words } from './support/open-stream.js';

const running: ChildProcess[] = [];

function startCli(args: string[]): CliProcess {
  const cli = spawnCli(args);
  running.push(cli.child);
  return cli;
}

afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
});

const modelNames = async (url: string): Promise<string[]> =>
  (await readJson(await fetch(`${url}/v1/models`))).data.map((model: { id: string }) => model.id);

/** The text a chat completion answers. */
async function answer(
  url: string,
  model: string,
  text: string,
): Promise<{ status: number; content?: string; reasoning?: string }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: text }] }),
  });
  const body = await readJson(response);
  return {
    status: response.status,
    content: body.choices?.[0]?.message?.content,
    reasoning: body.choices?.[0]?.message?.reasoning_content,
  };
}

describe('live reconfiguration of one process (SIGHUP, --watch-config)', () => {
  it('SIGHUP: new, changed and removed models apply to new requests while an open stream finishes on the engine it started on', async () => {
    const file = writeConfig(
      'models:\n  - { name: slow, engine: stub, tokenIntervalMs: 100 }\n  - { name: gone, engine: stub }\n',
    );
    const cli = startCli(['--config', file, '--port', '0']);
    const url = await cli.listening;
    // Scraped once before the reload: the gauges have a series for every model then.
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('gantry_running_requests{model="gone"} 0');
    const prompt = words(80);
    const { outcome: stream, ended: streamEnded } = await openChatStream(url, 'slow', prompt);

    writeFileSync(
      file,
      'keepalive: { intervalMs: 500 }\nmodels:\n  - { name: slow, engine: stub, tokenIntervalMs: 100, reasoning: thinking first }\n  - { name: fresh, engine: stub }\n',
    );
    cli.child.kill('SIGHUP');
    expect(await eventually(async () => (await modelNames(url)).join() === 'slow,fresh', 10_000)).toBe(true);
    // The reload was seen while the stream was still open (it lasts 8 s: a reload takes well under that on a slow machine).
    expect(streamEnded()).toBe(false);

    expect(await answer(url, 'fresh', 'hello there')).toMatchObject({ status: 200, content: 'hello there' });
    expect(await answer(url, 'gone', 'hello')).toMatchObject({ status: 404 });
    // The new model has its series; the removed one leaves the gauges.
    const samples = parsePrometheus(await (await fetch(`${url}/metrics`)).text());
    expect(valueOf(samples, 'gantry_requests_total', { model: 'fresh', outcome: 'completed', status: '200' })).toBe(1);
    expect(samples.some((sample) => sample.name === 'gantry_running_requests' && sample.labels.model === 'fresh')).toBe(
      true,
    );
    expect(samples.some((sample) => sample.name === 'gantry_running_requests' && sample.labels.model === 'gone')).toBe(
      false,
    );
    // A new request on the changed model runs on its new engine (which reasons first).
    expect(await answer(url, 'slow', 'x')).toMatchObject({ status: 200, content: 'x', reasoning: 'thinking first' });

    const outcome = await stream;
    expect(outcome.end).toBe('server');
    expect(CHAT.endedWell(outcome.frames)).toBe(true);
    expect(outcome.frames.map(CHAT.contentOf).join('')).toBe(prompt);
    // Started on the engine without reasoning, it never got any.
    expect(outcome.frames.some((frame) => frame.kind === 'event' && frame.data.includes('reasoning_content'))).toBe(
      false,
    );

    expect(
      await eventually(
        () =>
          logLinesOf(cli.output().stdout).some(
            (line) =>
              line.msg === `Configuration reloaded from ${file}: models added fresh; changed slow; removed gone.`,
          ),
        5_000,
      ),
    ).toBe(true);
    const warning = logLinesOf(cli.output().stdout).find((line) =>
      line.msg.startsWith('These changed keys take effect only after a restart'),
    );
    expect(warning).toMatchObject({ level: 40, msg: expect.stringContaining(': keepalive.intervalMs.') });

    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  }, 40_000);

  it('SIGHUP with an invalid file: refused with the messages a start gives, logged, and the running models stay', async () => {
    const file = writeConfig('models:\n  - { name: kept, engine: stub }\n');
    const cli = startCli(['--config', file, '--port', '0']);
    const url = await cli.listening;

    writeFileSync(file, 'models:\n  - { name: kept, engine: stub }\n  - { name: bad, engine: stub, prefillMs: -5 }\n');
    cli.child.kill('SIGHUP');
    const refusal = () =>
      logLinesOf(cli.output().stdout).find((line) => line.msg.startsWith('Configuration reload refused'));
    expect(await eventually(() => refusal() !== undefined, 10_000)).toBe(true);
    expect(refusal()).toMatchObject({ level: 50 });
    expect(refusal()!.msg).toBe(
      `Configuration reload refused; the running configuration stays. Invalid configuration (${file}):\n  - models[1].prefillMs must not be less than 0`,
    );
    // The same file refuses a start with the same message.
    const start = startCli(['--config', file, '--port', '0']);
    expect(await start.exited).toBe(1);
    expect(start.output().stderr).toContain(
      `Invalid configuration (${file}):\n  - models[1].prefillMs must not be less than 0`,
    );

    expect(await modelNames(url)).toEqual(['kept']);
    expect(await answer(url, 'kept', 'still here')).toMatchObject({ status: 200, content: 'still here' });
    expect(cli.child.exitCode).toBeNull();
  });

  it('SIGHUP with an empty file or one without models: refused as a start refuses it, and the default stub never serves', async () => {
    const file = writeConfig('models:\n  - { name: production, engine: stub }\n');
    const cli = startCli(['--config', file, '--port', '0']);
    const url = await cli.listening;
    const lines = () => logLinesOf(cli.output().stdout);
    const refusals = () => lines().filter((line) => line.msg.startsWith('Configuration reload refused'));

    writeFileSync(file, '# being rewritten\n');
    cli.child.kill('SIGHUP');
    expect(await eventually(() => refusals().length === 1, 10_000)).toBe(true);
    const empty = `Invalid configuration (${file}):\n  - the file is empty: it must hold the configuration, at least the models to serve`;
    expect(refusals()[0]).toMatchObject({ level: 50, msg: expect.stringContaining(empty) });
    // It was read again before it was refused, each time with a warning that says why.
    const retries = lines().filter((line) =>
      line.msg.startsWith(`Configuration file ${file} looks unfinished (the file is empty`),
    );
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(retries[0]).toMatchObject({ level: 40 });
    // The same file refuses a start with the same message.
    const start = startCli(['--config', file, '--port', '0']);
    expect(await start.exited).toBe(1);
    expect(start.output().stderr).toContain(empty);

    writeFileSync(file, 'keepalive: { intervalMs: 500 }\n');
    cli.child.kill('SIGHUP');
    expect(await eventually(() => refusals().length === 2, 10_000)).toBe(true);
    expect(refusals()[1].msg).toContain(
      'models is missing: a reload keeps serving the running models rather than fall back to the default stub',
    );

    expect(await modelNames(url)).toEqual(['production']);
    expect(await answer(url, 'production', 'still here')).toMatchObject({ status: 200, content: 'still here' });
    expect(lines().some((line) => line.msg.startsWith('Configuration reloaded'))).toBe(false);
  }, 30_000);

  it('--watch-config during a truncate-then-write: the file is read again until it is whole, and the stub never serves', async () => {
    const file = writeConfig('models:\n  - { name: production, engine: stub }\n');
    const cli = startCli(['--config', file, '--port', '0', '--watch-config']);
    const url = await cli.listening;
    const lines = () => logLinesOf(cli.output().stdout);

    // Truncated: the watcher sees it and reads it again, waiting for the rest.
    writeFileSync(file, '');
    expect(
      await eventually(
        () => lines().some((line) => line.msg.startsWith(`Configuration file ${file} looks unfinished`)),
        10_000,
      ),
    ).toBe(true);
    writeFileSync(file, 'models:\n  - { name: production, engine: stub }\n  - { name: canary, engine: stub }\n');
    expect(await eventually(async () => (await modelNames(url)).join() === 'production,canary', 10_000)).toBe(true);
    expect(await answer(url, 'canary', 'whole')).toMatchObject({ status: 200, content: 'whole' });
    const reloads = () =>
      lines()
        .filter((line) => line.msg.startsWith('Configuration reloaded'))
        .map((line) => line.msg);
    expect(
      await eventually(() => reloads().includes(`Configuration reloaded from ${file}: models added canary.`), 5_000),
    ).toBe(true);
    expect(reloads().every((line) => !line.includes('stub') && !line.includes('removed'))).toBe(true);
  }, 30_000);
  it('SIGHUP: API keys, their tenants and limits apply to new requests at once', async () => {
    const file = writeConfig(
      'responses: { store: off }\nauth:\n  apiKeys:\n    - { name: team-a, key: sk-a, models: [echo] }\nmodels:\n  - { name: echo, engine: stub }\n  - { name: other, engine: stub }\n',
    );
    const cli = startCli(['--config', file, '--port', '0']);
    const url = await cli.listening;
    const ask = (key: string, model: string) =>
      fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      }).then(async (response) => ({ status: response.status, code: (await readJson(response)).error?.code }));
    expect(await ask('sk-a', 'other')).toMatchObject({ status: 404 });
    expect(await ask('sk-b', 'echo')).toMatchObject({ status: 401 });

    writeFileSync(
      file,
      'responses: { store: off }\nauth:\n  apiKeys:\n    - { name: team-a, key: sk-a, limits: { requestsPerMinute: 1 } }\n    - { name: team-b, key: sk-b }\n' +
        'models:\n  - { name: echo, engine: stub }\n  - { name: other, engine: stub }\n',
    );
    cli.child.kill('SIGHUP');
    expect(await eventually(async () => (await ask('sk-b', 'echo')).status === 200, 10_000)).toBe(true);
    // team-a may use every model now, once a minute.
    expect(await ask('sk-a', 'other')).toMatchObject({ status: 200 });
    expect(await ask('sk-a', 'other')).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    const reloaded = `Configuration reloaded from ${file}: no model changed. Also applied: auth.apiKeys.`;
    expect(
      await eventually(() => logLinesOf(cli.output().stdout).some((line) => line.msg === reloaded), 5_000),
      cli.output().stdout,
    ).toBe(true);
    expect(
      logLinesOf(cli.output().stdout).some((line) =>
        line.msg.startsWith('These changed keys take effect only after a restart'),
      ),
    ).toBe(false);
    expect(cli.output().stdout).not.toContain('sk-b');
  });

  it('--watch-config applies a file that changed, without a signal', async () => {
    const file = writeConfig('models:\n  - { name: before, engine: stub }\n');
    const cli = startCli(['--config', file, '--port', '0', '--watch-config']);
    const url = await cli.listening;
    writeFileSync(file, 'models:\n  - { name: before, engine: stub }\n  - { name: after, engine: stub }\n');
    expect(await eventually(async () => (await modelNames(url)).includes('after'), 10_000)).toBe(true);
    expect(await answer(url, 'after', 'watched')).toMatchObject({ status: 200, content: 'watched' });
  });

  it('--watch-config needs a file', async () => {
    const cli = startCli(['--watch-config', '--port', '0']);
    expect(await cli.exited).toBe(1);
    expect(cli.output().stderr).toContain('--watch-config needs a configuration file (--config FILE or GANTRY_CONFIG)');
  });
});
