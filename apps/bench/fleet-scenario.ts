import type { BenchStack } from './bench-stack.js';
import { chatUrlOf } from './bench-stack.js';
import { keepAliveAgent, streamChat, type ChatCall } from './chat-client.js';
import type { ChildServer } from './child-server.js';
import { delay } from './closed-loop.js';
import { gatewayConfig } from './gateway-configs.js';
import { Samples, type SampleSummary } from './samples.js';

/** How one answer is paced on the mock fleet: its tokens, `intervalMs` apart (its decode time). */
interface Answer {
  tokens: number;
  intervalMs: number;
}

export interface FleetPlan {
  /** Replicas that schedule like vLLM: `maxRunning` at once, the rest waiting in arrival order. */
  maxRunning: number;
  /** One of three replicas swamped from outside Gantry, then requests through each routing. */
  swamped: { outsideStreams: number; outside: Answer; requests: number; concurrency: number; answer: Answer };
  /** Two Gantry instances on two replicas: a noisy tenant's burst through one, a quiet tenant through the other. */
  tenants: {
    maxRunning: number;
    noisyRequests: number;
    noisy: Answer;
    quietRequests: number;
    /** The quiet tenant's first question comes this long after the burst (which has reached the replicas by then). */
    quietDelayMs: number;
    quietThinkMs: number;
    quiet: Answer;
  };
  /** Readings of each replica's metrics, for the load-aware models. */
  metricsIntervalMs: number;
}

export interface FleetRow {
  routing: string;
  /** Time to the first token through Gantry, ms. */
  firstToken: SampleSummary;
  failures: number;
}

export interface FleetTenantsRow {
  routing: string;
  quiet: SampleSummary;
  noisy: SampleSummary;
  failures: number;
}

export interface FleetResults {
  plan: FleetPlan;
  swamped: FleetRow[];
  tenants: FleetTenantsRow[];
}

const ROUTINGS = ['least-outstanding', 'prefix-affinity', 'load-aware'] as const;
const KEYS = { noisy: 'sk-bench-noisy', quiet: 'sk-bench-quiet' } as const;

/**
 * The fleet's models, one per routing (the load-aware one with a saturation hold when asked); each
 * asks the mock for `answer` (a header the gateway adds to every upstream request).
 */
function fleetModels(upstreams: string[], plan: FleetPlan, answer: Answer, saturation?: Record<string, number>) {
  return ROUTINGS.map((routing) => ({
    name: routing,
    engine: 'http',
    upstreams,
    upstreamModel: 'mock-model',
    routing,
    maxQueue: 10_000,
    healthCheckIntervalMs: 0,
    headers: { 'x-mock-behaviour': behaviourOf(answer) },
    ...(routing === 'load-aware'
      ? { engineMetrics: { path: '/metrics', intervalMs: plan.metricsIntervalMs }, ...(saturation && { saturation }) }
      : {}),
  }));
}

/** One streamed request: its time to the first token (ms), or undefined when it failed. */
async function firstTokenOf(call: ChatCall): Promise<number | undefined> {
  const sent = performance.now();
  let first: number | undefined;
  const outcome = await streamChat(call, {
    onFrame: (kind, at) => {
      if (kind === 'token' && first === undefined) first = at - sent;
    },
  }).done;
  return outcome.kind === 'completed' ? first : undefined;
}

function behaviourOf(answer: Answer): string {
  return JSON.stringify({ tokens: answer.tokens, tokenIntervalMs: answer.intervalMs });
}

function callOf(url: URL, model: string, answer: Answer, concurrency: number, key?: string, text = 'hello'): ChatCall {
  return {
    url,
    agent: keepAliveAgent(concurrency),
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: text }] }),
    headers: { 'x-mock-behaviour': behaviourOf(answer), ...(key ? { authorization: `Bearer ${key}` } : {}) },
    timeoutMs: 120_000,
  };
}

/** Traffic Gantry does not see: `streams` answers kept in flight directly on one replica until `stop`. */
function outsideTraffic(mock: ChildServer, streams: number, answer: Answer) {
  let stopped = false;
  const call = callOf(chatUrlOf(mock.url), 'mock-model', answer, streams, undefined, 'batch job');
  const loops = Array.from({ length: streams }, async () => {
    // oxlint-disable-next-line no-unmodified-loop-condition -- set by the returned stop function
    while (!stopped) await streamChat(call).done;
  });
  return async () => {
    stopped = true;
    await Promise.all(loops);
  };
}

/** `requests` requests, `concurrency` at a time: each one's time to its first token. */
async function measure(make: () => Promise<number | undefined>, requests: number, concurrency: number) {
  const samples = new Samples();
  let failures = 0;
  let left = requests;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left > 0) {
        left -= 1;
        const ms = await make();
        if (ms === undefined) failures += 1;
        else samples.add(ms);
      }
    }),
  );
  return { samples, failures };
}

/**
 * Scheduling from the engines' own state, on mock replicas that schedule like vLLM. First, one
 * of three replicas swamped by traffic from outside Gantry: time to first token through each
 * routing. Then two Gantry instances sharing two replicas, a noisy tenant's burst through one and a
 * quiet tenant's requests through the other: the quiet tenant's wait with each routing, and with
 * `load-aware` plus `saturation: { waitingRequests: 1 }` (docs/engines.md#saturation).
 */
export async function runFleet(
  stack: BenchStack,
  plan: FleetPlan,
  progress: (line: string) => void,
): Promise<FleetResults> {
  const flags = ['--max-running', String(plan.maxRunning)];
  const mocks = await Promise.all([0, 1, 2].map((index) => stack.startMock(flags, `fleet-mock-${index}`)));
  const urls = mocks.map((mock) => mock.url.toString());
  const swamped: FleetRow[] = [];
  const gateway = await stack.startGateway(
    'fleet-swamped',
    gatewayConfig({ models: fleetModels(urls, plan, plan.swamped.answer) }),
  );
  const { outsideStreams, outside, requests, concurrency } = plan.swamped;
  for (const routing of ROUTINGS) {
    progress(`fleet: one replica swamped (${outsideStreams} outside streams), ${requests} requests via ${routing}`);
    const stop = outsideTraffic(mocks[0], outsideStreams, outside);
    // Let the outside load fill the replica and the gateway read it.
    await delay(Math.max(500, 4 * plan.metricsIntervalMs));
    const call = callOf(chatUrlOf(gateway.url), routing, plan.swamped.answer, concurrency);
    let turn = 0;
    const { samples, failures } = await measure(
      () => firstTokenOf({ ...call, body: call.body.replace('hello', `hello ${(turn += 1)}`) }),
      requests,
      concurrency,
    );
    await stop();
    swamped.push({ routing, firstToken: samples.summary(), failures });
  }
  await stack.stop(gateway);
  for (const mock of mocks) await stack.stop(mock);

  const { noisyRequests, noisy, quietRequests, quietDelayMs, quietThinkMs, quiet } = plan.tenants;
  const pairFlags = ['--max-running', String(plan.tenants.maxRunning)];
  const pairMocks = await Promise.all([0, 1].map((index) => stack.startMock(pairFlags, `fleet-pair-${index}`)));
  const pair = pairMocks.map((mock) => mock.url.toString());
  const tenants: FleetTenantsRow[] = [];
  const rows: Array<{ routing: (typeof ROUTINGS)[number]; label: string }> = [
    { routing: 'least-outstanding', label: 'least-outstanding' },
    { routing: 'prefix-affinity', label: 'prefix-affinity' },
    { routing: 'load-aware', label: 'load-aware + saturation' },
  ];
  const auth = { apiKeys: Object.entries(KEYS).map(([name, key]) => ({ name, key })) };
  const instance = (name: string, answer: Answer, saturation?: Record<string, number>) =>
    stack.startGateway(name, { ...gatewayConfig({ models: fleetModels(pair, plan, answer, saturation) }), auth });
  // One model per routing in each instance; the load-aware one holds for room.
  const saturation = { waitingRequests: 1 };
  const [noisyGateway, quietGateway] = await Promise.all([
    instance('fleet-noisy', noisy, saturation),
    instance('fleet-quiet', quiet, saturation),
  ]);
  for (const row of rows) {
    progress(`fleet: two instances, ${noisyRequests} noisy requests beside a quiet tenant, via ${row.label}`);
    const noisyCall = callOf(chatUrlOf(noisyGateway.url), row.routing, noisy, noisyRequests, KEYS.noisy);
    const burst = measure(() => firstTokenOf(noisyCall), noisyRequests, noisyRequests);
    await delay(quietDelayMs);
    const quietCall = callOf(chatUrlOf(quietGateway.url), row.routing, quiet, quietRequests, KEYS.quiet);
    // Open loop: the quiet tenant's questions arrive every quietThinkMs during the burst, whatever came of the earlier ones.
    const quietRun = (async () => {
      const samples = new Samples();
      let failures = 0;
      await Promise.all(
        Array.from({ length: quietRequests }, async (_, index) => {
          await delay(index * quietThinkMs);
          const ms = await firstTokenOf({ ...quietCall, body: quietCall.body.replace('hello', `question ${index}`) });
          if (ms === undefined) failures += 1;
          else samples.add(ms);
        }),
      );
      return { samples, failures };
    })();
    const [noisyResult, quietResult] = await Promise.all([burst, quietRun]);
    tenants.push({
      routing: row.label,
      quiet: quietResult.samples.summary(),
      noisy: noisyResult.samples.summary(),
      failures: noisyResult.failures + quietResult.failures,
    });
  }
  for (const server of [noisyGateway, quietGateway, ...pairMocks]) await stack.stop(server);
  return { plan, swamped, tenants };
}

/** Milliseconds as the report prints them. */
const msOf = (value: number | undefined) => (value === undefined ? '-' : `${Math.round(value)}`);
/** The value of one routing's row. */
const valueOf = (rows: Array<{ routing: string; value?: number }>, routing: string) =>
  rows.find((row) => row.routing === routing)?.value;
const ratioOf = (a?: number, b?: number) => (a === undefined || b === undefined || b === 0 ? '-' : (a / b).toFixed(2));

/** The scenario's section of the report: mean and p90 time to first token per routing and tenant, and the two ratios. */
export function renderFleet(results: FleetResults): string[] {
  const lines = [
    `Fleet scheduling (mock replicas running ${results.plan.maxRunning} at once, FIFO waiting; time to first token, ms)`,
    '',
    `One of three replicas swamped from outside (${results.plan.swamped.outsideStreams} streams):`,
    '| routing | requests | mean | p90 | failures |',
    '|---|---|---|---|---|',
    ...results.swamped.map(
      (row) =>
        `| ${row.routing} | ${row.firstToken.count} | ${msOf(row.firstToken.mean)} | ${msOf(row.firstToken.p90)} | ${row.failures} |`,
    ),
    '',
    `Two instances, two replicas running ${results.plan.tenants.maxRunning} each: ${results.plan.tenants.noisyRequests} noisy requests through one, a quiet tenant through the other:`,
    '| routing | quiet mean | quiet p90 | noisy mean | noisy p90 | failures |',
    '|---|---|---|---|---|---|',
    ...results.tenants.map(
      (row) =>
        `| ${row.routing} | ${msOf(row.quiet.mean)} | ${msOf(row.quiet.p90)} | ${msOf(row.noisy.mean)} | ${msOf(row.noisy.p90)} | ${row.failures} |`,
    ),
  ];
  const swampedMeans = results.swamped.map((row) => ({ routing: row.routing, value: row.firstToken.mean }));
  const quietMeans = results.tenants.map((row) => ({ routing: row.routing, value: row.quiet.mean }));
  lines.push(
    '',
    `Swamped replica: load-aware / least-outstanding mean = ${ratioOf(valueOf(swampedMeans, 'load-aware'), valueOf(swampedMeans, 'least-outstanding'))}x (goal <= 0.5x)`,
    `Quiet tenant: load-aware + saturation / least-outstanding mean = ${ratioOf(valueOf(quietMeans, 'load-aware + saturation'), valueOf(quietMeans, 'least-outstanding'))}x (goal <= 0.3x)`,
  );
  return lines;
}
