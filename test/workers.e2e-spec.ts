import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLinesOf, startCli, writeConfig, type CliProcess } from './support/cli-process.js';
import { postStream, unpooledAgent, type StreamOutcome } from './support/http-stream.js';
import { parsePrometheus, valueOf } from './support/prometheus.js';
import { CHAT } from './support/protocol-streams.js';
import { openChatStream, words } from './support/open-stream.js';
import { admissionOrder } from './support/tenant-streams.js';
import { eventually as pollUntil } from './support/gateway.js';

const WORKER_HEADER = 'x-gantry-worker';

/** One exchange on a connection of its own (the cluster hands connections to its workers in turn). */
function exchange(
  base: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  worker: number;
  json: any;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request(new URL(path, base), {
      method: payload ? 'POST' : 'GET',
      agent: false,
      headers: {
        ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
        ...headers,
      },
    });
    req.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({
          status: response.statusCode ?? 0,
          worker: Number(response.headers[WORKER_HEADER]),
          json,
          text,
          headers: response.headers,
        });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const chat = (model: string, text: string) => ({ model, messages: [{ role: 'user', content: text }] });
const workerOf = (outcome: StreamOutcome) => Number(outcome.headers[WORKER_HEADER]);

/** Workers start, restart and reload slower than one process: a longer wait by default. */
const eventually = (condition: () => boolean | Promise<boolean>, timeoutMs = 15_000) => pollUntil(condition, timeoutMs);

/** Sends `body` on fresh connections until `accept` held for an answer from each of `count` workers. */
async function fromEveryWorker(
  base: string,
  path: string,
  body: unknown,
  count: number,
  accept: (answer: Awaited<ReturnType<typeof exchange>>) => boolean,
) {
  const seen = new Map<number, Awaited<ReturnType<typeof exchange>>>();
  const done = await eventually(async () => {
    const answer = await exchange(base, path, body);
    if (accept(answer)) seen.set(answer.worker, answer);
    return seen.size >= count;
  });
  return { done, workers: [...seen.keys()] };
}

const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * A plugin with an `APP_PIPE`, which reaches Nest's routes but not the generation routes: each
 * worker's start finds it, and the instance names it once. Nest resolves from the folder's
 * `node_modules` (the repository's), as a plugin installed beside Gantry would.
 */
function pipePlugin(): string {
  const folder = mkdtempSync(join(tmpdir(), 'gantry-pipe-plugin-'));
  symlinkSync(join(import.meta.dirname, '..', 'node_modules'), join(folder, 'node_modules'), 'dir');
  writeFileSync(
    join(folder, 'pipe-plugin.mjs'),
    `import { Module } from '@nestjs/common';
import { APP_PIPE } from '@nestjs/core';
export class PassThroughPipe { transform(value) { return value; } }
export default class PipePlugin {}
Module({ providers: [{ provide: APP_PIPE, useClass: PassThroughPipe }] })(PipePlugin);
`,
  );
  return join(folder, 'pipe-plugin.mjs');
}

const BASE_CONFIG = `server: { workers: 2, reloadTimeoutMs: 2000 }
keepalive: { intervalMs: 100 }
plugins: [${JSON.stringify(pipePlugin())}]
models:
  - { name: echo, engine: stub }
  - { name: limited, engine: stub, maxConcurrency: 2, maxQueue: 0, tokenIntervalMs: 20 }
  - { name: single, engine: stub, maxConcurrency: 1, maxQueue: 1, tokenIntervalMs: 20 }
  - { name: slow, engine: stub, tokenIntervalMs: 100 }
`;

describe('server.workers: 2 (a primary and two workers on one port)', () => {
  let file: string;
  let cli: CliProcess;
  let url: string;
  const logs = () => logLinesOf(cli.output().stdout);

  beforeAll(async () => {
    file = writeConfig(BASE_CONFIG);
    cli = startCli(['--config', file, '--port', '0']);
    url = await cli.listening;
  }, 60_000);

  afterAll(() => {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  });

  it('announces the instance once, with its workers, when both listen', () => {
    expect(
      cli
        .output()
        .stdout.split('\n')
        .filter((line) => line.startsWith('Gantry listening')),
    ).toEqual([
      `Gantry listening on ${url} — models: echo (stub), limited (stub), single (stub), slow (stub) — workers: 2`,
    ]);
  });

  it('holds maxConcurrency for the instance: of 8 concurrent streams spread over both workers, exactly 2 are admitted, the rest get a real 429', async () => {
    const agent = unpooledAgent();
    let answered = 0;
    const prompt = words(2_000);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () =>
        postStream(url, CHAT.path, CHAT.body('limited', prompt), {
          agent,
          onResponse: () => (answered += 1),
          // The admitted ones stream until every request was answered, then hang up.
          onFrame: () => answered === 8,
          timeoutMs: 60_000,
        }),
      ),
    );
    expect(outcomes.map((outcome) => outcome.status).sort((a, b) => a - b)).toEqual([
      200, 200, 429, 429, 429, 429, 429, 429,
    ]);
    expect(new Set(outcomes.map(workerOf)).size).toBe(2);
    const refusal = outcomes.find((outcome) => outcome.status === 429)!;
    expect(JSON.parse(refusal.body)).toMatchObject({ error: { code: 'queue_full' } });
    expect(refusal.headers['retry-after']).toBe('1');
    expect(refusal.frames).toEqual([]);
    // The slots came back when the admitted streams hung up.
    expect(
      await eventually(async () => (await exchange(url, CHAT.path, chat('limited', 'again'))).status === 200),
    ).toBe(true);
  });

  it("queues across workers: a queued stream opens at its first keep-alive and gets its worker's keep-alives, and its hang-up leaves the instance's queue at once", async () => {
    const agent = unpooledAgent();
    let release = false;
    let holding = false;
    const holder = postStream(url, CHAT.path, CHAT.body('single', words(2_000)), {
      agent,
      onFrame: (frame) => {
        if (CHAT.isContent(frame)) holding = true;
        return release;
      },
      timeoutMs: 60_000,
    });
    expect(await eventually(() => holding)).toBe(true);
    let heartbeats = 0;
    const sent = Date.now();
    let headAfterMs = 0;
    const waiter = await postStream(url, CHAT.path, CHAT.body('single', 'waiting'), {
      agent,
      onResponse: () => (headAfterMs = Date.now() - sent),
      // Hangs up after two keep-alives: it is queued, behind the holder, and nothing else came.
      onFrame: (frame) => CHAT.isHeartbeat(frame) && (heartbeats += 1) === 2,
      timeoutMs: 30_000,
    });
    expect(waiter.status).toBe(200);
    // Its head waited for the first keep-alive (intervalMs: 100; a timer may fire a millisecond early), then left with it.
    expect(headAfterMs).toBeGreaterThanOrEqual(95);
    expect(JSON.parse((waiter.frames[0] as { data: string }).data).choices[0].delta).toEqual({
      role: 'assistant',
      content: '',
    });
    expect(waiter.frames.length).toBe(3);
    expect(waiter.frames.slice(1).every((frame) => CHAT.isHeartbeat(frame))).toBe(true);
    expect(waiter.end).toBe('client');
    // Its place in the queue (of one) is free again, whichever worker asks (each leaves it at its first frame).
    const queuedOn = new Set<number>();
    expect(
      await eventually(async () => {
        const queued = await postStream(url, CHAT.path, CHAT.body('single', 'next'), {
          agent,
          onFrame: () => true,
          timeoutMs: 10_000,
        });
        // A 429 while the previous one's hang-up is still on its way to the primary: ask again.
        if (queued.status === 200) queuedOn.add(workerOf(queued));
        return queuedOn.size === 2;
      }),
    ).toBe(true);
    release = true;
    await holder;
  });

  it("answers GET /metrics for the instance on whichever worker: every worker's series summed", async () => {
    const before = valueOf(parsePrometheus((await exchange(url, '/metrics')).text), 'gantry_requests_total', {
      model: 'echo',
      outcome: 'completed',
    });
    const served = new Map<number, number>();
    let sent = 0;
    expect(
      await eventually(async () => {
        const answer = await exchange(url, '/v1/chat/completions', chat('echo', 'count me'));
        expect(answer.status).toBe(200);
        sent += 1;
        served.set(answer.worker, (served.get(answer.worker) ?? 0) + 1);
        return served.size === 2 && sent >= 6;
      }),
    ).toBe(true);
    const scrapes = await fromEveryWorker(url, '/metrics', undefined, 2, (answer) => answer.status === 200);
    expect(scrapes.done).toBe(true);
    for (let index = 0; index < 2; index += 1) {
      const samples = parsePrometheus((await exchange(url, '/metrics')).text);
      expect(valueOf(samples, 'gantry_requests_total', { model: 'echo', outcome: 'completed' }) - before).toBe(sent);
      expect(valueOf(samples, 'gantry_workers')).toBe(2);
    }
  });

  it('SIGHUP: a model added while a stream is open answers on every worker, and the stream completes where it started', async () => {
    const prompt = words(80);
    const { outcome: stream, ended: streamEnded } = await openChatStream(url, 'slow', prompt);

    writeFileSync(file, `${BASE_CONFIG}  - { name: fresh, engine: stub }\n`);
    cli.child.kill('SIGHUP');
    const fresh = await fromEveryWorker(
      url,
      '/v1/chat/completions',
      chat('fresh', 'new here'),
      2,
      (answer) => answer.status === 200,
    );
    expect(fresh.done).toBe(true);
    // Seen while the stream (8 s of output) was still open.
    expect(streamEnded()).toBe(false);

    const outcome = await stream;
    expect(outcome.end).toBe('server');
    expect(CHAT.endedWell(outcome.frames)).toBe(true);
    expect(outcome.frames.map(CHAT.contentOf).join('')).toBe(prompt);
    expect(
      await eventually(() =>
        logs().some(
          (line) => line.msg === `Configuration reloaded from ${file} on 2 of 2 workers: models added fresh.`,
        ),
      ),
    ).toBe(true);
  }, 40_000);

  it('SIGHUP with an invalid file: refused with the messages a start gives, and every worker keeps the running models', async () => {
    writeFileSync(file, `${BASE_CONFIG}  - { name: bad, engine: stub, prefillMs: -5 }\n`);
    cli.child.kill('SIGHUP');
    const refused = `Configuration reload refused; the running configuration stays. Invalid configuration (${file}):\n  - models[4].prefillMs must not be less than 0`;
    expect(await eventually(() => logs().some((line) => line.msg === refused && line.level === 50))).toBe(true);
    const listed = await fromEveryWorker(url, '/v1/models', undefined, 2, (answer) => answer.status === 200);
    expect(listed.done).toBe(true);
    for (let index = 0; index < 4; index += 1) {
      const models = (await exchange(url, '/v1/models')).json.data.map((model: { id: string }) => model.id);
      expect(models).toEqual(['echo', 'limited', 'single', 'slow', 'fresh']);
    }
  });

  it('SIGHUP with a stopped worker: the reload waits for it no longer than server.reloadTimeoutMs, names it, and it applies the file once it runs again', async () => {
    const [stopped] = (await fromEveryWorker(url, '/v1/models', undefined, 2, (answer) => answer.status === 200))
      .workers;
    process.kill(stopped, 'SIGSTOP');
    try {
      writeFileSync(file, `${BASE_CONFIG}  - { name: fresh, engine: stub }\n  - { name: later, engine: stub }\n`);
      cli.child.kill('SIGHUP');
      const named = (line: { level: number; msg: string }) =>
        line.level === 50 && line.msg.startsWith(`Worker ${stopped} did not answer the reload within 2000 ms`);
      expect(await eventually(() => logs().some(named))).toBe(true);
      expect(
        await eventually(() =>
          logs().some(
            (line) => line.msg === `Configuration reloaded from ${file} on 1 of 2 workers: models added later.`,
          ),
        ),
      ).toBe(true);
    } finally {
      process.kill(stopped, 'SIGCONT');
    }
    expect(
      await eventually(() => logs().some((line) => line.msg.startsWith(`Worker ${stopped} applied the configuration`))),
    ).toBe(true);
    const served = await fromEveryWorker(
      url,
      '/v1/chat/completions',
      chat('later', 'here too'),
      2,
      (answer) => answer.status === 200,
    );
    expect(served.done).toBe(true);
  }, 40_000);

  it('restarts a killed worker: its streams end, its admission slots come back at once, a new worker serves', async () => {
    const agent = unpooledAgent();
    let release = false;
    const holderWorkers: number[] = [];
    const holders = Array.from({ length: 2 }, () =>
      postStream(url, CHAT.path, CHAT.body('limited', words(2_000)), {
        agent,
        onResponse: (status, headers) => holderWorkers.push(Number(headers[WORKER_HEADER])),
        onFrame: () => release,
        timeoutMs: 60_000,
      }),
    );
    expect(await eventually(() => holderWorkers.length === 2)).toBe(true);
    // Both slots are taken: the instance refuses more.
    expect((await exchange(url, CHAT.path, chat('limited', 'full?'))).status).toBe(429);
    const victim = holderWorkers[0];

    process.kill(victim, 'SIGKILL');
    expect(await eventually(() => !processAlive(victim))).toBe(true);
    // The slot the dead worker held came back: a request is admitted again.
    expect(
      await eventually(async () => (await exchange(url, CHAT.path, chat('limited', 'room again'))).status === 200),
    ).toBe(true);
    release = true;
    const ended = await Promise.all(holders);
    // The client of the stream on the dead worker sees its connection close mid-stream.
    const onVictim = ended.filter((outcome) => workerOf(outcome) === victim);
    expect(onVictim.length).toBeGreaterThan(0);
    for (const outcome of onVictim) expect(outcome.end).toBe('error');

    const after = await fromEveryWorker(
      url,
      '/v1/models',
      undefined,
      2,
      (answer) => answer.status === 200 && answer.worker !== victim,
    );
    expect(after.done).toBe(true);
    expect(after.workers).not.toContain(victim);
    expect(
      logs().some((line) => line.level === 40 && line.msg.startsWith(`Worker ${victim} exited (signal SIGKILL)`)),
    ).toBe(true);
    expect(
      await eventually(
        async () => valueOf(parsePrometheus((await exchange(url, '/metrics')).text), 'gantry_workers') === 2,
      ),
    ).toBe(true);
  }, 60_000);

  it('SIGTERM: every worker drains (an open stream finishes), then the primary exits 0', async () => {
    const workers = (await fromEveryWorker(url, '/v1/models', undefined, 2, (answer) => answer.status === 200)).workers;
    const prompt = words(10);
    const { outcome: stream } = await openChatStream(url, 'slow', prompt);
    cli.child.kill('SIGTERM');
    const outcome = await stream;
    expect(outcome.end).toBe('server');
    expect(outcome.frames.map(CHAT.contentOf).join('')).toBe(prompt);
    expect(await cli.exited).toBe(0);
    expect(workers.every((pid) => !processAlive(pid))).toBe(true);
  });

  it("names the plugin's APP_PIPE, which the generation routes do not run, once for the instance (not once per worker, nor again for a restarted one)", () => {
    // Read after the exit: every worker's log has been flushed.
    const warnings = logs().filter((line) => line.level === 40 && line.msg.startsWith('These Nest enhancers reach'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].msg).toContain('APP_PIPE PassThroughPipe');
  });
});

describe('per-key limits with store: memory and two workers', () => {
  it('counts each key once for the instance: concurrent streams and requests per minute', async () => {
    const file = writeConfig(
      'server: { workers: 2 }\nauth: { apiKeys: [sk-one, sk-two], limits: { requestsPerMinute: 3, concurrentStreams: 2 } }\n' +
        'models:\n  - { name: echo, engine: stub }\n  - { name: slow, engine: stub, tokenIntervalMs: 20 }\n',
    );
    const cli = startCli(['--config', file, '--port', '0']);
    try {
      const url = await cli.listening;
      const one = { authorization: 'Bearer sk-one' };
      const holderWorkers: number[] = [];
      let release = false;
      const holders = Array.from({ length: 2 }, () =>
        postStream(url, CHAT.path, CHAT.body('slow', words(2_000)), {
          agent: unpooledAgent(),
          headers: one,
          onResponse: (_status, headers) => holderWorkers.push(Number(headers[WORKER_HEADER])),
          onFrame: () => release,
          timeoutMs: 60_000,
        }),
      );
      expect(await eventually(() => holderWorkers.length === 2)).toBe(true);
      // The key's third request of the minute is refused on either worker, by the streams both hold together.
      const refused = await exchange(url, CHAT.path, chat('echo', 'a'), one);
      expect([refused.status, refused.json.error.code]).toEqual([429, 'concurrency_limit_exceeded']);
      expect(holderWorkers.filter((worker) => worker === refused.worker).length).toBeLessThan(2);
      release = true;
      await Promise.all(holders);

      // Another key, one request after the other, the workers taking turns: the fourth of the minute is refused.
      const two = { authorization: 'Bearer sk-two' };
      const answers = [];
      for (let index = 0; index < 4; index += 1) answers.push(await exchange(url, CHAT.path, chat('echo', 'b'), two));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
      expect(answers[3].json.error.code).toBe('rate_limit_exceeded');
      expect(new Set(answers.map((answer) => answer.worker)).size).toBe(2);
    } finally {
      cli.child.kill('SIGKILL');
    }
  });
});

describe('tenants with two workers', () => {
  // A short keep-alive: a queued stream's head leaves at its first beat, which tells the test it waits.
  const TENANTS_CONFIG = `server: { workers: 2 }
keepalive: { intervalMs: 100 }
auth:
  apiKeys:
    - { name: noisy, key: sk-noisy }
    - { name: quiet, key: sk-quiet }
    - { name: metered, key: sk-metered, limits: { tokensPerMinute: 300 } }
models:
  - { name: echo, engine: stub }
  - { name: contended, engine: stub, maxConcurrency: 1, maxQueue: 20, tokenIntervalMs: 25 }
`;
  let file: string;
  let cli: CliProcess;
  let url: string;

  beforeAll(async () => {
    file = writeConfig(TENANTS_CONFIG);
    cli = startCli(['--config', file, '--port', '0']);
    url = await cli.listening;
  }, 60_000);

  afterAll(() => {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  });

  it("orders the instance's one queue fairly, whichever worker each stream reached: the quiet tenant goes ahead of the noisy one's queue", async () => {
    const noisy = Array.from({ length: 5 }, (_, index) => ({ name: `noisy-${index}`, key: 'sk-noisy' }));
    const order = await admissionOrder(url, 'contended', noisy, [{ name: 'quiet', key: 'sk-quiet' }]);
    expect(order.indexOf('quiet'), order.join(' ')).toBeLessThanOrEqual(2);
    expect(order.filter((name) => name !== 'quiet')).toEqual(noisy.map((stream) => stream.name));
  });

  it('counts a token budget once for the instance: spent over both workers, then refused on both', async () => {
    const metered = { authorization: 'Bearer sk-metered' };
    const answers: Array<Awaited<ReturnType<typeof exchange>>> = [];
    const refusedOn = new Set<number>();
    while (refusedOn.size < 2 && answers.length < 60) {
      const answer = await exchange(url, CHAT.path, chat('echo', words(20)), metered);
      answers.push(answer);
      if (answer.status !== 429) continue;
      expect(answer.json.error).toMatchObject({ type: 'rate_limit_error', code: 'token_limit_exceeded' });
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(50);
      refusedOn.add(answer.worker);
    }
    expect(refusedOn.size).toBe(2);
    const served = answers.filter((answer) => answer.status === 200);
    expect(answers.every((answer) => answer.status === 200 || answer.status === 429)).toBe(true);
    expect(new Set(served.map((answer) => answer.worker)).size).toBe(2);
    // One budget of 300 tokens for the instance, reserved in the primary: as many requests as it
    // takes to spend it (the last ones cut to what is left); a budget per worker would have served
    // twice as many.
    const perRequest = served[0].json.usage.total_tokens as number;
    const toSpend = Math.ceil(300 / perRequest);
    expect(served.length).toBeGreaterThanOrEqual(toSpend - 1);
    expect(served.length).toBeLessThanOrEqual(toSpend);
  });

  it('SIGHUP: new keys and limits apply on every worker', async () => {
    writeFileSync(
      file,
      TENANTS_CONFIG.replace('tokensPerMinute: 300', 'tokensPerMinute: 1000000').replace(
        '    - { name: metered',
        '    - { name: newcomer, key: sk-newcomer, priority: 1 }\n    - { name: metered',
      ),
    );
    cli.child.kill('SIGHUP');
    const served = new Set<number>();
    expect(
      await eventually(async () => {
        const [newcomer, metered] = await Promise.all([
          exchange(url, CHAT.path, chat('echo', 'hello'), { authorization: 'Bearer sk-newcomer' }),
          exchange(url, CHAT.path, chat('echo', 'again'), { authorization: 'Bearer sk-metered' }),
        ]);
        if (newcomer.status === 200 && metered.status === 200) served.add(newcomer.worker).add(metered.worker);
        return served.size === 2;
      }),
    ).toBe(true);
    const reloaded = `Configuration reloaded from ${file} on 2 of 2 workers: no model changed. Also applied: auth.apiKeys.`;
    expect(await eventually(() => logLinesOf(cli.output().stdout).some((line) => line.msg === reloaded))).toBe(true);
  });
});

describe('server.workers with models the workers refuse (the primary knows no engine kind)', () => {
  it('a llama model is refused at start, saying why, once', async () => {
    const file = writeConfig(
      'server: { workers: 2 }\nmodels:\n  - { name: local, engine: llama, modelPath: ./m.gguf, threads: 1 }\n',
    );
    const cli = startCli(['--config', file, '--port', '0']);
    expect(await cli.exited).toBe(1);
    const { stderr } = cli.output();
    expect(stderr).toContain(
      "models: 'local' runs on the llama engine, which loads the model into each worker process",
    );
    expect(stderr.match(/Invalid configuration/g)).toHaveLength(1);
  }, 60_000);

  it('an unknown engine kind is refused at start, naming the kinds there are', async () => {
    const file = writeConfig(
      'server: { workers: 2 }\nmodels:\n  - { name: echo, engine: stub }\n  - { name: odd, engine: gpt }\n',
    );
    const cli = startCli(['--config', file, '--port', '0']);
    expect(await cli.exited).toBe(1);
    expect(cli.output().stderr.trim()).toBe(
      `Invalid configuration (${file}):\n  - models[1].engine must be one of: stub, http, llama (got "gpt")`,
    );
  }, 60_000);
});

/**
 * A plugin engine kind whose engine cannot start in the instance's second worker (as one needing
 * a device that process lacks): a reload that adds one of its models is refused there alone.
 */
function flakyKindPlugin(): string {
  const folder = mkdtempSync(join(tmpdir(), 'gantry-flaky-plugin-'));
  symlinkSync(join(import.meta.dirname, '..', 'node_modules'), join(folder, 'node_modules'), 'dir');
  const entry = JSON.stringify(join(import.meta.dirname, '..', 'dist', 'src', 'index.js'));
  writeFileSync(
    join(folder, 'flaky-kind.mjs'),
    `import cluster from 'node:cluster';
import { Module } from '@nestjs/common';
import { EMPTY } from 'rxjs';
import { EngineKind, InferenceEngine } from ${entry};
class QuietEngine extends InferenceEngine { generate() { return EMPTY; } }
export class FlakyKind {
  create() {
    if (cluster.worker?.id === 2) throw new Error('no device in this process');
    return new QuietEngine();
  }
}
EngineKind('flaky')(FlakyKind);
export default class FlakyPlugin {}
Module({ providers: [FlakyKind] })(FlakyPlugin);
`,
  );
  return join(folder, 'flaky-kind.mjs');
}

describe('a reload one worker refuses while the others apply it', () => {
  it('names the worker and replaces it, so that every worker serves the configuration the others applied', async () => {
    const config = `server: { workers: 2 }\nplugins: [${JSON.stringify(flakyKindPlugin())}]\nmodels:\n  - { name: echo, engine: stub }\n`;
    const file = writeConfig(config);
    const cli = startCli(['--config', file, '--port', '0']);
    try {
      const url = await cli.listening;
      const logs = () => logLinesOf(cli.output().stdout);
      writeFileSync(file, `${config}  - { name: odd, engine: flaky }\n`);
      cli.child.kill('SIGHUP');
      const refusal = (line: { level: number; msg: string }) =>
        line.level === 50 &&
        /^Worker \d+ refused the configuration the other workers applied; it is replaced by one that runs it\. The engine of model 'odd' could not start: no device in this process/.test(
          line.msg,
        );
      expect(await eventually(() => logs().some(refusal)), cli.output().stdout).toBe(true);
      // The worker started in its place runs the new models: both workers list them.
      const lists = (answer: Awaited<ReturnType<typeof exchange>>) =>
        answer.status === 200 &&
        (answer.json as { data: Array<{ id: string }> }).data.some((model) => model.id === 'odd');
      expect((await fromEveryWorker(url, '/v1/models', undefined, 2, lists)).done).toBe(true);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
  }, 60_000);
});

describe('a SIGTERM while the workers start', () => {
  it('drains them as they come up: nothing is served, and the primary exits 0', async () => {
    const file = writeConfig(
      'server: { workers: 2 }\nshutdown: { drainMs: 500 }\nmodels:\n  - { name: echo, engine: stub }\n',
    );
    const cli = startCli(['--config', file, '--port', '0']);
    // Both workers forked, still loading the gateway (a drain sent now reaches no listener).
    const pid = cli.child.pid!;
    const forked = () => {
      try {
        return (
          readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).length >= 2
        );
      } catch {
        return false;
      }
    };
    expect(await eventually(forked, 15_000)).toBe(true);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(cli.output().stdout).not.toContain('Gantry listening');
  }, 40_000);
});
