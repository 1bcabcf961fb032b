import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { GANTRY_HTTP, GANTRY_STUB } from './bench-results.js';
import { chatUrlOf, type BenchStack, type BenchTarget } from './bench-stack.js';
import { keepAliveAgent, type ChatCall, type RequestHandle } from './chat-client.js';
import type { ChildServer } from './child-server.js';
import { MeasureWindow, runClosedLoop } from './closed-loop.js';
import { gatewayConfig } from './gateway-configs.js';
import { interleave } from './interleave.js';
import { cpuBetween, cpuSnapshot, type CpuSnapshot, type Tally } from './load-tally.js';
import { loopbackUrl } from './loopback.js';
import { sampleProcess } from './proc-stats.js';
import type { ResponseStoreMemory } from './response-store-memory.js';
import { responsesBody, streamResponses, type StoreMode } from './responses-client.js';
import { plan, streamingResult, type LoadTiming, type StreamingResult } from './streaming-load.js';

export interface StoredResponsesPlan {
  streams: number;
  tokens: number;
  engines: Array<'stub' | 'http'>;
  /**
   * Also a `background: true` row per engine, on a second gateway: the events a background run
   * keeps (~260 per response here) would otherwise fill the first gateway's heap and weigh on
   * the rows compared.
   */
  background: boolean;
  /**
   * `store: true` responses kept (stub engine) before the first window, so that the store is
   * measured as a busy gateway's is, at its bound; at most `prefillMaxMs` of it.
   */
  prefillResponses: number;
  prefillMaxMs: number;
  rounds: number;
  timing: LoadTiming;
  /** Sizes of the heap measurement of the memory store (response-store-memory.ts). */
  memory: { responses: number; events: number };
}

export interface StoredResponsesRow extends StreamingResult {
  engine: 'stub' | 'http';
  mode: StoreMode;
  /**
   * Whether the row's last completed response was found by `GET /v1/responses/{id}` after the
   * rounds: proof that `store` did (on, background) or did not (off) keep it.
   */
  lastKept?: boolean;
}

export interface StoredResponsesResults {
  streams: number;
  tokensPerStream: number;
  rounds: number;
  /** The foreground gateway's `responses.maxStoredResponses`. */
  maxStoredResponses: number;
  /** `store: true` responses the foreground gateway kept before its first window. */
  prefilled: number;
  /** Responses each gateway's store was given over the run (warm-up, prefill, windows). */
  kept: { foreground: number; background: number };
  /** Each gateway's RSS once it was ready, and once the rounds ended. */
  gatewayRssBytes: Record<'started' | 'ended', { foreground: number; background?: number }>;
  rows: StoredResponsesRow[];
  /** Heap per stored response and per kept event of the memory store, measured in a child process. */
  memory: ResponseStoreMemory | { error: string };
}

/** The memory store's bound on responses, written out in the bench's config (it is the default). */
const MAX_STORED_RESPONSES = 10_000;
const REQUEST_TIMEOUT_MS = 60_000;

interface ResponsesTarget extends BenchTarget {
  engine: 'stub' | 'http';
  mode: StoreMode;
  responsesUrl: URL;
  gateway: GatewayTally;
  /** The id of the last response that completed. */
  lastId?: string;
}

/** Responses a gateway's store was given, over every phase. */
interface GatewayTally {
  kept: number;
}

/**
 * The cost of keeping Responses: `POST /v1/responses` streams with `store: false` and with
 * `store: true` (the default) on the same gateway (`responses.store: memory`, its store filled to
 * its bound first), the rounds taking turns, on the stub and the HTTP engine; optionally
 * `background: true` streams on a second gateway; and the memory store's heap per response and
 * per kept event.
 */
export async function runStoredResponses(
  stack: BenchStack,
  fleet: { models: Array<Record<string, unknown>>; mockPid: number },
  plan: StoredResponsesPlan,
  gatewayWarmupMs: number,
  progress: (line: string) => void,
): Promise<StoredResponsesResults> {
  const config = {
    ...gatewayConfig({ models: fleet.models }),
    responses: { store: 'memory', maxStoredResponses: MAX_STORED_RESPONSES },
  };
  const [foreground, background] = await Promise.all([
    stack.startGateway('stored-responses', config),
    plan.background ? stack.startGateway('stored-responses-background', config) : undefined,
  ]);
  const rss = () => ({
    foreground: sampleProcess(foreground.pid).rssBytes,
    ...(background ? { background: sampleProcess(background.pid).rssBytes } : {}),
  });
  const started = rss();
  const foregroundTally: GatewayTally = { kept: 0 };
  const backgroundTally: GatewayTally = { kept: 0 };
  const targetOf = (
    gateway: ChildServer,
    tally: GatewayTally,
    engine: 'stub' | 'http',
    mode: StoreMode,
  ): ResponsesTarget => ({
    label: engine === 'http' ? GANTRY_HTTP : GANTRY_STUB,
    chatUrl: chatUrlOf(gateway.url),
    responsesUrl: loopbackUrl(new URL('/v1/responses', gateway.url).toString()),
    model: engine === 'http' ? 'mock' : 'stub',
    gatewayPid: gateway.pid,
    upstreamPid: engine === 'http' ? fleet.mockPid : undefined,
    engine,
    mode,
    gateway: tally,
  });
  const targets = plan.engines.flatMap((engine) => [
    targetOf(foreground, foregroundTally, engine, 'off'),
    targetOf(foreground, foregroundTally, engine, 'on'),
    ...(background ? [targetOf(background, backgroundTally, engine, 'background')] : []),
  ]);

  progress(`stored-responses: warming up fresh gateways for ${gatewayWarmupMs / 1000} s`);
  // Both gateways at once, each target of a gateway in turn: nothing is measured yet.
  const warm = async (subset: ResponsesTarget[]) => {
    for (const target of subset)
      await load(target, plan.streams, plan.tokens, {
        warmupMs: gatewayWarmupMs / subset.length,
        measureMs: 0,
        rampMs: 0,
      });
  };
  await Promise.all([
    warm(targets.filter((target) => target.mode !== 'background')),
    warm(targets.filter((target) => target.mode === 'background')),
  ]);
  const filler =
    targets.find((target) => target.mode === 'on' && target.engine === 'stub') ??
    targets.find((target) => target.mode === 'on')!;
  progress(
    `stored-responses: keeping ${plan.prefillResponses} responses first (at most ${plan.prefillMaxMs / 1000} s)`,
  );
  const prefilled = await prefill(filler, plan.streams, plan.tokens, plan.prefillResponses, plan.prefillMaxMs);

  progress(
    `stored-responses: ${plan.streams} streams, ${targets.map((target) => `${target.engine} ${target.mode}`).join(' / ')}, ${plan.rounds} round(s)`,
  );
  const tallies = await interleave(targets, plan.rounds, (target) =>
    load(target, plan.streams, plan.tokens, plan.timing),
  );
  const rows: StoredResponsesRow[] = [];
  for (const [index, target] of targets.entries()) {
    rows.push({
      ...streamingResult(target.label, plan.streams, plan.tokens, tallies[index]),
      engine: target.engine,
      mode: target.mode,
      lastKept: target.lastId === undefined ? undefined : await isKept(target.responsesUrl, target.lastId),
    });
  }
  const gatewayRssBytes = { started, ended: rss() };
  await stack.stop(foreground);
  if (background) await stack.stop(background);

  progress('stored-responses: heap of the memory store (node --expose-gc, a child process)');
  const memory = await measureStoreMemory(stack.root, plan.memory);
  return {
    streams: plan.streams,
    tokensPerStream: plan.tokens,
    rounds: plan.rounds,
    maxStoredResponses: MAX_STORED_RESPONSES,
    prefilled,
    kept: { foreground: foregroundTally.kept, background: backgroundTally.kept },
    gatewayRssBytes,
    rows,
    memory,
  };
}

/**
 * One window (or, with `measureMs: 0`, a warm-up) of `streams` closed-loop clients: text deltas
 * received inside the window, and the CPU of the gateway (and the mock) over it.
 */
async function load(target: ResponsesTarget, streams: number, tokens: number, timing: LoadTiming): Promise<Tally> {
  const window = new MeasureWindow();
  let deltas = 0;
  const onDelta = (at: number) => {
    if (window.contains(at)) deltas += 1;
  };
  const { call, close } = callFor(target, streams, tokens);
  const run = await runClosedLoop(
    plan(streams, timing),
    () => send(target, call, onDelta),
    () => cpuSnapshot(target),
    window,
  );
  close();
  const [before, after] = run.marks as [CpuSnapshot | undefined, CpuSnapshot | undefined];
  const cpu = before && after ? cpuBetween(before, after) : { clientCpuSeconds: 0, machineCpuSeconds: 0 };
  return {
    windowMs: run.window.durationMs,
    units: deltas,
    tokens: deltas,
    requests: run.completedInWindow,
    failures: run.failures,
    ...cpu,
  };
}

/** `store: true` streams until `count` were kept or `maxMs` passed; returns how many were kept. */
async function prefill(
  target: ResponsesTarget,
  streams: number,
  tokens: number,
  count: number,
  maxMs: number,
): Promise<number> {
  const deadline = performance.now() + maxMs;
  const { call, close } = callFor(target, streams, tokens);
  let started = 0;
  let kept = 0;
  const worker = async () => {
    while (started < count && performance.now() < deadline) {
      started += 1;
      if ((await send(target, call).done).kind === 'completed') kept += 1;
    }
  };
  await Promise.all(Array.from({ length: streams }, worker));
  close();
  return kept;
}

/** Sends one request of the target's mode; a completed one is counted as kept when its mode keeps it. */
function send(target: ResponsesTarget, call: ChatCall, onDelta?: (at: number) => void): RequestHandle {
  let id: string | undefined;
  const handle = streamResponses(call, { onDelta, onId: (value) => (id = value) });
  void handle.done.then((outcome) => {
    if (outcome.kind !== 'completed') return;
    target.lastId = id;
    if (target.mode !== 'off') target.gateway.kept += 1;
  });
  return handle;
}

async function isKept(responsesUrl: URL, id: string): Promise<boolean> {
  const response = await fetch(new URL(`${responsesUrl.pathname}/${id}`, responsesUrl));
  await response.arrayBuffer();
  return response.status === 200;
}

function callFor(target: ResponsesTarget, streams: number, tokens: number): { call: ChatCall; close: () => void } {
  const agent = keepAliveAgent(streams);
  const body = responsesBody(target.model, tokens, target.mode);
  return {
    call: { url: target.responsesUrl, agent, body, timeoutMs: REQUEST_TIMEOUT_MS },
    close: () => agent.destroy(),
  };
}

/** measureResponseStoreMemory needs `--expose-gc` and a heap of its own: it runs in a child `node`. */
async function measureStoreMemory(
  root: string,
  sizes: { responses: number; events: number },
): Promise<ResponseStoreMemory | { error: string }> {
  const module = pathToFileURL(join(root, 'dist/apps/bench/response-store-memory.js')).href;
  const script =
    `const { measureResponseStoreMemory } = await import(${JSON.stringify(module)});\n` +
    `process.stdout.write(JSON.stringify(await measureResponseStoreMemory(${JSON.stringify(sizes)})));`;
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--input-type=module', '-e', script],
      { cwd: root, timeout: 120_000 },
    );
    return JSON.parse(stdout) as ResponseStoreMemory;
  } catch (error) {
    return { error: (error as Error).message.split('\n')[0] };
  }
}
