import { BARE_PROXY, DIRECT, GANTRY_HTTP, GANTRY_STUB, type BenchResults } from './bench-results.js';
import type { UpstreamWrites } from './gateway-configs.js';
import { agentOverBare } from './agent-report.js';
import { tenantRatios } from './tenants-report.js';

/** One target of issue 8, as measured: `met` is undefined for figures that are reported, not judged. */
export interface TargetCheck {
  name: string;
  goal: string;
  measured: string;
  value?: number;
  met?: boolean;
}

const KB = 1024;

/** The targets (docs/benchmarks.md), checked against a run's results; unmeasured ones are left out. */
export function checkTargets(results: BenchResults): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const atLeast = (name: string, goal: number, value: number | undefined, unit = 'x') =>
    value !== undefined &&
    checks.push({ name, goal: `>= ${goal}${unit}`, measured: `${value.toFixed(2)}${unit}`, value, met: value >= goal });
  const below = (name: string, goal: number, value: number | undefined, unit: string, digits = 2) =>
    value !== undefined &&
    checks.push({
      name,
      goal: `< ${goal} ${unit}`,
      measured: `${value.toFixed(digits)} ${unit}`,
      value,
      met: value < goal,
    });

  const atMostRatio = (name: string, goal: number, value: number | undefined) =>
    value !== undefined &&
    Number.isFinite(value) &&
    checks.push({ name, goal: `<= ${goal}x`, measured: `${value.toFixed(2)}x`, value, met: value <= goal });
  const overBare = (value: number | undefined, bare: number | undefined) =>
    value === undefined || bare === undefined || bare === 0 ? undefined : value / bare;

  const throughput = results.throughput ?? [];
  const maxStreams = Math.max(0, ...throughput.map((row) => row.streams));
  const at = (label: string, writes: UpstreamWrites = 'bursts') =>
    throughput.find(
      (row) => row.target === label && row.streams === maxStreams && (row.upstreamWrites ?? 'bursts') === writes,
    );
  const directStreaming = at(DIRECT);
  const httpStreaming = at(GANTRY_HTTP);
  if (directStreaming && httpStreaming) {
    atLeast(
      `streaming chunks/s, HTTP engine vs direct, ${maxStreams} streams`,
      0.7,
      httpStreaming.chunksPerSecond / directStreaming.chunksPerSecond,
    );
    const micros = httpStreaming.cpu.gatewayMicrosPerUnit;
    if (micros !== undefined) {
      checks.push({
        name: `gateway CPU per streamed chunk, HTTP engine, ${maxStreams} streams`,
        goal: 'report (nginx 7-12, Portkey 20-23)',
        measured: `${micros.toFixed(1)} µs`,
        value: micros,
      });
    }
  }
  // The cost of a token over the floor a Node gateway starts from: the bare proxy, in the same rounds.
  for (const [writes, goal] of [
    ['per-token', 1.15],
    ['bursts', 1.3],
  ] as const) {
    const what = writes === 'per-token' ? 'the upstream writing one chunk per token' : 'the upstream writing in bursts';
    atMostRatio(
      `gateway CPU per streamed chunk vs bare proxy, HTTP engine, ${maxStreams} streams, ${what}`,
      goal,
      overBare(at(GANTRY_HTTP, writes)?.cpu.gatewayMicrosPerUnit, at(BARE_PROXY, writes)?.cpu.gatewayMicrosPerUnit),
    );
  }

  const latency = results.latency ?? [];
  const directLatency = latency.find((row) => row.target === DIRECT);
  const httpLatency = latency.find((row) => row.target === GANTRY_HTTP);
  if (directLatency && httpLatency) {
    const streams = httpLatency.streams;
    const added = (gateway?: number, baseline?: number) =>
      gateway === undefined || baseline === undefined ? undefined : gateway - baseline;
    below(
      `added inter-chunk gap p99, ${streams} streams`,
      2,
      added(httpLatency.interChunk.p99, directLatency.interChunk.p99),
      'ms',
    );
    below(
      `added time to first token p50, ${streams} streams`,
      1,
      added(httpLatency.ttft.p50, directLatency.ttft.p50),
      'ms',
    );
  }

  for (const idle of results.idle ?? []) {
    const engine = idle.target === GANTRY_STUB ? 'stub' : 'HTTP';
    const limitKb = idle.target === GANTRY_STUB ? 24 : 32;
    below(
      `idle RSS per stream, ${engine} engine, ${idle.opened} streams`,
      limitKb,
      idle.gatewayRssPerStreamBytes / KB,
      'KB',
      1,
    );
    checks.push({
      name: `idle stream errors, ${engine} engine`,
      goal: '0',
      measured: String(idle.errors),
      value: idle.errors,
      met: idle.errors === 0 && idle.opened === idle.streams,
    });
    below(`heartbeat lateness p99, ${engine} engine`, 50, idle.heartbeats.lateness.p99, 'ms', 1);
  }

  const nonStreaming = results.nonStreaming ?? [];
  const directJson = nonStreaming.find((row) => row.target === DIRECT);
  const httpJson = nonStreaming.find((row) => row.target === GANTRY_HTTP);
  if (directJson && httpJson) {
    atLeast(
      `non-streaming requests/s, HTTP engine vs direct, ${httpJson.concurrency} concurrent`,
      0.6,
      httpJson.requestsPerSecond / directJson.requestsPerSecond,
    );
  }
  const bareJson = nonStreaming.find((row) => row.target === BARE_PROXY);
  if (httpJson && bareJson) {
    atMostRatio(
      `gateway CPU per non-streaming request vs bare proxy, HTTP engine, ${httpJson.concurrency} concurrent`,
      1.5,
      overBare(httpJson.cpu.gatewayMicrosPerUnit, bareJson.cpu.gatewayMicrosPerUnit),
    );
  }

  if (results.agent) {
    const concurrency = results.agent[0]?.concurrency;
    atMostRatio(
      `gateway CPU per agent turn vs bare proxy, HTTP engine, ${concurrency} concurrent`,
      1.5,
      agentOverBare(results.agent),
    );
  }

  const multiTurn = results.multiTurn?.results ?? [];
  const balanced = multiTurn.find((row) => row.routing === 'least-outstanding');
  const affinity = multiTurn.find((row) => row.routing === 'prefix-affinity');
  if (balanced && affinity) {
    const ratioOf = (value?: number, baseline?: number) =>
      value === undefined || baseline === undefined || baseline === 0 ? undefined : value / baseline;
    const atMost = (name: string, goal: number, value: number | undefined) =>
      value !== undefined &&
      checks.push({ name, goal: `<= ${goal}x`, measured: `${value.toFixed(2)}x`, value, met: value <= goal });
    atMost(
      'follow-up TTFT mean, prefix-affinity vs least-outstanding',
      0.5,
      ratioOf(affinity.followUpTtft.mean, balanced.followUpTtft.mean),
    );
    atMost(
      'follow-up TTFT p50, prefix-affinity vs least-outstanding',
      0.5,
      ratioOf(affinity.followUpTtft.p50, balanced.followUpTtft.p50),
    );
    atMost('largest replica share over the mean, prefix-affinity', 1.5, affinity.maxShareOverMean);
    for (const other of multiTurn.filter((row) => row.routing.startsWith('prefix-affinity c='))) {
      const ratio = ratioOf(other.followUpTtft.mean, balanced.followUpTtft.mean);
      if (ratio === undefined) continue;
      checks.push({
        name: `follow-up TTFT mean, ${other.routing} vs least-outstanding`,
        goal: 'report',
        measured: `${ratio.toFixed(2)}x`,
        value: ratio,
      });
    }
  }

  if (results.observability) {
    for (const on of results.observability.on) {
      const off = results.observability.off.find((row) => row.target === on.target);
      if (!off) continue;
      const ratio = on.chunksPerSecond / off.chunksPerSecond;
      checks.push({
        name: `metrics+tracing on/off chunks/s, ${on.target}`,
        goal: 'report',
        measured: `${ratio.toFixed(2)}x`,
        value: ratio,
      });
    }
  }
  const failover = results.failover;
  if (failover) {
    const errors = Object.values(failover.failures).reduce((sum, count) => sum + count, 0) + failover.wrongAnswers;
    checks.push({
      name: `streams that saw an error or a wrong answer, a replica killed every ${failover.plan.killEveryMs / 1000} s`,
      goal: '0',
      measured: String(errors),
      value: errors,
      met: errors === 0,
    });
    const gap = failover.resumeGap.p99;
    if (gap !== undefined)
      checks.push({
        name: 'gap between two tokens at a resume, p99 (mock: no prefill)',
        goal: 'report',
        measured: `${gap.toFixed(1)} ms`,
        value: gap,
      });
  }

  const workers = results.workers;
  const single = workers?.streaming.find((row) => row.load === 'paced' && row.workers === 1);
  const several = workers?.streaming.find((row) => row.load === 'paced' && row.workers > 1);
  const sideBySide = workers?.streaming.find((row) => row.load === 'side by side');
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  if (several && sideBySide) {
    // The cluster's own cost: workers against as many one-process gateways busy at the same time.
    const growth = mean(several.perWorkerMicrosPerChunk) / mean(sideBySide.perWorkerMicrosPerChunk);
    if (Number.isFinite(growth)) {
      checks.push({
        name: `CPU per chunk per worker, ${several.workers} workers vs ${sideBySide.workers} processes side by side (paced)`,
        goal: '<= 1.1x',
        measured: `${growth.toFixed(2)}x`,
        value: growth,
        met: growth <= 1.1,
      });
    }
  }
  if (single && several) {
    const growth = mean(several.perWorkerMicrosPerChunk) / single.perWorkerMicrosPerChunk[0];
    if (Number.isFinite(growth)) {
      checks.push({
        name: `CPU per chunk per worker, ${several.workers} workers vs 1 process alone (paced; the machine's share included)`,
        goal: 'report',
        measured: `${growth.toFixed(2)}x`,
        value: growth,
      });
    }
  }
  for (const coordinated of workers?.admission.filter((row) => row.admission === 'coordinated') ?? []) {
    const free = workers!.admission.find(
      (row) => row.concurrency === coordinated.concurrency && row.admission === 'free',
    );
    if (coordinated.gatewayMicrosPerRequest === undefined || free?.gatewayMicrosPerRequest === undefined) continue;
    const added = coordinated.gatewayMicrosPerRequest - free.gatewayMicrosPerRequest;
    const where = `${coordinated.workers} workers, ${coordinated.concurrency} concurrent`;
    checks.push({
      name: `coordinated admission, added CPU per request (${where})`,
      goal: 'report',
      measured: `${added.toFixed(1)} µs`,
      value: added,
    });
    if (coordinated.latency.mean !== undefined && free.latency.mean !== undefined) {
      const latency = (coordinated.latency.mean - free.latency.mean) * 1000;
      checks.push({
        name: `coordinated admission, added latency per request (${where})`,
        goal: 'report',
        measured: `${latency.toFixed(0)} µs`,
        value: latency,
      });
    }
  }
  for (const trip of workers?.roundTrips ?? []) {
    const cpu = trip.workerMicrosPerAdmission + trip.primaryMicrosPerAdmission;
    checks.push({
      name: `admission through the primary alone, CPU (worker + primary), ${trip.inFlight} in flight`,
      goal: 'report',
      measured: `${cpu.toFixed(1)} µs`,
      value: cpu,
    });
  }
  if (results.tenants) {
    for (const { order, quietVsAlone, quietVsNoisy } of tenantRatios(results.tenants)) {
      if (order === 'fair' && quietVsAlone !== undefined) {
        checks.push({
          name: 'quiet tenant mean latency under a noisy one, fair queueing, vs alone',
          goal: '<= 2x',
          measured: `${quietVsAlone.toFixed(2)}x`,
          value: quietVsAlone,
          met: quietVsAlone <= 2,
        });
      }
      if (order === 'fifo' && quietVsNoisy !== undefined) {
        checks.push({
          name: "quiet tenant mean latency under FIFO, vs the noisy tenant's",
          goal: 'report (about 1x)',
          measured: `${quietVsNoisy.toFixed(2)}x`,
          value: quietVsNoisy,
        });
      }
    }
    for (const cost of results.tenants.scheduler) {
      checks.push({
        name: `scheduler CPU per request, ${cost.order}, ${cost.waiting} waiting`,
        goal: 'report',
        measured: `${cost.microsPerRequest.toFixed(2)} µs`,
        value: cost.microsPerRequest,
      });
    }
  }
  return checks;
}
