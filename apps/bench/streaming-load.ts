import type { BenchTarget } from './bench-stack.js';
import { keepAliveAgent, postChat, streamChat, type ChatCall } from './chat-client.js';
import { MeasureWindow, runClosedLoop, type ClosedLoopPlan } from './closed-loop.js';
import { chatBody } from './gateway-configs.js';
import { coreShare, cpuMicrosPer, sampleProcess, type ProcessSample } from './proc-stats.js';
import { Samples, type SampleSummary } from './samples.js';

export interface LoadTiming {
  warmupMs: number;
  measureMs: number;
}

/** CPU of the watched processes over the window, per unit of work (µs), and in cores. */
export interface CpuCost {
  gatewayMicrosPerUnit?: number;
  upstreamMicrosPerUnit?: number;
  /** The load generator (this process): what parsing the answers costs the client. */
  clientMicrosPerUnit?: number;
  /** Gateway CPU over the window, in cores (1 = one core busy all the time). */
  gatewayCores?: number;
}

export interface StreamingResult {
  target: string;
  streams: number;
  tokensPerStream: number;
  chunksPerSecond: number;
  tokensPerSecond: number;
  requestsCompleted: number;
  /** Per streamed chunk. */
  cpu: CpuCost;
  failures: Record<string, number>;
}

const REQUEST_TIMEOUT_MS = 60_000;

/** Streaming throughput: chunks and tokens per second received by `streams` closed-loop clients. */
export async function measureStreaming(target: BenchTarget, streams: number, tokens: number, timing: LoadTiming): Promise<StreamingResult> {
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
    () => sample(target),
    window,
  );
  close();
  const seconds = window.durationMs / 1000;
  return {
    target: target.label,
    streams,
    tokensPerStream: tokens,
    chunksPerSecond: chunks / seconds,
    tokensPerSecond: tokenFrames / seconds,
    requestsCompleted: run.completedInWindow,
    cpu: cpuCost(run.marks, chunks),
    failures: run.failures,
  };
}

export interface LatencyResult {
  target: string;
  streams: number;
  tokensPerStream: number;
  tokenIntervalMs: number;
  /** Time to first token: from sending the request to the first content chunk, ms. */
  ttft: SampleSummary;
  /** Gap between consecutive content chunks of one stream, ms. */
  interChunk: SampleSummary;
  failures: Record<string, number>;
}

/**
 * Latency under a paced load: `streams` clients, each stream `tokens` chunks `intervalMs` apart.
 * TTFT counts requests sent inside the window; gaps count chunks that arrived inside it.
 */
export async function measureLatency(
  target: BenchTarget,
  streams: number,
  tokens: number,
  intervalMs: number,
  timing: LoadTiming,
): Promise<LatencyResult> {
  const window = new MeasureWindow();
  const ttft = new Samples();
  const gaps = new Samples();
  const { call, close } = callFor(target, streams, chatBody(target.model, tokens, true, target.promptWords));
  const run = await runClosedLoop(
    plan(streams, timing),
    () => {
      const sentAt = performance.now();
      const timed = window.contains(sentAt);
      let lastTokenAt: number | undefined;
      return streamChat(call, {
        onFrame: (kind, at) => {
          if (kind !== 'token') return;
          if (lastTokenAt === undefined) {
            if (timed) ttft.add(at - sentAt);
          } else if (window.contains(at)) {
            gaps.add(at - lastTokenAt);
          }
          lastTokenAt = at;
        },
      });
    },
    () => undefined,
    window,
  );
  close();
  return {
    target: target.label,
    streams,
    tokensPerStream: tokens,
    tokenIntervalMs: intervalMs,
    ttft: ttft.summary(),
    interChunk: gaps.summary(),
    failures: run.failures,
  };
}

export interface NonStreamingResult {
  target: string;
  concurrency: number;
  tokensPerAnswer: number;
  requestsPerSecond: number;
  /** Per request. */
  cpu: CpuCost;
  failures: Record<string, number>;
}

/** Non-streaming requests per second with `concurrency` closed-loop clients. */
export async function measureNonStreaming(
  target: BenchTarget,
  concurrency: number,
  tokens: number,
  timing: LoadTiming,
): Promise<NonStreamingResult> {
  const { call, close } = callFor(target, concurrency, chatBody(target.model, tokens, false, target.promptWords));
  const run = await runClosedLoop(plan(concurrency, timing), () => postChat(call), () => sample(target));
  close();
  return {
    target: target.label,
    concurrency,
    tokensPerAnswer: tokens,
    requestsPerSecond: run.completedInWindow / (run.window.durationMs / 1000),
    cpu: cpuCost(run.marks, run.completedInWindow),
    failures: run.failures,
  };
}

function plan(concurrency: number, timing: LoadTiming): ClosedLoopPlan {
  return {
    concurrency,
    warmupMs: timing.warmupMs,
    measureMs: timing.measureMs,
    // A generous cap: no configuration of this machine comes near 200,000 requests a second.
    maxRequests: Math.ceil(((timing.warmupMs + timing.measureMs) / 1000) * 200_000),
    drainMs: 5_000,
  };
}

function callFor(target: BenchTarget, concurrency: number, body: string): { call: ChatCall; close: () => void } {
  const agent = keepAliveAgent(concurrency);
  return { call: { url: target.chatUrl, agent, body, headers: target.headers, timeoutMs: REQUEST_TIMEOUT_MS }, close: () => agent.destroy() };
}

interface WindowSample {
  gateway?: ProcessSample;
  upstream?: ProcessSample;
  clientMicros: number;
}

function sample(target: BenchTarget): WindowSample {
  const { user, system } = process.cpuUsage();
  return {
    clientMicros: user + system,
    gateway: target.gatewayPid === undefined ? undefined : sampleProcess(target.gatewayPid),
    upstream: target.upstreamPid === undefined ? undefined : sampleProcess(target.upstreamPid),
  };
}

function cpuCost(marks: [unknown, unknown], units: number): CpuCost {
  const [before, after] = marks as [WindowSample | undefined, WindowSample | undefined];
  const cost: CpuCost = {};
  if (before?.gateway && after?.gateway) {
    cost.gatewayMicrosPerUnit = cpuMicrosPer(before.gateway, after.gateway, units);
    cost.gatewayCores = coreShare(before.gateway, after.gateway);
  }
  if (before?.upstream && after?.upstream) cost.upstreamMicrosPerUnit = cpuMicrosPer(before.upstream, after.upstream, units);
  if (before && after && units > 0) cost.clientMicrosPerUnit = (after.clientMicros - before.clientMicros) / units;
  return cost;
}
