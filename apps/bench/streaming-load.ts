import type { BenchTarget } from './bench-stack.js';
import { keepAliveAgent, postChat, streamChat, type ChatCall } from './chat-client.js';
import { MeasureWindow, runClosedLoop, type ClosedLoopPlan, type ClosedLoopResult } from './closed-loop.js';
import { chatBody, type UpstreamWrites } from './gateway-configs.js';
import {
  addTallies,
  cpuBetween,
  cpuCostOf,
  cpuSnapshot,
  type CpuCost,
  type CpuSnapshot,
  type Tally,
} from './load-tally.js';
import { Samples, type SampleSummary } from './samples.js';

export interface LoadTiming {
  warmupMs: number;
  measureMs: number;
  /** Spreads the clients' first requests over this long (default: half the warm-up). */
  rampMs?: number;
}

const REQUEST_TIMEOUT_MS = 60_000;

/**
 * Load with no measurement, so that a fresh process (the gateway, the mock) has compiled its hot
 * paths before it is measured, as a long-running one has.
 */
export async function warmUp(target: BenchTarget, streams: number, tokens: number, durationMs: number): Promise<void> {
  const { call, close } = callFor(target, streams, chatBody(target.model, tokens, true, target.promptWords));
  await runClosedLoop({ ...plan(streams, { warmupMs: durationMs, measureMs: 0 }), rampMs: 0 }, () => streamChat(call));
  close();
}

/** One window of streaming load: chunks and tokens received by `streams` closed-loop clients. */
export async function streamingRound(
  target: BenchTarget,
  streams: number,
  tokens: number,
  timing: LoadTiming,
): Promise<Tally> {
  const window = new MeasureWindow();
  let chunks = 0;
  let tokenFrames = 0;
  const { call, close } = callFor(target, streams, chatBody(target.model, tokens, true, target.promptWords));
  const run = await runClosedLoop(
    plan(streams, timing),
    () =>
      streamChat(call, {
        onFrame: (kind, at) => {
          if (kind === 'done' || !window.contains(at)) return;
          chunks += 1;
          if (kind === 'token') tokenFrames += 1;
        },
      }),
    () => cpuSnapshot(target),
    window,
  );
  close();
  return tallyOf(run, chunks, tokenFrames);
}

export interface StreamingResult {
  target: string;
  /** How the mock wrote the chunks (throughput scenario; absent elsewhere, and for the stub). */
  upstreamWrites?: UpstreamWrites;
  streams: number;
  tokensPerStream: number;
  /** Windows measured, interleaved with the other targets' (their sums make the figures). */
  rounds: number;
  chunksPerSecond: number;
  tokensPerSecond: number;
  requestsCompleted: number;
  /** Per streamed chunk. */
  cpu: CpuCost;
  failures: Record<string, number>;
}

export function streamingResult(
  target: string,
  streams: number,
  tokens: number,
  rounds: readonly Tally[],
  upstreamWrites?: UpstreamWrites,
): StreamingResult {
  const sum = addTallies(rounds);
  const seconds = sum.windowMs / 1000;
  return {
    target,
    ...(upstreamWrites !== undefined ? { upstreamWrites } : {}),
    streams,
    tokensPerStream: tokens,
    rounds: rounds.length,
    chunksPerSecond: sum.units / seconds,
    tokensPerSecond: sum.tokens / seconds,
    requestsCompleted: sum.requests,
    cpu: cpuCostOf(sum),
    failures: sum.failures,
  };
}

/** Streaming throughput in one window. */
export async function measureStreaming(
  target: BenchTarget,
  streams: number,
  tokens: number,
  timing: LoadTiming,
): Promise<StreamingResult> {
  return streamingResult(target.label, streams, tokens, [await streamingRound(target, streams, tokens, timing)]);
}

export interface LatencySamples {
  /** Time to first token: from sending the request to the first content chunk, ms. */
  ttft: Samples;
  /** Gap between consecutive content chunks of one stream, ms. */
  gaps: Samples;
}

/**
 * One window of paced load: `streams` clients, each stream `tokens` chunks `intervalMs` apart,
 * their first requests spread over one stream's length. TTFT counts requests sent inside the
 * window; gaps count chunks that arrived inside it.
 */
export async function latencyRound(
  target: BenchTarget,
  streams: number,
  tokens: number,
  intervalMs: number,
  timing: LoadTiming,
  samples: LatencySamples,
): Promise<Tally> {
  const window = new MeasureWindow();
  let chunks = 0;
  const { call, close } = callFor(target, streams, chatBody(target.model, tokens, true, target.promptWords));
  const run = await runClosedLoop(
    plan(streams, { ...timing, rampMs: tokens * intervalMs }),
    () => {
      const sentAt = performance.now();
      const timed = window.contains(sentAt);
      let lastTokenAt: number | undefined;
      return streamChat(call, {
        onFrame: (kind, at) => {
          if (kind !== 'token') return;
          if (lastTokenAt === undefined) {
            if (timed) samples.ttft.add(at - sentAt);
          } else if (window.contains(at)) {
            samples.gaps.add(at - lastTokenAt);
            chunks += 1;
          }
          lastTokenAt = at;
        },
      });
    },
    () => cpuSnapshot(target),
    window,
  );
  close();
  return tallyOf(run, chunks, chunks);
}

export interface LatencyResult {
  target: string;
  streams: number;
  tokensPerStream: number;
  tokenIntervalMs: number;
  rounds: number;
  ttft: SampleSummary;
  interChunk: SampleSummary;
  cpu: CpuCost;
  failures: Record<string, number>;
}

export function latencyResult(
  target: string,
  shape: { streams: number; tokens: number; intervalMs: number },
  samples: LatencySamples,
  rounds: readonly Tally[],
): LatencyResult {
  const sum = addTallies(rounds);
  return {
    target,
    streams: shape.streams,
    tokensPerStream: shape.tokens,
    tokenIntervalMs: shape.intervalMs,
    rounds: rounds.length,
    ttft: samples.ttft.summary(),
    interChunk: samples.gaps.summary(),
    cpu: cpuCostOf(sum),
    failures: sum.failures,
  };
}

/** One window of non-streaming load with `concurrency` closed-loop clients. */
export async function nonStreamingRound(
  target: BenchTarget,
  concurrency: number,
  tokens: number,
  timing: LoadTiming,
): Promise<Tally> {
  const { call, close } = callFor(target, concurrency, chatBody(target.model, tokens, false, target.promptWords));
  const run = await runClosedLoop(
    plan(concurrency, timing),
    () => postChat(call),
    () => cpuSnapshot(target),
  );
  close();
  return tallyOf(run, run.completedInWindow, 0);
}

export interface NonStreamingResult {
  target: string;
  concurrency: number;
  tokensPerAnswer: number;
  rounds: number;
  requestsPerSecond: number;
  /** Per request. */
  cpu: CpuCost;
  failures: Record<string, number>;
}

export function nonStreamingResult(
  target: string,
  concurrency: number,
  tokens: number,
  rounds: readonly Tally[],
): NonStreamingResult {
  const sum = addTallies(rounds);
  return {
    target,
    concurrency,
    tokensPerAnswer: tokens,
    rounds: rounds.length,
    requestsPerSecond: sum.units / (sum.windowMs / 1000),
    cpu: cpuCostOf(sum),
    failures: sum.failures,
  };
}

export function tallyOf(run: ClosedLoopResult, units: number, tokens: number): Tally {
  const [before, after] = run.marks as [CpuSnapshot, CpuSnapshot];
  return {
    windowMs: run.window.durationMs,
    units,
    tokens,
    requests: run.completedInWindow,
    failures: run.failures,
    ...cpuBetween(before, after),
  };
}

/** A closed-loop plan for `concurrency` clients with this timing. */
export function plan(concurrency: number, timing: LoadTiming): ClosedLoopPlan {
  return {
    concurrency,
    warmupMs: timing.warmupMs,
    measureMs: timing.measureMs,
    rampMs: Math.min(timing.rampMs ?? timing.warmupMs / 2, timing.warmupMs),
    // A generous cap: no configuration of this machine comes near 200,000 requests a second.
    maxRequests: Math.ceil(((timing.warmupMs + timing.measureMs) / 1000) * 200_000),
    drainMs: 5_000,
  };
}

/** A request to `target` and a keep-alive agent of `concurrency` sockets for it; `close` destroys the agent. */
export function callFor(target: BenchTarget, concurrency: number, body: string): { call: ChatCall; close: () => void } {
  const agent = keepAliveAgent(concurrency);
  return {
    call: { url: target.chatUrl, agent, body, headers: target.headers, timeoutMs: REQUEST_TIMEOUT_MS },
    close: () => agent.destroy(),
  };
}
