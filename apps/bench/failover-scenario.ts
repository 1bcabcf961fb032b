import { readFileSync } from 'node:fs';
import type { BenchStack } from './bench-stack.js';
import { chatUrlOf } from './bench-stack.js';
import { keepAliveAgent, streamChat, type RequestHandle } from './chat-client.js';
import type { ChildServer } from './child-server.js';
import { delay, runClosedLoop } from './closed-loop.js';
import { chatBody, gatewayConfig, promptOfWords } from './gateway-configs.js';
import { percentile, type SampleSummary } from './samples.js';

const MODEL = 'fleet';

/** Streaming load on a fleet of mock replicas, one of which is killed every few seconds. */
export interface FailoverPlan {
  replicas: number;
  /** Streams kept in flight (a closed loop). */
  streams: number;
  /** Tokens per answer, `tokenIntervalMs` apart: each answer lasts tokens × interval. */
  tokens: number;
  tokenIntervalMs: number;
  /** Load before the first kill, unmeasured by the kills (connections, JIT). */
  warmupMs: number;
  /**
   * How long the kills go on; one replica is killed every `killEveryMs` (in turn) and started
   * again `downMs` later (a replica still starting when its turn comes is waited for).
   */
  durationMs: number;
  killEveryMs: number;
  downMs: number;
}

export interface FailoverResults {
  plan: FailoverPlan;
  kills: number;
  started: number;
  /** Streams that ended with `[DONE]` and no error. */
  completed: number;
  /** Streams that saw an error (in-band, a status, a broken connection), by reason: the target is none. */
  failures: Record<string, number>;
  /** Completed streams whose text is not the whole answer one healthy replica gives. */
  wrongAnswers: number;
  /** The gateway's `gantry_stream_resumes_total` and `gantry_stream_resume_failures_total` over the run. */
  resumes: number;
  resumeFailures: number;
  /**
   * The gap a resume puts between two tokens, ms: in each stream the gateway's request log says
   * was resumed (by its `x-request-id`), its largest gaps, one per resume.
   */
  resumeGap: SampleSummary;
  /** Every other gap between two tokens, ms. */
  tokenGap: SampleSummary;
}

/**
 * Kills replicas under streaming load through the HTTP engine's mid-stream failover. Each replica
 * is a mock process; killing one (SIGTERM then SIGKILL at once) cuts every answer it was giving,
 * which the gateway continues on another replica; the killed one comes back on its port
 * `downMs` later. The client checks each answer against the one a healthy replica gives.
 */
export async function runFailover(
  stack: BenchStack,
  plan: FailoverPlan,
  progress: (line: string) => void,
): Promise<FailoverResults> {
  const mockFlags = ['--token-interval-ms', String(plan.tokenIntervalMs)];
  const replicas: ChildServer[] = [];
  for (let index = 0; index < plan.replicas; index += 1)
    replicas.push(await stack.startMock(mockFlags, `failover-mock-${index}`));
  const ports = replicas.map((replica) => replica.url.port);
  const model = {
    name: MODEL,
    engine: 'http',
    upstreams: replicas.map((replica) => new URL('/v1', replica.url).toString()),
    healthCheckIntervalMs: 250,
    maxFailures: 1,
    ejectionBaseMs: 1000,
  };
  const gateway = await stack.startGateway('failover', gatewayConfig({ models: [model] }));
  const metrics = () => failoverCounters(gateway.url);
  const before = await metrics();

  const expected = promptOfWords(plan.tokens);
  /** Each stream's gaps between two tokens, by request id. */
  const gapsByRequest = new Map<string, number[]>();
  let wrongAnswers = 0;
  const agent = keepAliveAgent(plan.streams);
  const call = { url: chatUrlOf(gateway.url), agent, body: chatBody(MODEL, plan.tokens, true), timeoutMs: 60_000 };
  const start = (): RequestHandle => {
    let text = '';
    let lastTokenAt: number | undefined;
    const gaps: number[] = [];
    const handle = streamChat(call, {
      onOpen: (_at, headers) => gapsByRequest.set(String(headers['x-request-id']), gaps),
      onFrame: (kind, at, data) => {
        if (kind !== 'token') return;
        if (lastTokenAt !== undefined) gaps.push(at - lastTokenAt);
        lastTokenAt = at;
        text +=
          (JSON.parse(data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '';
      },
    });
    return {
      abort: handle.abort,
      done: handle.done.then((outcome) => {
        if (outcome.kind === 'completed' && text !== expected) wrongAnswers += 1;
        return outcome;
      }),
    };
  };

  let kills = 0;
  let killing = true;
  const restarts: Array<Promise<void>> = replicas.map(() => Promise.resolve());
  const killer = (async () => {
    let next = performance.now() + plan.warmupMs;
    for (;;) {
      next += plan.killEveryMs;
      await delay(Math.max(0, next - performance.now()));
      if (!killing) break;
      const index = kills % replicas.length;
      await restarts[index];
      kills += 1;
      progress(`failover: killing replica ${index + 1} of ${replicas.length} (kill ${kills})`);
      await stack.stop(replicas[index], 0);
      restarts[index] = delay(plan.downMs).then(async () => {
        replicas[index] = await stack.startMock([...mockFlags, '--port', ports[index]], `failover-mock-${index}`);
      });
    }
    await Promise.all(restarts);
  })();
  progress(
    `failover: ${plan.streams} streams of ${plan.tokens} tokens over ${plan.replicas} replicas, one killed every ${plan.killEveryMs / 1000} s for ${plan.durationMs / 1000} s`,
  );
  let completed = 0;
  const run = await runClosedLoop(
    {
      concurrency: plan.streams,
      warmupMs: plan.warmupMs,
      measureMs: plan.durationMs,
      rampMs: plan.warmupMs / 2,
      maxRequests: Number.MAX_SAFE_INTEGER,
      drainMs: 10_000,
    },
    () => {
      const handle = start();
      void handle.done.then((outcome) => outcome.kind === 'completed' && (completed += 1));
      return handle;
    },
  );
  killing = false;
  await killer;
  agent.destroy();
  const after = await metrics();
  await stack.stop(gateway);
  for (const replica of replicas) await stack.stop(replica);

  const resumedRequests = resumesByRequest(gateway.logPath);
  const resumeGaps: number[] = [];
  const tokenGaps: number[] = [];
  for (const [requestId, gaps] of gapsByRequest) {
    const ascending = gaps.sort((a, b) => a - b);
    const cut = Math.max(0, ascending.length - (resumedRequests.get(requestId) ?? 0));
    tokenGaps.push(...ascending.slice(0, cut));
    resumeGaps.push(...ascending.slice(cut));
  }
  return {
    plan,
    kills,
    started: run.started,
    completed,
    failures: run.failures,
    wrongAnswers,
    resumes: after.resumes - before.resumes,
    resumeFailures: after.resumeFailures - before.resumeFailures,
    resumeGap: summaryOf(resumeGaps.sort((a, b) => a - b)),
    tokenGap: summaryOf(tokenGaps.sort((a, b) => a - b)),
  };
}

/** Resumes by request id, from the `resumes` of the gateway's request log lines (JSON, one per request). */
function resumesByRequest(logPath: string): Map<string, number> {
  const resumed = new Map<string, number>();
  for (const line of readFileSync(logPath, 'utf8').split('\n')) {
    if (!line.includes('"resumes"')) continue;
    try {
      const entry = JSON.parse(line) as { requestId?: string; resumes?: number };
      if (entry.requestId && entry.resumes) resumed.set(entry.requestId, entry.resumes);
    } catch {
      // Not a JSON line (a crash trace): nothing to read.
    }
  }
  return resumed;
}

/** Percentiles of ascending values. */
function summaryOf(sorted: number[]): SampleSummary {
  if (sorted.length === 0) return { count: 0 };
  return {
    count: sorted.length,
    mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1],
  };
}

/** The gateway's failover counters for the model, summed over replicas and reasons. */
async function failoverCounters(base: URL): Promise<{ resumes: number; resumeFailures: number }> {
  const text = await (await fetch(new URL('/metrics', base))).text();
  const sum = (metric: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${metric}{`) && line.includes(`model="${MODEL}"`))
      .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  return { resumes: sum('gantry_stream_resumes_total'), resumeFailures: sum('gantry_stream_resume_failures_total') };
}
