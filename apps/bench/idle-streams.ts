import type { BenchTarget } from './bench-stack.js';
import { keepAliveAgent, streamChat, type RequestHandle } from './chat-client.js';
import { delay, MeasureWindow } from './closed-loop.js';
import { chatBody } from './gateway-configs.js';
import { coreShare, sampleProcess, type ProcessSample } from './proc-stats.js';
import { Samples, type SampleSummary } from './samples.js';

export interface IdlePlan {
  streams: number;
  /** How long all streams are held open once they are. */
  holdMs: number;
  /** The gateway's `keepalive.intervalMs`: the cadence heartbeats are expected at. */
  keepaliveMs: number;
  /** New streams per second while opening (a burst of thousands would overflow the listen backlog). */
  openPerSecond: number;
  /** Opening gives up after this long; streams not open by then count as errors. */
  openTimeoutMs: number;
  /** Streams opened and closed first, so that one-time costs (code, pools) are not counted per stream. */
  warmStreams: number;
  /** Pause after the warm-up streams closed, before the memory baseline is read. */
  settleMs: number;
}

export interface IdleResult {
  target: string;
  streams: number;
  opened: number;
  openMs: number;
  holdMs: number;
  gatewayRssBeforeBytes: number;
  gatewayRssAfterBytes: number;
  /** (gateway RSS at the end of the hold − before opening) / streams opened. */
  gatewayRssPerStreamBytes: number;
  /** The same for the upstream mock (a bare node:http server holding SSE streams), when involved. */
  upstreamRssPerStreamBytes?: number;
  /** Gateway CPU during the hold, in cores. */
  gatewayCores: number;
  heartbeats: {
    delivered: number;
    /** Streams × hold / interval. */
    expected: number;
    /** How much later than one interval after the previous frame each heartbeat arrived, ms. */
    lateness: SampleSummary;
  };
  errors: number;
  failures: Record<string, number>;
}

/**
 * Many streams in a long prefill, held open: what each costs the gateway in memory and CPU, and
 * whether its heartbeats keep their cadence. Lateness is measured per gap (a heartbeat's arrival
 * minus one interval after the stream's previous frame), for heartbeats arriving during the hold.
 */
export async function measureIdleStreams(target: BenchTarget, idle: IdlePlan): Promise<IdleResult> {
  if (target.gatewayPid === undefined) throw new Error('the idle-stream scenario needs a gateway process');
  const gatewayPid = target.gatewayPid;
  const agent = keepAliveAgent(idle.streams + idle.warmStreams);
  const body = chatBody(target.model, 16, true);
  const call = {
    url: target.chatUrl,
    agent,
    body,
    headers: target.headers,
    timeoutMs: idle.openTimeoutMs + idle.holdMs + 60_000,
  };

  const warm = Array.from({ length: idle.warmStreams }, () => streamChat(call));
  await delay(idle.keepaliveMs * 1.5);
  warm.forEach((handle) => handle.abort());
  await Promise.all(warm.map((handle) => handle.done));
  await delay(idle.settleMs);

  const window = new MeasureWindow();
  const lateness = new Samples();
  let delivered = 0;
  let opened = 0;
  let failed = 0;
  const failures: Record<string, number> = {};
  const fail = (reason: string) => {
    failed += 1;
    failures[reason] = (failures[reason] ?? 0) + 1;
  };
  const streams: Array<{ handle: RequestHandle; opened: boolean; outcome: Promise<void> }> = [];
  const gatewayBefore = sampleProcess(gatewayPid);
  const upstreamBefore = target.upstreamPid === undefined ? undefined : sampleProcess(target.upstreamPid);

  const openStarted = performance.now();
  const perBatch = Math.max(1, Math.round(idle.openPerSecond / 50));
  while (streams.length < idle.streams && performance.now() - openStarted < idle.openTimeoutMs) {
    for (let index = 0; index < perBatch && streams.length < idle.streams; index += 1) {
      let lastFrameAt: number | undefined;
      const handle = streamChat(call, {
        onFrame: (kind, at) => {
          if (lastFrameAt === undefined) {
            opened += 1;
            stream.opened = true;
          } else if (kind === 'heartbeat' && window.contains(at)) {
            delivered += 1;
            lateness.add(Math.max(0, at - lastFrameAt - idle.keepaliveMs));
          }
          lastFrameAt = at;
        },
      });
      const stream = {
        handle,
        opened: false,
        outcome: handle.done.then((outcome) => {
          if (outcome.kind === 'failed') fail(outcome.reason);
          else if (outcome.kind === 'completed') fail('ended before the hold was over');
          else if (!stream.opened) fail('not open when the hold ended');
        }),
      };
      streams.push(stream);
    }
    await delay(20);
  }
  if (streams.length < idle.streams) failures['not started within the open timeout'] = idle.streams - streams.length;
  while (opened + failed < streams.length && performance.now() - openStarted < idle.openTimeoutMs) await delay(20);
  const openMs = performance.now() - openStarted;

  window.start = performance.now();
  const gatewayHoldStart = sampleProcess(gatewayPid);
  await delay(idle.holdMs);
  window.end = performance.now();
  const gatewayAfter = sampleProcess(gatewayPid);
  const upstreamAfter = target.upstreamPid === undefined ? undefined : sampleProcess(target.upstreamPid);

  streams.forEach((stream) => stream.handle.abort());
  await Promise.all(streams.map((stream) => stream.outcome));
  agent.destroy();
  const errors = Object.values(failures).reduce((sum, count) => sum + count, 0);
  return {
    target: target.label,
    streams: idle.streams,
    opened,
    openMs,
    holdMs: window.durationMs,
    gatewayRssBeforeBytes: gatewayBefore.rssBytes,
    gatewayRssAfterBytes: gatewayAfter.rssBytes,
    gatewayRssPerStreamBytes: perStream(gatewayBefore, gatewayAfter, opened),
    upstreamRssPerStreamBytes:
      upstreamBefore && upstreamAfter ? perStream(upstreamBefore, upstreamAfter, opened) : undefined,
    gatewayCores: coreShare(gatewayHoldStart, gatewayAfter),
    heartbeats: {
      delivered,
      expected: Math.floor((opened * window.durationMs) / idle.keepaliveMs),
      lateness: lateness.summary(),
    },
    errors,
    failures,
  };
}

function perStream(before: ProcessSample, after: ProcessSample, streams: number): number {
  return streams > 0 ? (after.rssBytes - before.rssBytes) / streams : 0;
}
