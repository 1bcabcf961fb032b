import { describe, expect, it } from 'vitest';
import { BARE_PROXY, DIRECT, GANTRY_HTTP, GANTRY_STUB, type BenchResults } from './bench-results.js';
import type { UpstreamWrites } from './gateway-configs.js';
import { renderReport } from './report.js';
import type { StreamingResult } from './streaming-load.js';
import { checkTargets } from './targets.js';

const streaming = (
  target: string,
  chunksPerSecond: number,
  gatewayMicrosPerUnit?: number,
  upstreamWrites?: UpstreamWrites,
): StreamingResult => ({
  target,
  ...(upstreamWrites ? { upstreamWrites } : {}),
  streams: 64,
  tokensPerStream: 256,
  chunksPerSecond,
  tokensPerSecond: chunksPerSecond * 0.99,
  rounds: 1,
  requestsCompleted: 100,
  cpu: { gatewayMicrosPerUnit, gatewayCores: gatewayMicrosPerUnit ? 0.9 : undefined },
  failures: {},
});
const summary = (p50: number, p99: number) => ({ count: 100, mean: p50, p50, p90: p99, p99, max: p99 });

const results: BenchResults = {
  startedAt: '2026-01-01T00:00:00.000Z',
  profile: 'full',
  durationMs: 150_000,
  machine: { cpus: 2, cpuModel: 'test CPU', memoryBytes: 1, node: 'v20', platform: 'linux' },
  throughput: [streaming(DIRECT, 100_000), streaming(GANTRY_HTTP, 80_000, 9.5), streaming(GANTRY_STUB, 150_000, 4)],
  latency: [
    {
      target: DIRECT,
      streams: 64,
      tokensPerStream: 64,
      tokenIntervalMs: 10,
      rounds: 1,
      ttft: summary(2, 5),
      interChunk: summary(10, 11),
      cpu: {},
      failures: {},
    },
    {
      target: GANTRY_HTTP,
      streams: 64,
      tokensPerStream: 64,
      tokenIntervalMs: 10,
      rounds: 1,
      ttft: summary(3.5, 9),
      interChunk: summary(10, 12.5),
      cpu: {},
      failures: {},
    },
  ],
  nonStreaming: [
    {
      target: DIRECT,
      concurrency: 64,
      tokensPerAnswer: 16,
      rounds: 1,
      requestsPerSecond: 10_000,
      cpu: {},
      failures: {},
    },
    {
      target: GANTRY_HTTP,
      concurrency: 64,
      tokensPerAnswer: 16,
      rounds: 1,
      requestsPerSecond: 6_500,
      cpu: { gatewayMicrosPerUnit: 120 },
      failures: {},
    },
  ],
  idle: [
    {
      target: GANTRY_STUB,
      streams: 5000,
      opened: 5000,
      openMs: 2100,
      holdMs: 20_000,
      gatewayRssBeforeBytes: 100e6,
      gatewayRssAfterBytes: 200e6,
      gatewayRssPerStreamBytes: 20 * 1024,
      gatewayCores: 0.1,
      heartbeats: { delivered: 100_000, expected: 100_000, lateness: summary(1, 60) },
      errors: 0,
      failures: {},
    },
  ],
};

describe('checkTargets', () => {
  it('judges ratios against direct and added latency against the direct run', () => {
    const checks = checkTargets(results);
    const byName = (start: string) => checks.find((check) => check.name.startsWith(start));
    expect(byName('streaming chunks/s')).toMatchObject({ measured: '0.80x', met: true });
    expect(byName('gateway CPU per streamed chunk')).toMatchObject({ measured: '9.5 µs' });
    expect(byName('gateway CPU per streamed chunk')?.met).toBeUndefined();
    expect(byName('added inter-chunk gap p99')).toMatchObject({ measured: '1.50 ms', met: true });
    expect(byName('added time to first token p50')).toMatchObject({ measured: '1.50 ms', met: false });
    expect(byName('idle RSS per stream, stub')).toMatchObject({ measured: '20.0 KB', met: true });
    expect(byName('idle stream errors, stub')).toMatchObject({ met: true });
    expect(byName('heartbeat lateness p99, stub')).toMatchObject({ measured: '60.0 ms', met: false });
    expect(byName('non-streaming')).toMatchObject({ measured: '0.65x', met: true });
  });
});

describe('mid-stream failover figures', () => {
  const failover = (failures: Record<string, number>, wrongAnswers: number): BenchResults => ({
    ...results,
    failover: {
      plan: {
        replicas: 3,
        streams: 32,
        tokens: 100,
        tokenIntervalMs: 10,
        warmupMs: 2000,
        durationMs: 30_000,
        killEveryMs: 3000,
        downMs: 1000,
      },
      kills: 10,
      started: 325,
      completed: 325 - Object.values(failures).reduce((sum, count) => sum + count, 0),
      failures,
      wrongAnswers,
      resumes: 135,
      resumeFailures: 0,
      resumeGap: summary(40, 120),
      tokenGap: summary(10, 30),
    },
  });
  const target = (run: BenchResults) =>
    checkTargets(run).find((check) => check.name.startsWith('streams that saw an error'));

  it('meets its target only when no stream saw an error and every answer was whole', () => {
    expect(target(failover({}, 0))).toMatchObject({ measured: '0', met: true });
    expect(target(failover({ 'in-band error frame': 2 }, 0))).toMatchObject({ measured: '2', met: false });
    expect(target(failover({}, 1))).toMatchObject({ measured: '1', met: false });
  });

  it('prints one row: kills, streams, errors, resumes and the gap at a resume beside the others', () => {
    const report = renderReport(failover({ 'in-band error frame': 2 }, 0), []);
    const row = report.split('\n').find((line) => line.trimStart().startsWith('10  '));
    expect(row?.trim().split(/ {2,}/)).toEqual([
      '10',
      '325',
      '323',
      '2',
      '0',
      '135',
      '0',
      '40',
      '120',
      '120',
      '10',
      '30',
    ]);
    expect(report).toContain('errors: in-band error frame 2');
  });
});

describe('renderReport', () => {
  it('prints the bare proxy as a reference row with a note, and reads the HTTP engine against it', () => {
    const withBare: BenchResults = {
      ...results,
      throughput: [...results.throughput!, streaming(BARE_PROXY, 90_000, 5)],
      nonStreaming: [
        ...results.nonStreaming!,
        {
          target: BARE_PROXY,
          concurrency: 64,
          tokensPerAnswer: 16,
          rounds: 1,
          requestsPerSecond: 8_000,
          cpu: { gatewayMicrosPerUnit: 90 },
          failures: {},
        },
      ],
    };
    const checks = checkTargets(withBare);
    expect(checks.filter((check) => !check.name.includes('vs bare proxy'))).toEqual(checkTargets(results));
    const report = renderReport(withBare, checks);
    const lines = report.split('\n');
    expect(
      lines
        .find((line) => line.includes('  bare proxy  '))
        ?.trim()
        .split(/ {2,}/),
    ).toEqual(['-', '64', 'bare proxy', '90,000', '89,100', '0.90x', '5', '-', '90%', '0']);
    expect(lines.find((line) => line.startsWith('bare proxy'))?.split(/ {2,}/)).toEqual([
      'bare proxy',
      '8,000',
      '0.80x',
      '90',
      '-',
      '0',
    ]);
    expect(lines.find((line) => line.startsWith('gantry http') && line.includes('6,500'))?.split(/ {2,}/)).toEqual([
      'gantry http',
      '6,500',
      '0.65x',
      '120',
      '1.33x',
      '0',
    ]);
    expect(report.match(/\(bare proxy: Fastify \+ undici forwarding/g)).toHaveLength(2);
    expect(renderReport(results, checkTargets(results))).not.toContain('bare proxy');
  });

  it('reads CPU per chunk against the bare proxy for each way the upstream writes, and per non-streaming request', () => {
    const run: BenchResults = {
      ...results,
      throughput: [
        streaming(DIRECT, 100_000, undefined, 'bursts'),
        streaming(BARE_PROXY, 90_000, 2, 'bursts'),
        streaming(GANTRY_HTTP, 80_000, 2.5, 'bursts'),
        streaming(GANTRY_STUB, 150_000, 1.5),
        streaming(DIRECT, 60_000, undefined, 'per-token'),
        streaming(BARE_PROXY, 50_000, 8, 'per-token'),
        streaming(GANTRY_HTTP, 45_000, 9.6, 'per-token'),
      ],
      nonStreaming: [
        ...results.nonStreaming!,
        {
          target: BARE_PROXY,
          concurrency: 64,
          tokensPerAnswer: 16,
          rounds: 1,
          requestsPerSecond: 8_000,
          cpu: { gatewayMicrosPerUnit: 90 },
          failures: {},
        },
      ],
    };
    const checks = checkTargets(run);
    const byName = (part: string) => checks.find((check) => check.name.includes(part));
    expect(byName('one chunk per token')).toMatchObject({ goal: '<= 1.15x', measured: '1.20x', met: false });
    expect(byName('writing in bursts')).toMatchObject({ goal: '<= 1.3x', measured: '1.25x', met: true });
    expect(byName('non-streaming request vs bare proxy')).toMatchObject({
      goal: '<= 1.5x',
      measured: '1.33x',
      met: true,
    });
    expect(byName('streaming chunks/s')).toMatchObject({ measured: '0.80x' });
    const lines = renderReport(run, checks).split('\n');
    expect(lines.find((line) => line.startsWith('per token') && line.includes('gantry http'))?.split(/ {2,}/)).toEqual([
      'per token',
      '64',
      'gantry http',
      '45,000',
      '44,550',
      '0.75x',
      '9.6',
      '1.20x',
      '90%',
      '0',
    ]);
  });

  it('prints each scenario as a table with ratios to direct, then the targets', () => {
    const report = renderReport(results, checkTargets(results));
    const cells = (start: string, after = '') =>
      report
        .slice(report.indexOf(after))
        .split('\n')
        .find((line) => line.startsWith(start))
        ?.split(/ {2,}/);
    expect(report).toContain(
      'Streaming throughput (256 tokens per stream, no delay between tokens; the mock writes its chunks in bursts, or one per write)',
    );
    const httpRow = report.split('\n').find((line) => line.includes('gantry http') && line.includes('80,000'));
    expect(httpRow?.trim().split(/ {2,}/)).toEqual([
      '-',
      '64',
      'gantry http',
      '80,000',
      '79,200',
      '0.80x',
      '9.5',
      '-',
      '90%',
      '0',
    ]);
    expect(cells('gantry http', 'Latency')).toEqual([
      'gantry http',
      '3.5',
      '9',
      '+1.50',
      '10',
      '12.5',
      '+1.50',
      '100',
      '100',
      '0',
    ]);
    expect(cells('added time to first token p50')).toEqual([
      'added time to first token p50, 64 streams',
      '< 1 ms',
      '1.50 ms',
      'NO',
    ]);
    expect(report).not.toContain('indicative');
  });
});
