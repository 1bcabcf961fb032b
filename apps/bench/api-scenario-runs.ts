import { completionsRound, embeddingsRound } from './api-scenarios.js';
import type { BenchOptions } from './bench-options.js';
import type { BenchResults } from './bench-results.js';
import type { BenchTarget } from './bench-stack.js';
import { interleave } from './interleave.js';
import { nonStreamingResult, streamingResult } from './streaming-load.js';

/**
 * The embeddings (non-streaming) and completions (streaming) scenarios, on the targets of the
 * forwarding scenarios (direct, the reference proxies, the gateway's HTTP and stub models), the
 * targets taking turns in each round.
 */
export async function runApiScenarios(
  options: BenchOptions,
  targets: BenchTarget[],
  results: BenchResults,
  progress: (line: string) => void,
): Promise<void> {
  const { profile } = options;
  const labels = targets.map((target) => target.label).join(' / ');
  if (options.scenarios.includes('embeddings')) {
    const { concurrency, inputs, rounds, timing } = profile.embeddings;
    progress(`embeddings: ${concurrency} concurrent, ${inputs} inputs a request, ${labels}, ${rounds} round(s)`);
    const tallies = await interleave(targets, rounds, (target) => embeddingsRound(target, concurrency, inputs, timing));
    results.embeddings = targets.map((target, index) =>
      nonStreamingResult(target.label, concurrency, inputs, tallies[index]),
    );
  }
  if (options.scenarios.includes('completions')) {
    const { streams, tokens, rounds, timing } = profile.completions;
    progress(`completions streaming: ${streams} stream(s), ${tokens} tokens, ${labels}, ${rounds} round(s)`);
    const tallies = await interleave(targets, rounds, (target) => completionsRound(target, streams, tokens, timing));
    results.completions = targets.map((target, index) =>
      streamingResult(target.label, streams, tokens, tallies[index]),
    );
  }
}
