import { agentBody } from './agent-body.js';
import type { BenchTarget } from './bench-stack.js';
import { streamChat } from './chat-client.js';
import { runClosedLoop } from './closed-loop.js';
import { interleave } from './interleave.js';
import { addTallies, cpuCostOf, cpuSnapshot, type CpuCost, type Tally } from './load-tally.js';
import { callFor, plan, tallyOf, type LoadTiming } from './streaming-load.js';

/** The agent scenario: large bodies (a coding agent's turn) streamed through the targets in turns. */
export interface AgentPlan {
  concurrency: number;
  /** Tokens of each answer (short: the request's cost is what this measures). */
  tokens: number;
  rounds: number;
  timing: LoadTiming;
}

export interface AgentResult {
  target: string;
  concurrency: number;
  tokensPerAnswer: number;
  bodyBytes: number;
  rounds: number;
  requestsPerSecond: number;
  /** Per request. */
  cpu: CpuCost;
  failures: Record<string, number>;
}

/** One window of agent turns: `concurrency` closed-loop clients, each streaming a short answer. */
async function agentRound(target: BenchTarget, agentPlan: AgentPlan, body: string): Promise<Tally> {
  const { call, close } = callFor(target, agentPlan.concurrency, body);
  const run = await runClosedLoop(
    plan(agentPlan.concurrency, agentPlan.timing),
    () => streamChat(call),
    () => cpuSnapshot(target),
  );
  close();
  return tallyOf(run, run.completedInWindow, 0);
}

/** Every target in turn, `rounds` windows each; CPU per request summed over the windows. */
export async function measureAgentTurns(targets: BenchTarget[], agentPlan: AgentPlan): Promise<AgentResult[]> {
  const bodies = targets.map((target) => agentBody(target.model, agentPlan.tokens, true));
  const tallies = await interleave(targets, agentPlan.rounds, (target) =>
    agentRound(target, agentPlan, bodies[targets.indexOf(target)]),
  );
  return targets.map((target, index) => {
    const sum = addTallies(tallies[index]);
    return {
      target: target.label,
      concurrency: agentPlan.concurrency,
      tokensPerAnswer: agentPlan.tokens,
      bodyBytes: Buffer.byteLength(bodies[index]),
      rounds: tallies[index].length,
      requestsPerSecond: sum.units / (sum.windowMs / 1000),
      cpu: cpuCostOf(sum),
      failures: sum.failures,
    };
  });
}
