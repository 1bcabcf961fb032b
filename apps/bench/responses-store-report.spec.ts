import { describe, expect, it } from 'vitest';
import { GANTRY_HTTP, GANTRY_STUB, type BenchResults } from './bench-results.js';
import { renderReport } from './report.js';
import type { StoredResponsesResults, StoredResponsesRow } from './responses-store-load.js';
import { storeOnOff } from './responses-store-report.js';

const row = (
  engine: 'stub' | 'http',
  mode: StoredResponsesRow['mode'],
  chunksPerSecond: number,
  gatewayMicrosPerUnit: number,
): StoredResponsesRow => ({
  target: engine === 'http' ? GANTRY_HTTP : GANTRY_STUB,
  engine,
  mode,
  streams: 64,
  tokensPerStream: 256,
  rounds: 3,
  chunksPerSecond,
  tokensPerSecond: chunksPerSecond,
  requestsCompleted: 1000,
  cpu: { gatewayMicrosPerUnit, gatewayCores: 0.8, backgroundCores: 0.05 },
  failures: mode === 'background' ? { 'in-band response.failed': 2 } : {},
  lastKept: mode !== 'off',
});

const stored = (rows: StoredResponsesRow[], memory: StoredResponsesResults['memory']): StoredResponsesResults => ({
  streams: 64,
  tokensPerStream: 256,
  rounds: 3,
  maxStoredResponses: 10_000,
  prefilled: 10_000,
  kept: { foreground: 15_000, background: 3_000 },
  gatewayRssBytes: {
    started: { foreground: 150 * 2 ** 20, background: 140 * 2 ** 20 },
    ended: { foreground: 500 * 2 ** 20, background: 450 * 2 ** 20 },
  },
  rows,
  memory,
});

const results = (storedResponses: StoredResponsesResults): BenchResults => ({
  startedAt: '2026-01-01T00:00:00.000Z',
  profile: 'full',
  durationMs: 40_000,
  machine: { cpus: 2, cpuModel: 'test CPU', memoryBytes: 1, node: 'v20', platform: 'linux' },
  storedResponses,
});

const memory = {
  bytesPerResponse: 5324.8,
  bytesPerEvent: 252.4,
  jsonBytesPerResponse: 4198.4,
  jsonBytesPerEvent: 199.2,
};

describe('the stored-responses report', () => {
  it('compares store: true and background with store: false per engine, and judges the 10% budget', () => {
    const rows = [
      row('stub', 'off', 200_000, 4),
      row('stub', 'on', 190_000, 4.4),
      row('stub', 'background', 100_000, 8),
      row('http', 'off', 100_000, 6),
      row('http', 'on', 95_000, 6.3),
    ];
    expect(storeOnOff(stored(rows, memory))).toEqual([
      { engine: 'stub', chunks: 0.95, cpu: expect.closeTo(1.1, 9) },
      { engine: 'http', chunks: 0.95, cpu: expect.closeTo(1.05, 9) },
    ]);
    const report = renderReport(results(stored(rows, memory)), []);
    const cells = (start: string) =>
      report
        .split('\n')
        .find((line) => line.startsWith(start))
        ?.split(/ {2,}/);
    expect(report).toContain('Stored Responses: the cost of store: true (64 streams of 256 tokens');
    expect(cells('stub    store: false')).toEqual([
      'stub',
      'store: false',
      '200,000',
      '-',
      '4',
      '-',
      '80%',
      '5%',
      '1,000',
      'no',
      '0',
    ]);
    expect(cells('stub    store: true')).toEqual([
      'stub',
      'store: true',
      '190,000',
      '0.95x',
      '4.4',
      '1.10x',
      '80%',
      '5%',
      '1,000',
      'yes',
      '0',
    ]);
    expect(cells('stub    background')).toEqual([
      'stub',
      'background',
      '100,000',
      '0.50x',
      '8',
      '2.00x',
      '80%',
      '5%',
      '1,000',
      'yes',
      '2',
    ]);
    expect(report).toContain(
      'chunks/s: stub 0.95x (CPU per chunk +10%), http 0.95x (CPU per chunk +5%); budget: within 10% (>= 0.9x): met',
    );
    expect(report).toContain('5.2 KB per stored response (4.1 KB of JSON), 252 bytes per kept event (199 of JSON)');
    expect(report).toContain('Gateway RSS, started → after the rounds: 150 MB → 500 MB; background: 140 MB → 450 MB');
  });

  it('says NOT met when one engine loses more than 10%, and why the heap was not measured', () => {
    const rows = [
      row('stub', 'off', 200_000, 4),
      row('stub', 'on', 170_000, 4.8),
      row('http', 'off', 100_000, 6),
      row('http', 'on', 99_000, 6),
    ];
    const report = renderReport(results(stored(rows, { error: 'Command failed: node --expose-gc' })), []);
    expect(report).toContain(
      'chunks/s: stub 0.85x (CPU per chunk +20%), http 0.99x (CPU per chunk +0%); budget: within 10% (>= 0.9x): NOT met\n',
    );
    expect(report).toContain('Memory store heap: not measured (Command failed: node --expose-gc)');
    const quick = renderReport({ ...results(stored(rows, memory)), profile: 'quick' }, []);
    expect(quick).toContain('budget: within 10% (>= 0.9x): NOT met (a --quick run: indicative only)');
  });
});
