import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLinesOf, startCli, writeConfig, type CliProcess } from './support/cli-process.js';
import { postStream, unpooledAgent } from './support/http-stream.js';
import { parsePrometheus, valueOf } from './support/prometheus.js';
import { CHAT } from './support/protocol-streams.js';
import { openChatStream, words } from './support/open-stream.js';
import {
  chat,
  eventually,
  exchange,
  fromEveryWorker,
  processAlive,
  WORKER_HEADER,
  workerOf,
} from './support/cluster-exchange.js';

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
