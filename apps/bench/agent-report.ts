import type { AgentResult } from './agent-scenario.js';
import type { PauseResult } from './pause-scenario.js';
import { BARE_PROXY, DIRECT, GANTRY_HTTP, NGINX } from './bench-results.js';
import { renderTable, type Cell } from './text-table.js';

const ratio = (value: number | undefined, baseline: number | undefined): Cell =>
  value === undefined || baseline === undefined || baseline === 0 ? undefined : `${(value / baseline).toFixed(2)}x`;

/** The gateway's CPU per agent turn over the bare proxy's, in the same rounds (undefined when either is missing). */
export function agentOverBare(rows: readonly AgentResult[]): number | undefined {
  const gantry = rows.find((row) => row.target === GANTRY_HTTP)?.cpu.gatewayMicrosPerUnit;
  const bare = rows.find((row) => row.target === BARE_PROXY)?.cpu.gatewayMicrosPerUnit;
  return gantry === undefined || bare === undefined || bare === 0 ? undefined : gantry / bare;
}

/** The agent scenario's section of the report: its title and table. */
export function renderAgent(rows: readonly AgentResult[]): [string, string] {
  const direct = rows.find((row) => row.target === DIRECT);
  const bare = rows.find((row) => row.target === BARE_PROXY);
  const failures = (row: AgentResult) => Object.values(row.failures).reduce((sum, count) => sum + count, 0);
  const table = renderTable(
    ['target', 'requests/s', 'vs direct', 'gw CPU µs/request', 'CPU vs bare', 'errors'],
    rows.map((row) => [
      row.target,
      row.requestsPerSecond,
      row.target === DIRECT ? undefined : ratio(row.requestsPerSecond, direct?.requestsPerSecond),
      row.cpu.gatewayMicrosPerUnit,
      row.target === GANTRY_HTTP || row.target === NGINX
        ? ratio(row.cpu.gatewayMicrosPerUnit, bare?.cpu.gatewayMicrosPerUnit)
        : undefined,
      failures(row),
    ]),
  );
  const first = rows[0];
  const title =
    `Agent turns (${first?.concurrency} concurrent, a ${Math.round((first?.bodyBytes ?? 0) / 1024)} KB body of 181 messages ` +
    `and 24 tools, ${first?.tokensPerAnswer}-token streamed answers)`;
  return [title, table + (bare ? "\n(CPU vs bare: CPU per request over the bare proxy's in the same rounds)" : '')];
}

/** The pause scenario's section: the streams' gaps with each kind of large body beside them. */
export function renderPause(rows: readonly PauseResult[]): [string, string] {
  const ms = (value: number | undefined): Cell => (value === undefined ? undefined : Number(value.toFixed(1)));
  const table = renderTable(
    ['large bodies beside', 'KB', 'sent', 'answered 200', 'answer p50', 'gap p50', 'gap p99', 'gap max', 'gaps'],
    rows.map((row) => [
      row.bodies,
      row.bodyBytes === 0 ? undefined : Math.round(row.bodyBytes / 1024),
      row.sent,
      row.accepted,
      ms(row.answerMs.p50),
      ms(row.gaps.p50),
      ms(row.gaps.p99),
      ms(row.gaps.max),
      row.gaps.count,
    ]),
  );
  return [
    'Loop pauses (paced streams, 10 ms between tokens, HTTP engine; one large body every 100 ms to the stub; ms)',
    table,
  ];
}
