import type { BenchStack, BenchTarget } from './bench-stack.js';
import { chatUrlOf } from './bench-stack.js';
import type { ChildServer } from './child-server.js';
import { emptyTurnTally, runConversations, type TurnTally } from './conversation-load.js';
import type { ConversationShape } from './conversation-texts.js';
import { gatewayConfig } from './gateway-configs.js';
import { interleave } from './interleave.js';
import { counterDeltas, countersByReplica, maxOverMean } from './replica-counters.js';
import type { SampleSummary } from './samples.js';

export type Routing = 'least-outstanding' | 'prefix-affinity';

/** One way of routing the fleet, served as a gateway model of its own. */
export interface RoutingVariant {
  /** The row's name: the routing, and its load factor when not the default. */
  label: string;
  routing: Routing;
  routingLoadFactor?: number;
}

export const DEFAULT_LOAD_FACTOR = 1.25;

/** The multi-turn scenario: conversations over a fleet of mock engines that keep a prefix cache. */
export interface MultiTurnPlan extends ConversationShape {
  replicas: number;
  /** Conversations per routing and round. */
  conversations: number;
  /** Conversations in flight at once. */
  concurrency: number;
  /** The first `concurrency` conversations open over this long, not all at once. */
  rampMs: number;
  rounds: number;
  /** Unmeasured conversations per routing first (two turns each), so that neither starts cold. */
  warmupConversations: number;
  /** The mocks' behaviour: answer length, pace, prefill cost per uncached token, cache size. */
  answerTokens: number;
  tokenIntervalMs: number;
  prefillPerTokenMs: number;
  prefixCacheTokens: number;
  /** Prefix affinity is measured at each of these load factors (the first is the default, judged by the targets). */
  loadFactors: number[];
}

export interface MultiTurnResult {
  /** The variant's label: `least-outstanding`, `prefix-affinity`, `prefix-affinity c=2`. */
  routing: string;
  routingLoadFactor?: number;
  conversations: number;
  turns: number;
  firstTurnTtft: SampleSummary;
  followUpTtft: SampleSummary;
  /** Cached share of the prompt tokens, as the engines reported them. */
  cacheHitRate: { firstTurns?: number; followUps?: number };
  /** Requests each replica got (gateway's `gantry_upstream_requests_total`), in the order of the fleet. */
  replicaRequests: number[];
  /** The largest replica's share over the mean share. */
  maxShareOverMean?: number;
  /** `gantry_upstream_affinity_overrides_total`, summed over the replicas. */
  affinityOverrides: number;
  failures: Record<string, number>;
}

export interface MultiTurnResults {
  plan: MultiTurnPlan;
  results: MultiTurnResult[];
}

/** least-outstanding, then prefix affinity at each load factor of the plan. */
export function routingVariants(plan: Pick<MultiTurnPlan, 'loadFactors'>): RoutingVariant[] {
  return [
    { label: 'least-outstanding', routing: 'least-outstanding' },
    ...plan.loadFactors.map((routingLoadFactor): RoutingVariant => ({
      label: routingLoadFactor === DEFAULT_LOAD_FACTOR ? 'prefix-affinity' : `prefix-affinity c=${routingLoadFactor}`,
      routing: 'prefix-affinity',
      routingLoadFactor,
    })),
  ];
}

const modelOf = (variant: RoutingVariant) => `conv-${variant.label.replace(/[^\w.-]+/g, '-')}`;

/**
 * Starts `plan.replicas` mock engines with a prefix cache and one gateway serving the same fleet
 * under one model per routing variant (each with its own upstream model name, so their caches are
 * apart), and runs the same conversations through each, the variants taking turns round by round.
 */
export async function runMultiTurn(
  stack: BenchStack,
  plan: MultiTurnPlan,
  progress: (line: string) => void,
): Promise<MultiTurnResults> {
  const flags = [
    '--tokens',
    String(plan.answerTokens),
    '--word',
    'noted',
    '--token-interval-ms',
    String(plan.tokenIntervalMs),
    '--prefill-per-token-ms',
    String(plan.prefillPerTokenMs),
    '--prefix-cache-tokens',
    String(plan.prefixCacheTokens),
  ];
  const mocks = await Promise.all(
    Array.from({ length: plan.replicas }, (_, index) => stack.startMock(flags, `mock-engine-${index + 1}`)),
  );
  const upstreams = mocks.map((mock) => mock.url.toString());
  const variants = routingVariants(plan);
  const models = variants.map((variant) => ({
    name: modelOf(variant),
    engine: 'http',
    upstreams,
    upstreamModel: modelOf(variant),
    routing: variant.routing,
    ...(variant.routingLoadFactor === undefined ? {} : { routingLoadFactor: variant.routingLoadFactor }),
  }));
  let gateway: ChildServer | undefined;
  try {
    gateway = await stack.startGateway('multi-turn', gatewayConfig({ models }));
    const targets: BenchTarget[] = variants.map((variant) => ({
      label: variant.label,
      chatUrl: chatUrlOf(gateway!.url),
      model: modelOf(variant),
      gatewayPid: gateway!.pid,
    }));
    const warmShape = { ...plan, turns: Math.min(2, plan.turns) };
    progress(
      `multi-turn: warming up with ${plan.warmupConversations} conversations per routing (${variants.map((variant) => variant.label).join(', ')})`,
    );
    for (const target of targets) {
      await runConversations(
        target,
        warmShape,
        { first: 1_000_000, count: plan.warmupConversations },
        plan.concurrency,
        emptyTurnTally(),
        plan.rampMs,
      );
    }
    const before = await scrape(gateway);
    progress(
      `multi-turn: ${plan.conversations} conversations x ${plan.turns} turns per routing and round, ${plan.concurrency} at once, ` +
        `${plan.replicas} replicas, ${plan.rounds} round(s)`,
    );
    const tallies = variants.map(() => emptyTurnTally());
    let windows = 0;
    await interleave(targets, plan.rounds, async (target) => {
      const index = targets.indexOf(target);
      // Every variant gets the same conversations in a round: the comparison is paired.
      const first = Math.floor(windows / targets.length) * plan.conversations;
      await runConversations(
        target,
        plan,
        { first, count: plan.conversations },
        plan.concurrency,
        tallies[index],
        plan.rampMs,
      );
      windows += 1;
    });
    const after = await scrape(gateway);
    return {
      plan,
      results: variants.map((variant, index) => resultOf(variant, plan, tallies[index], upstreams, before, after)),
    };
  } finally {
    if (gateway) await stack.stop(gateway);
    await Promise.all(mocks.map((mock) => stack.stop(mock)));
  }
}

async function scrape(gateway: ChildServer): Promise<string> {
  const response = await fetch(new URL('/metrics', gateway.url));
  return response.text();
}

function resultOf(
  variant: RoutingVariant,
  plan: MultiTurnPlan,
  tally: TurnTally,
  upstreams: string[],
  before: string,
  after: string,
): MultiTurnResult {
  const model = modelOf(variant);
  const deltas = (metric: string) =>
    counterDeltas(countersByReplica(before, metric, model), countersByReplica(after, metric, model));
  const requests = deltas('gantry_upstream_requests_total');
  const replicaRequests = upstreams.map((url) => requests.get(url) ?? requests.get(url.replace(/\/$/, '')) ?? 0);
  const rate = (cached: number, prompt: number) => (prompt > 0 ? cached / prompt : undefined);
  return {
    routing: variant.label,
    ...(variant.routingLoadFactor === undefined ? {} : { routingLoadFactor: variant.routingLoadFactor }),
    conversations: plan.conversations * plan.rounds,
    turns: plan.turns,
    firstTurnTtft: tally.firstTtft.summary(),
    followUpTtft: tally.followUpTtft.summary(),
    cacheHitRate: {
      firstTurns: rate(tally.cachedTokens.first, tally.promptTokens.first),
      followUps: rate(tally.cachedTokens.followUps, tally.promptTokens.followUps),
    },
    replicaRequests,
    maxShareOverMean: maxOverMean(replicaRequests),
    affinityOverrides: [...deltas('gantry_upstream_affinity_overrides_total').values()].reduce(
      (sum, count) => sum + count,
      0,
    ),
    failures: tally.failures,
  };
}
