import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLinesOf, startCli, writeConfig, type CliProcess } from './support/cli-process.js';
import { postStream, unpooledAgent } from './support/http-stream.js';
import { CHAT } from './support/protocol-streams.js';
import { words } from './support/open-stream.js';
import { admissionOrder } from './support/tenant-streams.js';
import { chat, eventually, exchange, WORKER_HEADER } from './support/cluster-exchange.js';

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
