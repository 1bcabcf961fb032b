import { BARE_PROXY, DIRECT, GANTRY_HTTP, GANTRY_STUB, NGINX, type BenchResults } from './bench-results.js';
import type { UpstreamWrites } from './gateway-configs.js';
import { renderAgent, renderPause } from './agent-report.js';
import { renderApiScenarios } from './api-report.js';
import { renderStoredResponses } from './responses-store-report.js';
import { renderTenants } from './tenants-report.js';
import { renderFleet } from './fleet-scenario.js';
import type { StreamingResult } from './streaming-load.js';
import type { TargetCheck } from './targets.js';
import { renderFailover } from './failover-report.js';
import { failuresOf, ms } from './report-cells.js';
import { renderWorkers } from './workers-report.js';
import { renderTable, type Cell } from './text-table.js';

const KB = 1024;
const ratio = (value: number | undefined, baseline: number | undefined): Cell =>
  value === undefined || baseline === undefined || baseline === 0 ? undefined : `${(value / baseline).toFixed(2)}x`;
const REFERENCE_NOTES: Array<[string, string]> = [
  [BARE_PROXY, '(bare proxy: Fastify + undici forwarding with nothing else, the floor for a Node gateway here)'],
  [NGINX, '(nginx: a plain reverse proxy, one process, keep-alive upstream, no buffering; a reference in C)'],
];
/** What the reference rows present in a table are. */
const referenceNotes = (rows: Array<{ target: string }>) =>
  REFERENCE_NOTES.filter(([label]) => rows.some((row) => row.target === label))
    .map(([, note]) => `\n${note}`)
    .join('');
const UPSTREAM_LABELS: Record<UpstreamWrites, string> = { bursts: 'bursts', 'per-token': 'per token' };
/** The proxies that forward the mock's chunks, read against the bare proxy's CPU (the stub has no upstream). */
const comparesWithBare = (target: string) => target === GANTRY_HTTP || target === NGINX;
const CPU_VS_BARE_NOTE = "(CPU vs bare: CPU per unit over the bare proxy's in the same rounds)";

function backgroundOf(results: BenchResults): number[] {
  const rows = [
    ...(results.throughput ?? []),
    ...(results.latency ?? []),
    ...(results.nonStreaming ?? []),
    ...(results.agent ?? []),
    ...(results.embeddings ?? []),
    ...(results.completions ?? []),
    ...(results.observability?.on ?? []),
    ...(results.observability?.off ?? []),
    ...(results.storedResponses?.rows ?? []),
  ];
  return rows.flatMap((row) => (row.cpu.backgroundCores === undefined ? [] : [row.cpu.backgroundCores]));
}

/** The human-readable report: one table per scenario, then the targets. */
export function renderReport(results: BenchResults, targets: TargetCheck[]): string {
  const { machine } = results;
  const sections: string[] = [
    `Gantry benchmark (${results.profile} run, ${(results.durationMs / 1000).toFixed(0)} s) on ${machine.cpus} CPU(s) ${machine.cpuModel}, Node ${machine.node}`,
    'Ratios compare the same client talking to the mock upstream directly and through Gantry, in this run.',
  ];
  const section = (title: string, table: string) => sections.push(`\n${title}\n${table}`);
  const background = backgroundOf(results);
  if (background.length > 0) {
    const mean = background.reduce((sum, cores) => sum + cores, 0) / background.length;
    const worst = Math.max(...background);
    sections.push(
      `Other processes on the machine used ${(mean * 100).toFixed(0)}% of a core on average during the measurements (${(worst * 100).toFixed(0)}% at worst)` +
        (worst > 0.15 ? ': the figures suffered from it; rerun on a quiet machine.' : '.'),
    );
  }

  if (results.throughput) {
    const rows = results.throughput.map((row) => {
      const alike = (label: string) =>
        results.throughput!.find(
          (other) =>
            other.target === label && other.streams === row.streams && other.upstreamWrites === row.upstreamWrites,
        );
      return [
        row.upstreamWrites === undefined ? undefined : UPSTREAM_LABELS[row.upstreamWrites],
        row.streams,
        row.target,
        row.chunksPerSecond,
        row.tokensPerSecond,
        row.target === DIRECT ? undefined : ratio(row.chunksPerSecond, alike(DIRECT)?.chunksPerSecond),
        row.cpu.gatewayMicrosPerUnit,
        comparesWithBare(row.target)
          ? ratio(row.cpu.gatewayMicrosPerUnit, alike(BARE_PROXY)?.cpu.gatewayMicrosPerUnit)
          : undefined,
        row.cpu.gatewayCores === undefined ? undefined : `${(row.cpu.gatewayCores * 100).toFixed(0)}%`,
        failuresOf(row.failures),
      ];
    });
    const tokens = results.throughput[0]?.tokensPerStream;
    section(
      `Streaming throughput (${tokens} tokens per stream, no delay between tokens; the mock writes its chunks in bursts, or one per write)`,
      renderTable(
        [
          'upstream',
          'streams',
          'target',
          'chunks/s',
          'tokens/s',
          'vs direct',
          'gw CPU µs/chunk',
          'CPU vs bare',
          'gw CPU',
          'errors',
        ],
        rows,
      ) +
        referenceNotes(results.throughput) +
        (results.throughput.some((row) => row.target === BARE_PROXY) ? `\n${CPU_VS_BARE_NOTE}` : ''),
    );
  }

  if (results.latency) {
    const direct = results.latency.find((row) => row.target === DIRECT);
    const added = (value: number | undefined, baseline: number | undefined): Cell =>
      value === undefined || baseline === undefined
        ? undefined
        : `${value - baseline >= 0 ? '+' : ''}${(value - baseline).toFixed(2)}`;
    const rows = results.latency.map((row) => [
      row.target,
      ms(row.ttft.p50),
      ms(row.ttft.p99),
      row.target === GANTRY_HTTP ? added(row.ttft.p50, direct?.ttft.p50) : undefined,
      ms(row.interChunk.p50),
      ms(row.interChunk.p99),
      row.target === GANTRY_HTTP ? added(row.interChunk.p99, direct?.interChunk.p99) : undefined,
      row.ttft.count,
      row.interChunk.count,
      failuresOf(row.failures),
    ]);
    const first = results.latency[0];
    section(
      `Latency (${first?.streams} streams, ${first?.tokensPerStream} tokens each, ${first?.tokenIntervalMs} ms between tokens; ms)`,
      renderTable(
        ['target', 'TTFT p50', 'TTFT p99', 'added p50', 'gap p50', 'gap p99', 'added p99', 'TTFTs', 'gaps', 'errors'],
        rows,
      ) +
        (results.latency.some((row) => row.target === GANTRY_STUB)
          ? "\n(the stub sends its first token one interval after its prefill, so its TTFT is not comparable with the mock's)"
          : ''),
    );
  }

  if (results.nonStreaming) {
    const direct = results.nonStreaming.find((row) => row.target === DIRECT);
    const bare = results.nonStreaming.find((row) => row.target === BARE_PROXY);
    const rows = results.nonStreaming.map((row) => [
      row.target,
      row.requestsPerSecond,
      row.target === DIRECT ? undefined : ratio(row.requestsPerSecond, direct?.requestsPerSecond),
      row.cpu.gatewayMicrosPerUnit,
      comparesWithBare(row.target) ? ratio(row.cpu.gatewayMicrosPerUnit, bare?.cpu.gatewayMicrosPerUnit) : undefined,
      failuresOf(row.failures),
    ]);
    const first = results.nonStreaming[0];
    section(
      `Non-streaming (${first?.concurrency} concurrent, ${first?.tokensPerAnswer}-token answers)`,
      renderTable(['target', 'requests/s', 'vs direct', 'gw CPU µs/request', 'CPU vs bare', 'errors'], rows) +
        referenceNotes(results.nonStreaming) +
        (bare ? `\n${CPU_VS_BARE_NOTE}` : ''),
    );
  }

  if (results.agent) section(...renderAgent(results.agent));
  if (results.pause) section(...renderPause(results.pause));
  for (const { title, body } of renderApiScenarios(results)) section(title, body);

  if (results.observability) {
    const { off, on, sink } = results.observability;
    const rows = on.map((onRow) => {
      const offRow = off.find((row) => row.target === onRow.target) as StreamingResult | undefined;
      return [
        onRow.target,
        offRow?.chunksPerSecond,
        onRow.chunksPerSecond,
        ratio(onRow.chunksPerSecond, offRow?.chunksPerSecond),
        offRow?.cpu.gatewayMicrosPerUnit,
        onRow.cpu.gatewayMicrosPerUnit,
        failuresOf(onRow.failures) + failuresOf(offRow?.failures ?? {}),
      ];
    });
    section(
      `Metrics + tracing cost (${on[0]?.streams} streams; off: metrics disabled, tracing none; on: metrics + OTLP tracing to a local sink, which got ${sink.requests} exports, ${(sink.bytes / KB).toFixed(0)} KB)`,
      renderTable(['target', 'off chunks/s', 'on chunks/s', 'on/off', 'off µs/chunk', 'on µs/chunk', 'errors'], rows),
    );
  }

  if (results.storedResponses) {
    const { title, body } = renderStoredResponses(results.storedResponses, results.profile === 'quick');
    section(title, body);
  }

  if (results.idle) {
    const rows = results.idle.map((row) => [
      row.target,
      `${row.opened}/${row.streams}`,
      Number((row.openMs / 1000).toFixed(1)),
      Number((row.gatewayRssPerStreamBytes / KB).toFixed(1)),
      row.upstreamRssPerStreamBytes === undefined ? undefined : Number((row.upstreamRssPerStreamBytes / KB).toFixed(1)),
      `${(row.gatewayCores * 100).toFixed(1)}%`,
      `${row.heartbeats.delivered}/${row.heartbeats.expected}`,
      ms(row.heartbeats.lateness.p50),
      ms(row.heartbeats.lateness.p99),
      ms(row.heartbeats.lateness.max),
      row.errors,
    ]);
    const first = results.idle[0];
    section(
      `Idle streams (long prefill, held ${((first?.holdMs ?? 0) / 1000).toFixed(0)} s; RSS in KB per stream; heartbeat lateness in ms)`,
      renderTable(
        [
          'target',
          'open',
          'open s',
          'gw RSS/stream',
          'mock RSS/stream',
          'gw CPU',
          'heartbeats',
          'late p50',
          'late p99',
          'late max',
          'errors',
        ],
        rows,
      ),
    );
  }

  if (results.multiTurn) {
    const { plan } = results.multiTurn;
    const percent = (rate: number | undefined): Cell =>
      rate === undefined ? undefined : `${(rate * 100).toFixed(0)}%`;
    const rows = results.multiTurn.results.map((row) => [
      row.routing,
      ms(row.followUpTtft.mean),
      ms(row.followUpTtft.p50),
      ms(row.followUpTtft.p90),
      ms(row.firstTurnTtft.p50),
      percent(row.cacheHitRate.followUps),
      percent(row.cacheHitRate.firstTurns),
      row.replicaRequests.join(' / '),
      row.maxShareOverMean === undefined ? undefined : `${row.maxShareOverMean.toFixed(2)}x`,
      row.affinityOverrides,
      failuresOf(row.failures),
    ]);
    section(
      `Multi-turn conversations (${plan.conversations * plan.rounds} conversations of ${plan.turns} turns per routing over ${plan.replicas} mock engines ` +
        `with a prefix cache; ${plan.systemPrompts} system prompts of ${plan.systemPromptTokens} tokens, a ${plan.documentTokens}-token document ` +
        `as the first turn, ${plan.followUpTokens}-token follow-ups; prefill ${plan.prefillPerTokenMs} ms per uncached token; TTFT in ms)`,
      renderTable(
        [
          'routing',
          'follow-up TTFT mean',
          'p50',
          'p90',
          'first turn p50',
          'cached, follow-ups',
          'cached, first turns',
          'requests per replica',
          'max/mean',
          'overrides',
          'errors',
        ],
        rows,
      ),
    );
  }

  if (results.failover) section(...renderFailover(results.failover));

  if (results.llama) {
    if (!results.llama.available) {
      sections.push(`\nllama engine: not available (${results.llama.reason})`);
    } else {
      const rows = results.llama.results.map((row) => [
        row.streams,
        row.tokensPerSecond,
        row.requestsCompleted,
        row.cpu.gatewayMicrosPerUnit,
        failuresOf(row.failures),
      ]);
      section(
        `llama engine, ${results.llama.model}`,
        renderTable(['streams', 'tokens/s', 'requests', 'gw CPU µs/chunk', 'errors'], rows),
      );
    }
  }

  if (results.workers) for (const { title, body } of renderWorkers(results.workers)) section(title, body);

  if (results.tenants) {
    const { title, body } = renderTenants(results.tenants);
    section(title, body);
  }

  if (results.fleet) {
    const [title, ...body] = renderFleet(results.fleet);
    section(title, body.join('\n').trim());
  }

  const quick = results.profile === 'quick' ? ' (a --quick run: indicative only)' : '';
  section(
    `Targets${quick}`,
    renderTable(
      ['target', 'goal', 'measured', 'met'],
      targets.map((check) => [
        check.name,
        check.goal,
        check.measured,
        check.met === undefined ? 'info' : check.met ? 'yes' : 'NO',
      ]),
    ),
  );
  return sections.join('\n');
}
