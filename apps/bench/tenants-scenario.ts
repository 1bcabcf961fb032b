import type { BenchStack, BenchTarget } from './bench-stack.js';
import { chatUrlOf } from './bench-stack.js';
import { streamChat, type ChatCall } from './chat-client.js';
import type { ChildServer } from './child-server.js';
import { delay, MeasureWindow, runClosedLoop } from './closed-loop.js';
import { chatBody, gatewayConfig } from './gateway-configs.js';
import { Samples, type SampleSummary } from './samples.js';
import { measureSchedulerCost, type SchedulerCost } from './scheduler-cost.js';
import { callFor, plan as closedLoopPlan, type LoadTiming } from './streaming-load.js';

const KEYS = { noisy: 'sk-bench-noisy', quiet: 'sk-bench-quiet' } as const;
type Tenant = keyof typeof KEYS;

export interface TenantsPlan {
  /** Streams the noisy tenant keeps in flight (closed loop). */
  noisyStreams: number;
  /** Tokens per answer (the stub echoes the prompt, `tokenIntervalMs` apart). */
  tokens: number;
  tokenIntervalMs: number;
  /** The quiet tenant sends one request at a time, this long apart. */
  quietThinkMs: number;
  /** Requests the quiet tenant sends alone first: its unloaded latency. */
  unloadedRequests: number;
  /** For each queue order in turn. */
  timing: LoadTiming;
  scheduler: { waiting: number; tenants: number; operations: number };
}

/** One tenant's requests in the window: from sending to the first token (the queue wait, mostly) and to the end. */
export interface TenantLatency {
  requests: number;
  firstToken: SampleSummary;
  latency: SampleSummary;
  /** The gateway's own mean queue wait of the tenant (gantry_tenant_queue_time_seconds), ms. */
  gatewayQueueMs?: number;
}

export interface TenantsRow {
  order: 'fifo' | 'fair';
  quiet: TenantLatency;
  noisy: TenantLatency;
  failures: Record<string, number>;
}

export interface TenantsResults {
  plan: TenantsPlan;
  /** The quiet tenant alone on the fair model. */
  unloaded: { firstToken: SampleSummary; latency: SampleSummary };
  rows: TenantsRow[];
  scheduler: SchedulerCost[];
}

/** A one-slot model, fair and FIFO: the noisy tenant's streams beside the quiet tenant's, the same engine behind both. */
function contendedModels(plan: TenantsPlan) {
  const model = { engine: 'stub', tokenIntervalMs: plan.tokenIntervalMs, maxConcurrency: 1, maxQueue: 10_000 };
  return [
    { name: 'contended-fair', ...model, queueOrder: 'fair' },
    { name: 'contended-fifo', ...model, queueOrder: 'fifo' },
  ];
}

/**
 * A noisy tenant (many streams in flight) beside a quiet one (one request at a time) on a
 * contended model, once with FIFO admission and once fair, in one gateway: the quiet tenant's
 * wait against its unloaded latency and against the noisy tenant's; then the scheduler's own
 * cost per request with 10,000 waiting.
 */
export async function runTenants(
  stack: BenchStack,
  plan: TenantsPlan,
  progress: (line: string) => void,
): Promise<TenantsResults> {
  const config = {
    ...gatewayConfig({ models: contendedModels(plan) }),
    auth: { apiKeys: (Object.keys(KEYS) as Tenant[]).map((name) => ({ name, key: KEYS[name] })) },
  };
  const gateway = await stack.startGateway('tenants', config);
  const target = (model: string, tenant: Tenant): BenchTarget => ({
    label: tenant,
    chatUrl: chatUrlOf(gateway.url),
    model,
    headers: { authorization: `Bearer ${KEYS[tenant]}` },
  });
  try {
    progress(`tenants: the quiet tenant alone, ${plan.unloadedRequests} requests`);
    const alone = { firstToken: new Samples(), latency: new Samples() };
    const { call, close } = callFor(
      target('contended-fair', 'quiet'),
      1,
      chatBody('contended-fair', plan.tokens, true),
    );
    // The first few warm the connection and the code up: not kept.
    for (let index = 0; index < plan.unloadedRequests + 3; index += 1) await timed(call, alone, () => index >= 3, {});
    close();
    const rows: TenantsRow[] = [];
    for (const order of ['fifo', 'fair'] as const) {
      progress(
        `tenants: ${plan.noisyStreams} noisy streams and a quiet client, ${order}, ${plan.timing.measureMs / 1000} s`,
      );
      rows.push(await measureOrder(gateway, order, (tenant) => target(`contended-${order}`, tenant), plan));
    }
    progress(`tenants: the scheduler alone, ${plan.scheduler.waiting} waiting`);
    const { waiting, tenants, operations } = plan.scheduler;
    const scheduler = (['fifo', 'fair'] as const).map((order) =>
      measureSchedulerCost(order, waiting, tenants, operations),
    );
    return {
      plan,
      unloaded: { firstToken: alone.firstToken.summary(), latency: alone.latency.summary() },
      rows,
      scheduler,
    };
  } finally {
    await stack.stop(gateway);
  }
}

async function measureOrder(
  gateway: ChildServer,
  order: 'fifo' | 'fair',
  targetOf: (tenant: Tenant) => BenchTarget,
  plan: TenantsPlan,
): Promise<TenantsRow> {
  const model = `contended-${order}`;
  const body = chatBody(model, plan.tokens, true);
  const window = new MeasureWindow();
  const samples = {
    quiet: { firstToken: new Samples(), latency: new Samples() },
    noisy: { firstToken: new Samples(), latency: new Samples() },
  };
  const failures: Record<string, number> = {};
  const noisy = callFor(targetOf('noisy'), plan.noisyStreams, body);
  const quiet = callFor(targetOf('quiet'), 1, body);
  const counted = (at: number) => window.contains(at);
  const quietLoop = (async () => {
    while (window.end === undefined) {
      await timed(quiet.call, samples.quiet, counted, failures);
      await delay(plan.quietThinkMs);
    }
  })();
  let queueBefore: Record<Tenant, QueueTotals> | undefined;
  let queueAfter: Record<Tenant, QueueTotals> | undefined;
  await runClosedLoop(
    closedLoopPlan(plan.noisyStreams, plan.timing),
    () => timedHandle(noisy.call, samples.noisy, counted, failures),
    (edge) =>
      void queueTotals(gateway, model).then((totals) =>
        edge === 'start' ? (queueBefore = totals) : (queueAfter = totals),
      ),
    window,
  );
  await quietLoop;
  noisy.close();
  quiet.close();
  const latencyOf = (tenant: Tenant): TenantLatency => ({
    requests: samples[tenant].latency.count,
    firstToken: samples[tenant].firstToken.summary(),
    latency: samples[tenant].latency.summary(),
    gatewayQueueMs: queueBefore && queueAfter ? meanMs(queueBefore[tenant], queueAfter[tenant]) : undefined,
  });
  return { order, quiet: latencyOf('quiet'), noisy: latencyOf('noisy'), failures };
}

/** Sends one request; records its time to the first token and to the end when `keep(sentAt)` says so. */
function timedHandle(
  call: ChatCall,
  into: { firstToken: Samples; latency: Samples },
  keep: (at: number) => boolean,
  failures: Record<string, number>,
) {
  const sent = performance.now();
  let firstToken: number | undefined;
  const handle = streamChat(call, {
    onFrame: (kind, at) => kind === 'token' && firstToken === undefined && (firstToken = at),
  });
  void handle.done.then((outcome) => {
    if (outcome.kind === 'failed') failures[outcome.reason] = (failures[outcome.reason] ?? 0) + 1;
    if (outcome.kind !== 'completed' || firstToken === undefined || !keep(sent)) return;
    into.firstToken.add(firstToken - sent);
    into.latency.add(outcome.at - sent);
  });
  return handle;
}

async function timed(
  call: ChatCall,
  into: { firstToken: Samples; latency: Samples },
  keep: (at: number) => boolean,
  failures: Record<string, number>,
): Promise<void> {
  await timedHandle(call, into, keep, failures).done;
}

interface QueueTotals {
  sum: number;
  count: number;
}

/** Each tenant's queue-time sum and count on `model`, from the gateway's /metrics. */
async function queueTotals(gateway: ChildServer, model: string): Promise<Record<Tenant, QueueTotals>> {
  const text = await (await fetch(new URL('/metrics', gateway.url))).text();
  const read = (tenant: Tenant, suffix: 'sum' | 'count') => {
    const line = text
      .split('\n')
      .find((candidate) =>
        candidate.startsWith(`gantry_tenant_queue_time_seconds_${suffix}{tenant="${tenant}",model="${model}"}`),
      );
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  return {
    quiet: { sum: read('quiet', 'sum'), count: read('quiet', 'count') },
    noisy: { sum: read('noisy', 'sum'), count: read('noisy', 'count') },
  };
}

function meanMs(before: QueueTotals, after: QueueTotals): number | undefined {
  const count = after.count - before.count;
  return count > 0 ? ((after.sum - before.sum) / count) * 1000 : undefined;
}
