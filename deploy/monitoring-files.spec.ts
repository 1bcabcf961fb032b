import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { startCli, writeConfig, type CliProcess } from '../test/support/cli-process.js';

const here = (file: string) => join(import.meta.dirname, file);
const yamlOf = (file: string) => parse(readFileSync(here(file), 'utf8')) as Record<string, any>;

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

const alerts = yamlOf('prometheus/gantry-alerts.yaml') as { groups: Array<{ name: string; rules: Rule[] }> };
const rule = yamlOf('kubernetes/monitoring/prometheusrule.yaml');
const dashboard = JSON.parse(readFileSync(here('grafana/gantry-dashboard.json'), 'utf8')) as {
  panels: Array<{
    id: number;
    type: string;
    title: string;
    datasource?: { uid: string };
    targets?: Array<{ expr: string }>;
  }>;
};

const rules = alerts.groups.flatMap((group) => group.rules);
const graphs = dashboard.panels.filter((panel) => panel.type !== 'row');
/** Every PromQL expression of the dashboard and the alerts, with where it is. */
const EXPRESSIONS = [
  ...rules.map((each) => ({ where: `alert ${each.alert}`, expr: each.expr })),
  ...graphs.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr })),
  ),
];

/** Grafana's interval variables, which Grafana replaces before Prometheus sees the expression. */
const grafanaResolved = (expr: string) => expr.replaceAll(/\$__(rate_interval|interval|range)/g, '5m');

/** What Prometheus' own parser (its UI's) makes of an expression: its error nodes, and the metrics its selectors name. */
function read(expr: string): { errors: string[]; metrics: string[] } {
  const text = grafanaResolved(expr);
  const errors: string[] = [];
  const metrics: string[] = [];
  parser.parse(text).iterate({
    enter: (node) => {
      if (node.type.isError)
        errors.push(`at ${node.from}: ${JSON.stringify(text.slice(Math.max(0, node.from - 10), node.to + 10))}`);
      if (node.name !== 'VectorSelector') return;
      const name = node.node.getChild('Identifier');
      if (name) metrics.push(text.slice(name.from, name.to));
    },
  });
  return { errors, metrics };
}

describe('the alerts (deploy/prometheus) and their PrometheusRule (deploy/kubernetes/monitoring)', () => {
  it('has every rule named once, with a duration to hold (for), a severity and a description', () => {
    expect(rules.length).toBeGreaterThanOrEqual(6);
    expect(new Set(rules.map((each) => each.alert)).size).toBe(rules.length);
    for (const each of rules) {
      expect(each.alert).toMatch(/^Gantry[A-Z]\w+$/);
      expect(each.for, each.alert).toMatch(/^\d+[smh]$/);
      expect(['warning', 'critical'], each.alert).toContain(each.labels.severity);
      expect(each.annotations.description?.length ?? 0, each.alert).toBeGreaterThan(40);
    }
  });

  it('covers the error ratio, queue wait, replicas down, store errors and heartbeat lateness', () => {
    const named = rules.map((each) => each.alert);
    for (const alert of [
      'GantryHighErrorRatio',
      'GantryQueueWaitHigh',
      'GantryUpstreamReplicaDown',
      'GantryResponseStoreErrors',
      'GantryLimitStoreErrors',
      'GantryHeartbeatsLate',
    ]) {
      expect(named).toContain(alert);
    }
  });

  it('is a PrometheusRule holding the same groups', () => {
    expect(rule).toMatchObject({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'gantry' },
    });
    expect(rule.spec.groups).toEqual(alerts.groups);
  });
});

describe('the Grafana dashboard (deploy/grafana)', () => {
  it('queries the chosen data source in every panel, each with its own id', () => {
    expect(new Set(dashboard.panels.map((panel) => panel.id)).size).toBe(dashboard.panels.length);
    for (const panel of graphs) {
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
      expect(panel.targets?.length ?? 0, panel.title).toBeGreaterThan(0);
    }
  });

  it('shows requests and errors, TTFT and inter-token latency, the queue, streams, heartbeats, replicas, stores, tenants and resumes', () => {
    const named = new Set(
      EXPRESSIONS.filter(({ where }) => where.startsWith('panel')).flatMap(({ expr }) => read(expr).metrics),
    );
    for (const metric of [
      'gantry_requests_total',
      'gantry_time_to_first_token_seconds_bucket',
      'gantry_inter_token_latency_seconds_bucket',
      'gantry_queued_requests',
      'gantry_queue_time_seconds_bucket',
      'gantry_active_requests',
      'gantry_heartbeats_total',
      'gantry_upstream_replica_healthy',
      'gantry_response_store_errors_total',
      'gantry_limit_store_errors_total',
      'gantry_tenant_tokens_total',
      'gantry_stream_resumes_total',
    ]) {
      expect(named).toContain(metric);
    }
  });
});

describe('every PromQL expression of the dashboard and the alerts', () => {
  it('parses without an error node (the parser of the Prometheus UI: @prometheus-io/lezer-promql)', () => {
    for (const { where, expr } of EXPRESSIONS) expect(read(expr).errors, `${where}: ${expr}`).toEqual([]);
  });

  it('is checked: a broken expression has error nodes', () => {
    expect(read('sum by (model) (rate(gantry_requests_total[5m])').errors).not.toEqual([]);
    expect(read('histogram_quantile(0.95, sum by (le) rate(gantry_queue_time_seconds_bucket[5m]))').errors).not.toEqual(
      [],
    );
    expect(read('rate(gantry_requests_total[$__rate_interval])')).toEqual({
      errors: [],
      metrics: ['gantry_requests_total'],
    });
  });
});

describe('every metric the dashboard and the alerts name is one GET /metrics exposes', () => {
  let upstream: MockUpstream;
  let cli: CliProcess;
  let exposition = '';

  beforeAll(async () => {
    upstream = await startMockUpstream();
    // Two workers (the instance metrics), an HTTP model (replicas), a contended model (the queue), a tenant.
    const file = writeConfig(
      [
        'server: { workers: 2 }',
        'auth:',
        '  apiKeys: [{ name: team, key: sk-team }]',
        'models:',
        `  - { name: fleet, engine: http, upstreams: ["${upstream.url}"], maxConcurrency: 4 }`,
        '',
      ].join('\n'),
    );
    cli = startCli(['--config', file, '--port', '0']);
    const url = await cli.listening;
    for (let index = 0; index < 4; index += 1) {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-team', connection: 'close' },
        body: JSON.stringify({
          model: 'fleet',
          stream: true,
          messages: [{ role: 'user', content: 'one two three four five six' }],
        }),
      });
      expect(response.status).toBe(200);
      await response.text();
    }
    exposition = await (await fetch(`${url}/metrics`)).text();
  }, 60_000);

  afterAll(async () => {
    cli?.child.kill('SIGKILL');
    await upstream?.close();
  });

  /** The series names the exposition declares (a histogram's _bucket, _sum and _count; a summary's quantiles, _sum and _count), and those it holds. */
  function exposedNames(text: string): Set<string> {
    const names = new Set<string>();
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      const suffixes =
        type === 'histogram' ? ['_bucket', '_sum', '_count'] : type === 'summary' ? ['', '_sum', '_count'] : [''];
      for (const suffix of suffixes) names.add(`${name}${suffix}`);
    }
    for (const [, name] of text.matchAll(/^([a-zA-Z_:][\w:]*)[{ ]/gm)) names.add(name!);
    return names;
  }

  it('names only series of the exposition, histograms by their _bucket, _sum or _count', () => {
    const exposed = exposedNames(exposition);
    expect(exposed).toContain('gantry_workers');
    expect(exposed).not.toContain('gantry_time_to_first_token_seconds');
    for (const { where, expr } of EXPRESSIONS) {
      for (const metric of read(expr).metrics)
        expect(exposed.has(metric), `${where} names ${metric}, which /metrics does not expose`).toBe(true);
    }
  });

  it('holds samples for the latency histograms the panels and alerts read (this gateway served streams)', () => {
    for (const histogram of [
      'gantry_time_to_first_token_seconds',
      'gantry_inter_token_latency_seconds',
      'gantry_queue_time_seconds',
      'gantry_tenant_queue_time_seconds',
    ]) {
      expect(exposition).toMatch(new RegExp(`^${histogram}_bucket\\{.*model="fleet"`, 'm'));
    }
    expect(exposition).toMatch(/^gantry_upstream_replica_healthy\{model="fleet",replica="[^"]+"\} [12]$/m);
    expect(exposition).toMatch(/^gantry_tenant_tokens_total\{tenant="team",model="fleet",kind="completion"\} [1-9]/m);
  });
});
