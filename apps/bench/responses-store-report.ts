import type { StoredResponsesResults } from './responses-store-load.js';
import { failuresOf } from './report-cells.js';
import { renderTable, type Cell } from './text-table.js';

/** The issue's budget: chunks/s with `store: true` within 10% of `store: false`. */
export const STORE_ON_OFF_FLOOR = 0.9;

const KB = 1024;
const MB = 1024 * 1024;
const MODE_LABELS = { off: 'store: false', on: 'store: true', background: 'background' } as const;
const ratio = (value: number | undefined, baseline: number | undefined): number | undefined =>
  value === undefined || baseline === undefined || baseline === 0 ? undefined : value / baseline;
const times = (value: number | undefined): Cell => (value === undefined ? undefined : `${value.toFixed(2)}x`);

/** `store: true` over `store: false` per engine: chunks/s and gateway CPU per chunk. */
export function storeOnOff(results: StoredResponsesResults): Array<{ engine: string; chunks?: number; cpu?: number }> {
  const engines = [...new Set(results.rows.map((row) => row.engine))];
  return engines.map((engine) => {
    const off = results.rows.find((row) => row.engine === engine && row.mode === 'off');
    const on = results.rows.find((row) => row.engine === engine && row.mode === 'on');
    return {
      engine,
      chunks: ratio(on?.chunksPerSecond, off?.chunksPerSecond),
      cpu: ratio(on?.cpu.gatewayMicrosPerUnit, off?.cpu.gatewayMicrosPerUnit),
    };
  });
}

/** The scenario's section of the printed report: its title and body (`quick`: the budget line says it is indicative only). */
export function renderStoredResponses(results: StoredResponsesResults, quick = false): { title: string; body: string } {
  const rows = results.rows.map((row) => {
    const off = results.rows.find((other) => other.engine === row.engine && other.mode === 'off');
    const compared = row.mode !== 'off';
    return [
      row.engine,
      MODE_LABELS[row.mode],
      row.chunksPerSecond,
      compared ? times(ratio(row.chunksPerSecond, off?.chunksPerSecond)) : undefined,
      row.cpu.gatewayMicrosPerUnit,
      compared ? times(ratio(row.cpu.gatewayMicrosPerUnit, off?.cpu.gatewayMicrosPerUnit)) : undefined,
      row.cpu.gatewayCores === undefined ? undefined : `${(row.cpu.gatewayCores * 100).toFixed(0)}%`,
      row.cpu.backgroundCores === undefined ? undefined : `${(row.cpu.backgroundCores * 100).toFixed(0)}%`,
      row.requestsCompleted,
      row.lastKept === undefined ? undefined : row.lastKept ? 'yes' : 'no',
      failuresOf(row.failures),
    ];
  });
  const lines = [
    renderTable(
      [
        'engine',
        'request',
        'chunks/s',
        'vs off',
        'gw CPU µs/chunk',
        'vs off',
        'gw CPU',
        'others CPU',
        'responses',
        'kept',
        'errors',
      ],
      rows,
    ),
    `(store: false and store: true take turns on one gateway, responses.store: memory, which kept ${results.prefilled} responses before the first window ` +
      `(its bound: ${results.maxStoredResponses.toLocaleString('en-US')}) and ${results.kept.foreground} over the run` +
      (results.rows.some((row) => row.mode === 'background')
        ? `; background: true on a second one (${results.kept.background} responses and their events kept), the client following the event log`
        : '') +
      '; others CPU: what processes outside the bench used in the same windows, the noise they suffered; ' +
      'kept: whether GET /v1/responses/{id} found the last response after the rounds)',
  ];
  const budget = storeOnOff(results)
    .map(
      ({ engine, chunks, cpu }) =>
        `${engine} ${times(chunks) ?? '-'} (CPU per chunk ${cpu === undefined ? '-' : `${cpu >= 1 ? '+' : ''}${((cpu - 1) * 100).toFixed(0)}%`})`,
    )
    .join(', ');
  const met = storeOnOff(results).every(({ chunks }) => chunks !== undefined && chunks >= STORE_ON_OFF_FLOOR);
  lines.push(
    `store: true / store: false, chunks/s: ${budget}; budget: within 10% (>= ${STORE_ON_OFF_FLOOR}x): ${met ? 'met' : 'NOT met'}${quick ? ' (a --quick run: indicative only)' : ''}`,
  );
  const { memory } = results;
  lines.push(
    'error' in memory
      ? `Memory store heap: not measured (${memory.error})`
      : `Memory store, heap after a full GC: ${(memory.bytesPerResponse / KB).toFixed(1)} KB per stored response (${(memory.jsonBytesPerResponse / KB).toFixed(1)} KB of JSON), ` +
          `${Math.round(memory.bytesPerEvent)} bytes per kept event (${Math.round(memory.jsonBytesPerEvent)} of JSON)`,
  );
  const rss = results.gatewayRssBytes;
  const mb = (bytes: number | undefined) => (bytes === undefined ? '-' : `${(bytes / MB).toFixed(0)} MB`);
  lines.push(
    `Gateway RSS, started → after the rounds: ${mb(rss.started.foreground)} → ${mb(rss.ended.foreground)}` +
      (rss.ended.background === undefined
        ? ''
        : `; background: ${mb(rss.started.background)} → ${mb(rss.ended.background)}`),
  );
  return {
    title:
      `Stored Responses: the cost of store: true (${results.streams} streams of ${results.tokensPerStream} tokens, POST /v1/responses with stream: true; ` +
      'chunks are response.output_text.delta events)',
    body: lines.join('\n'),
  };
}
