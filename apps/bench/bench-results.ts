import type { AgentResult } from './agent-scenario.js';
import type { FailoverResults } from './failover-scenario.js';
import type { PauseResult } from './pause-scenario.js';
import type { IdleResult } from './idle-streams.js';
import type { MultiTurnResults } from './multi-turn.js';
import type { StoredResponsesResults } from './responses-store-load.js';
import type { LatencyResult, NonStreamingResult, StreamingResult } from './streaming-load.js';
import type { TenantsResults } from './tenants-scenario.js';
import type { FleetResults } from './fleet-scenario.js';
import type { WorkersResults } from './workers-scenario.js';

/** Target labels used in every scenario's rows. */
export const DIRECT = 'direct';
export const GANTRY_HTTP = 'gantry http';
export const GANTRY_STUB = 'gantry stub';
/** A reference row, not a target: Fastify + undici forwarding and nothing else (bare-proxy.ts). */
export const BARE_PROXY = 'bare proxy';
/** A reference row when asked for (`--nginx BIN`): nginx as a plain reverse proxy (nginx-proxy.ts). */
export const NGINX = 'nginx';

/** Everything one run measured: what the JSON report holds and the table is printed from. */
export interface BenchResults {
  startedAt: string;
  profile: 'full' | 'quick';
  durationMs: number;
  machine: { cpus: number; cpuModel: string; memoryBytes: number; node: string; platform: string };
  throughput?: StreamingResult[];
  latency?: LatencyResult[];
  nonStreaming?: NonStreamingResult[];
  agent?: AgentResult[];
  pause?: PauseResult[];
  /** `tokensPerAnswer` holds the inputs per request. */
  embeddings?: NonStreamingResult[];
  completions?: StreamingResult[];
  observability?: { off: StreamingResult[]; on: StreamingResult[]; sink: { requests: number; bytes: number } };
  storedResponses?: StoredResponsesResults;
  idle?: IdleResult[];
  multiTurn?: MultiTurnResults;
  failover?: FailoverResults;
  llama?: { available: true; model: string; results: StreamingResult[] } | { available: false; reason: string };
  workers?: WorkersResults;
  tenants?: TenantsResults;
  fleet?: FleetResults;
}
