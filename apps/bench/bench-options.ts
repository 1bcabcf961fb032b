import { parseArgs } from 'node:util';
import type { AgentPlan } from './agent-scenario.js';
import type { FailoverPlan } from './failover-scenario.js';
import type { PausePlan } from './pause-scenario.js';
import type { FleetPlan } from './fleet-scenario.js';
import type { IdlePlan } from './idle-streams.js';
import type { MultiTurnPlan } from './multi-turn.js';
import type { StoredResponsesPlan } from './responses-store-load.js';
import type { TenantsPlan } from './tenants-scenario.js';
import type { UpstreamWrites } from './gateway-configs.js';
import type { LoadTiming } from './streaming-load.js';
import type { WorkersPlan } from './workers-scenario.js';

export const SCENARIOS = [
  'throughput',
  'latency',
  'non-streaming',
  'agent',
  'pause',
  'embeddings',
  'completions',
  'observability',
  'stored-responses',
  'idle',
  'multi-turn',
  'failover',
  'llama',
  'workers',
  'tenants',
  'fleet',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** How long and how hard each scenario runs. Every loop in the benchmark is bounded by these. */
export interface BenchProfile {
  name: 'full' | 'quick';
  /** Unmeasured load on each fresh gateway (and the mock behind it) before its first scenario. */
  gatewayWarmupMs: number;
  /**
   * Comparisons are measured in `rounds` windows of `timing` each, the targets taking turns, so
   * that a slow drift of the machine (other work on it, a noisy neighbour) affects them alike.
   */
  /** Streaming as fast as it goes, for each way the mock writes its chunks (the stub only once: it has no upstream). */
  throughput: {
    concurrencies: number[];
    upstreamWrites: UpstreamWrites[];
    tokens: number;
    rounds: number;
    timing: LoadTiming;
  };
  latency: {
    streams: number;
    tokens: number;
    intervalMs: number;
    withStub: boolean;
    rounds: number;
    timing: LoadTiming;
  };
  nonStreaming: { concurrency: number; tokens: number; rounds: number; timing: LoadTiming };
  /** A coding agent's turn (a ~260 KB body), streamed with a short answer, against the bare proxy. */
  agent: AgentPlan;
  /** Paced streams' gaps while large bodies arrive beside them. */
  pause: PausePlan;
  /** Embeddings requests of `inputs` texts each, non-streaming. */
  embeddings: { concurrency: number; inputs: number; rounds: number; timing: LoadTiming };
  /** Completions streamed as fast as they go (`tokens` per answer). */
  completions: { streams: number; tokens: number; rounds: number; timing: LoadTiming };
  observability: {
    streams: number;
    tokens: number;
    engines: Array<'stub' | 'http'>;
    rounds: number;
    timing: LoadTiming;
  };
  storedResponses: StoredResponsesPlan;
  idle: IdlePlan;
  multiTurn: MultiTurnPlan;
  failover: FailoverPlan;
  llama: { concurrencies: number[]; maxTokens: number; timing: LoadTiming };
  workers: WorkersPlan;
  tenants: TenantsPlan;
  fleet: FleetPlan;
}

/** The default run: under three minutes on a 2-vCPU machine. */
export const FULL_PROFILE: BenchProfile = {
  name: 'full',
  gatewayWarmupMs: 2000,
  throughput: {
    concurrencies: [1, 16, 64],
    upstreamWrites: ['bursts', 'per-token'],
    tokens: 256,
    rounds: 3,
    timing: { warmupMs: 400, measureMs: 1000 },
  },
  latency: {
    streams: 64,
    tokens: 64,
    intervalMs: 10,
    withStub: true,
    rounds: 3,
    timing: { warmupMs: 800, measureMs: 1200 },
  },
  nonStreaming: { concurrency: 64, tokens: 16, rounds: 3, timing: { warmupMs: 300, measureMs: 1000 } },
  agent: { concurrency: 8, tokens: 16, rounds: 3, timing: { warmupMs: 500, measureMs: 1500 } },
  pause: { streams: 32, tokens: 64, everyMs: 100, manyMessages: 2000, timing: { warmupMs: 800, measureMs: 4000 } },
  embeddings: { concurrency: 64, inputs: 8, rounds: 3, timing: { warmupMs: 300, measureMs: 1000 } },
  completions: { streams: 16, tokens: 256, rounds: 3, timing: { warmupMs: 400, measureMs: 1000 } },
  observability: {
    streams: 64,
    tokens: 256,
    engines: ['http', 'stub'],
    rounds: 3,
    timing: { warmupMs: 300, measureMs: 1000 },
  },
  storedResponses: {
    streams: 64,
    tokens: 256,
    engines: ['stub', 'http'],
    background: true,
    prefillResponses: 10_000,
    prefillMaxMs: 15_000,
    rounds: 3,
    timing: { warmupMs: 300, measureMs: 1000 },
    memory: { responses: 5000, events: 100_000 },
  },
  idle: {
    streams: 5000,
    holdMs: 20_000,
    keepaliveMs: 1000,
    openPerSecond: 2500,
    openTimeoutMs: 30_000,
    warmStreams: 200,
    settleMs: 1000,
  },
  multiTurn: {
    replicas: 4,
    conversations: 128,
    concurrency: 128,
    rampMs: 2000,
    rounds: 2,
    turns: 5,
    thinkMs: [300, 900],
    warmupConversations: 32,
    systemPrompts: 6,
    systemPromptTokens: 2000,
    documentTokens: 600,
    followUpTokens: 40,
    answerTokens: 32,
    tokenIntervalMs: 10,
    prefillPerTokenMs: 0.05,
    prefixCacheTokens: 262_144,
    loadFactors: [1.25, 2],
  },
  failover: {
    replicas: 3,
    streams: 32,
    tokens: 100,
    tokenIntervalMs: 10,
    warmupMs: 2000,
    durationMs: 30_000,
    killEveryMs: 3000,
    downMs: 1000,
  },
  llama: { concurrencies: [1, 4], maxTokens: 128, timing: { warmupMs: 500, measureMs: 3000 } },
  workers: {
    counts: [1, 2],
    warmupMs: 2000,
    saturated: { streams: 64, tokens: 256, rounds: 3, timing: { warmupMs: 400, measureMs: 1000 } },
    paced: { streamsPerWorker: 32, tokens: 64, rounds: 3, timing: { warmupMs: 800, measureMs: 1200 } },
    admission: { concurrencies: [16], tokens: 16, rounds: 3, timing: { warmupMs: 300, measureMs: 1000 } },
    roundTrips: { inFlight: [1, 16, 64], durationMs: 800 },
    stored: { concurrency: 16, tokens: 16, rounds: 2, timing: { warmupMs: 300, measureMs: 800 } },
  },
  tenants: {
    noisyStreams: 32,
    tokens: 8,
    tokenIntervalMs: 5,
    quietThinkMs: 50,
    unloadedRequests: 40,
    timing: { warmupMs: 1000, measureMs: 8000 },
    scheduler: { waiting: 10_000, tenants: 100, operations: 200_000 },
  },
  fleet: {
    maxRunning: 4,
    metricsIntervalMs: 100,
    swamped: {
      outsideStreams: 16,
      outside: { tokens: 100, intervalMs: 10 },
      requests: 48,
      concurrency: 6,
      answer: { tokens: 20, intervalMs: 10 },
    },
    tenants: {
      maxRunning: 2,
      noisyRequests: 40,
      noisy: { tokens: 100, intervalMs: 20 },
      quietRequests: 16,
      quietDelayMs: 2000,
      quietThinkMs: 500,
      quiet: { tokens: 10, intervalMs: 20 },
    },
  },
};

/** `--quick`: the same scenarios, smaller and shorter (under a minute): a check that everything runs. */
export const QUICK_PROFILE: BenchProfile = {
  name: 'quick',
  gatewayWarmupMs: 600,
  throughput: {
    concurrencies: [1, 64],
    upstreamWrites: ['bursts', 'per-token'],
    tokens: 256,
    rounds: 1,
    timing: { warmupMs: 150, measureMs: 500 },
  },
  latency: {
    streams: 64,
    tokens: 32,
    intervalMs: 10,
    withStub: false,
    rounds: 1,
    timing: { warmupMs: 350, measureMs: 800 },
  },
  nonStreaming: { concurrency: 64, tokens: 16, rounds: 1, timing: { warmupMs: 150, measureMs: 500 } },
  agent: { concurrency: 8, tokens: 16, rounds: 1, timing: { warmupMs: 200, measureMs: 600 } },
  pause: { streams: 32, tokens: 64, everyMs: 100, manyMessages: 2000, timing: { warmupMs: 400, measureMs: 1000 } },
  embeddings: { concurrency: 64, inputs: 8, rounds: 1, timing: { warmupMs: 150, measureMs: 500 } },
  completions: { streams: 16, tokens: 256, rounds: 1, timing: { warmupMs: 150, measureMs: 500 } },
  observability: { streams: 64, tokens: 256, engines: ['http'], rounds: 1, timing: { warmupMs: 150, measureMs: 500 } },
  storedResponses: {
    ...FULL_PROFILE.storedResponses,
    prefillResponses: 2000,
    prefillMaxMs: 4000,
    rounds: 1,
    timing: { warmupMs: 150, measureMs: 500 },
    memory: { responses: 1000, events: 20_000 },
  },
  idle: {
    streams: 500,
    holdMs: 2000,
    keepaliveMs: 500,
    openPerSecond: 2500,
    openTimeoutMs: 10_000,
    warmStreams: 20,
    settleMs: 300,
  },
  multiTurn: {
    ...FULL_PROFILE.multiTurn,
    conversations: 32,
    concurrency: 32,
    rampMs: 1000,
    thinkMs: [100, 300],
    tokenIntervalMs: 5,
    rounds: 1,
    turns: 3,
    warmupConversations: 16,
    loadFactors: [1.25],
  },
  failover: { ...FULL_PROFILE.failover, warmupMs: 1000, durationMs: 9000 },
  llama: { concurrencies: [1], maxTokens: 64, timing: { warmupMs: 200, measureMs: 800 } },
  workers: {
    counts: [1, 2],
    warmupMs: 200,
    saturated: { streams: 64, tokens: 256, rounds: 1, timing: { warmupMs: 100, measureMs: 300 } },
    paced: { streamsPerWorker: 32, tokens: 64, rounds: 1, timing: { warmupMs: 100, measureMs: 250 } },
    admission: { concurrencies: [16], tokens: 16, rounds: 1, timing: { warmupMs: 100, measureMs: 400 } },
    roundTrips: { inFlight: [1, 64], durationMs: 100 },
    stored: { concurrency: 16, tokens: 16, rounds: 1, timing: { warmupMs: 100, measureMs: 300 } },
  },
  tenants: {
    ...FULL_PROFILE.tenants,
    noisyStreams: 16,
    unloadedRequests: 20,
    timing: { warmupMs: 500, measureMs: 4000 },
    scheduler: { waiting: 10_000, tenants: 100, operations: 50_000 },
  },
  fleet: {
    maxRunning: 4,
    metricsIntervalMs: 100,
    swamped: {
      outsideStreams: 16,
      outside: { tokens: 50, intervalMs: 10 },
      requests: 24,
      concurrency: 6,
      answer: { tokens: 10, intervalMs: 10 },
    },
    tenants: {
      maxRunning: 2,
      noisyRequests: 40,
      noisy: { tokens: 60, intervalMs: 10 },
      quietRequests: 6,
      quietDelayMs: 1000,
      quietThinkMs: 250,
      quiet: { tokens: 5, intervalMs: 10 },
    },
  },
};

export interface BenchOptions {
  profile: BenchProfile;
  scenarios: ScenarioName[];
  /** Folder of the JSON report. */
  outDir: string;
  /**
   * `--profile cpu|heap|gc`: gateways and the bare proxy run with `--cpu-prof`, `--heap-prof` or a
   * GC trace, their files under `<outDir>/profiles` (profile-summary.ts reads them).
   */
  profileGateways?: 'cpu' | 'heap' | 'gc';
  /** `--nginx BIN`: nginx reference rows in the throughput and non-streaming scenarios. */
  nginx?: string;
  /** `--ab DIR`: instead of the scenarios, the paired A/B of the build in DIR (before) against this one. */
  ab?: string;
}

export const USAGE = `Usage: npm run bench -- [--quick] [--only SCENARIOS] [--idle-streams N] [--out DIR] [--profile cpu|heap|gc] [--nginx BIN] [--ab DIR]

  --quick            a short run (under a minute) of every scenario
  --only LIST        comma-separated: ${SCENARIOS.join(', ')}
  --idle-streams N   streams held open by the idle scenario (default 5000; 500 with --quick)
  --out DIR          where the JSON report goes (default bench-results)
  --profile KIND     run the gateways and the bare proxy with node --cpu-prof, --heap-prof or
                     --trace-gc-nvp (KIND cpu, heap or gc), their files under DIR/profiles, one
                     folder or log per process (figures get slower); read them with
                     node dist/apps/bench/profile-summary.js FILE...
  --nginx BIN        also measure nginx (BIN: its path, or a name on PATH) as a plain reverse
                     proxy of the mock, in the throughput and non-streaming scenarios: a
                     reference row, as the bare proxy is (the run takes longer)
  --ab DIR           instead of the scenarios: a paired A/B of the build in DIR (another
                     checkout, built) against this one, both gateways side by side taking turns:
                     CPU per streamed chunk and per non-streaming request, heap per idle stream,
                     stub and HTTP engines, each against its budget (about 11 minutes; --quick: 1)

Starts the mock upstream and gateways (node dist/...) on loopback and measures, in one run, a
client talking to the mock directly and through Gantry. See docs/benchmarks.md.`;

/** Parses the command line; throws an Error whose message says what is wrong. */
export function parseBenchOptions(argv: string[]): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      'idle-streams': { type: 'string' },
      out: { type: 'string', default: 'bench-results' },
      profile: { type: 'string' },
      nginx: { type: 'string' },
      ab: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  const base = values.quick ? QUICK_PROFILE : FULL_PROFILE;
  const profile: BenchProfile = { ...base, idle: { ...base.idle } };
  if (values['idle-streams'] !== undefined) {
    const streams = Number(values['idle-streams']);
    if (!Number.isInteger(streams) || streams < 1 || streams > 9000)
      throw new Error('--idle-streams must be an integer from 1 to 9000');
    profile.idle.streams = streams;
  }
  const scenarios = values.only === undefined ? [...SCENARIOS] : values.only.split(',').map((name) => name.trim());
  const unknown = scenarios.filter((name) => !(SCENARIOS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')} (known: ${SCENARIOS.join(', ')})`);
  if (values.profile !== undefined && !['cpu', 'heap', 'gc'].includes(values.profile))
    throw new Error('--profile must be cpu, heap or gc');
  if (values.nginx !== undefined && values.nginx.trim() === '')
    throw new Error('--nginx needs the nginx binary (a path, or a name on PATH)');
  if (values.ab !== undefined && values.ab.trim() === '')
    throw new Error('--ab needs the folder of the other checkout (built)');
  return {
    profile,
    scenarios: scenarios as ScenarioName[],
    outDir: values.out,
    ...(values.profile ? { profileGateways: values.profile as 'cpu' | 'heap' | 'gc' } : {}),
    ...(values.nginx !== undefined ? { nginx: values.nginx } : {}),
    ...(values.ab !== undefined ? { ab: values.ab } : {}),
  };
}
