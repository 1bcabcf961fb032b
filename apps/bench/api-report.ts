import { BARE_PROXY, DIRECT, GANTRY_HTTP, NGINX, type BenchResults } from './bench-results.js';
import { failuresOf } from './report-cells.js';
import { renderTable, type Cell } from './text-table.js';

const ratio = (value: number | undefined, baseline: number | undefined): Cell =>
  value === undefined || baseline === undefined || baseline === 0 ? undefined : `${(value / baseline).toFixed(2)}x`;
/** The proxies that forward the mock's answers, read against the bare proxy's CPU (the stub has no upstream). */
const comparesWithBare = (target: string) => target === GANTRY_HTTP || target === NGINX;
const NOTE =
  "(bare proxy: Fastify + undici forwarding with nothing else; CPU vs bare: CPU per unit over the bare proxy's in the same rounds)";

/** The embeddings and completions scenarios' tables (api-scenarios.ts), as the report's other sections. */
export function renderApiScenarios(results: BenchResults): Array<{ title: string; body: string }> {
  const sections: Array<{ title: string; body: string }> = [];
  if (results.embeddings) {
    const rows = results.embeddings;
    const direct = rows.find((row) => row.target === DIRECT);
    const bare = rows.find((row) => row.target === BARE_PROXY);
    sections.push({
      title: `Embeddings (${rows[0]?.concurrency} concurrent, ${rows[0]?.tokensPerAnswer} inputs a request, base64)`,
      body:
        renderTable(
          ['target', 'requests/s', 'vs direct', 'gw CPU µs/request', 'CPU vs bare', 'errors'],
          rows.map((row) => [
            row.target,
            row.requestsPerSecond,
            row.target === DIRECT ? undefined : ratio(row.requestsPerSecond, direct?.requestsPerSecond),
            row.cpu.gatewayMicrosPerUnit,
            comparesWithBare(row.target)
              ? ratio(row.cpu.gatewayMicrosPerUnit, bare?.cpu.gatewayMicrosPerUnit)
              : undefined,
            failuresOf(row.failures),
          ]),
        ) + (bare ? `\n${NOTE}` : ''),
    });
  }
  if (results.completions) {
    const rows = results.completions;
    const direct = rows.find((row) => row.target === DIRECT);
    const bare = rows.find((row) => row.target === BARE_PROXY);
    sections.push({
      title: `Completions streaming (${rows[0]?.streams} streams, ${rows[0]?.tokensPerStream} tokens each)`,
      body:
        renderTable(
          ['target', 'chunks/s', 'text chunks/s', 'vs direct', 'gw CPU µs/chunk', 'CPU vs bare', 'errors'],
          rows.map((row) => [
            row.target,
            row.chunksPerSecond,
            row.tokensPerSecond,
            row.target === DIRECT ? undefined : ratio(row.chunksPerSecond, direct?.chunksPerSecond),
            row.cpu.gatewayMicrosPerUnit,
            comparesWithBare(row.target)
              ? ratio(row.cpu.gatewayMicrosPerUnit, bare?.cpu.gatewayMicrosPerUnit)
              : undefined,
            failuresOf(row.failures),
          ]),
        ) + (bare ? `\n${NOTE}` : ''),
    });
  }
  return sections;
}
