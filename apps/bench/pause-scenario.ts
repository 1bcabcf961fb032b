import { agentBody } from './agent-body.js';
import type { BenchTarget } from './bench-stack.js';
import { postChat } from './chat-client.js';
import { delay } from './closed-loop.js';
import { PACED_TOKEN_INTERVAL_MS } from './gateway-configs.js';
import { Samples, type SampleSummary } from './samples.js';
import { callFor, latencyRound, type LatencySamples, type LoadTiming } from './streaming-load.js';

/**
 * The loop-pause scenario: paced streams through the HTTP engine (their gaps between tokens are
 * the measure) while large bodies arrive at the same gateway, one every `everyMs`: what one
 * request's synchronous work (parsing, validation, decoding, the upstream body) costs every other
 * stream on the process.
 */
export interface PausePlan {
  streams: number;
  tokens: number;
  everyMs: number;
  /** Short messages in the many-messages body (the default `limits.maxMessages`). */
  manyMessages: number;
  timing: LoadTiming;
}

export interface PauseResult {
  /** What arrived beside the streams. */
  bodies: string;
  bodyBytes: number;
  sent: number;
  /** Answers with status 200 among them (the rest were refused, as a too-long conversation is). */
  accepted: number;
  /** The large requests' own time to their answer, ms. */
  answerMs: SampleSummary;
  /** The streams' gaps between consecutive tokens, ms. */
  gaps: SampleSummary;
}

/** Bodies of the kinds that pause a loop, with their labels (the stub answers: nothing reaches the mock). */
export function pauseBodies(plan: PausePlan): Array<{ label: string; body: string }> {
  const many = (count: number, parts: number) =>
    JSON.stringify({
      model: 'stub',
      max_tokens: 1,
      messages: Array.from({ length: count }, () => ({
        role: 'user',
        content: parts === 0 ? 'hi' : Array.from({ length: parts }, () => ({ type: 'text', text: 'hi' })),
      })),
    });
  return [
    { label: 'agent turns (181 messages, 24 tools)', body: agentBody('stub', 1, false) },
    { label: `${plan.manyMessages} short messages`, body: many(plan.manyMessages, 0) },
    { label: `${plan.manyMessages} messages of 8 text parts`, body: many(plan.manyMessages, 8) },
    { label: '10,000 short messages (over the limit: refused)', body: many(10_000, 0) },
    // 2 + 2,000 x 12 = 24,002 objects and arrays: the most limits.maxJsonNodes (25,000) lets through.
    {
      label: `${plan.manyMessages} messages of 10 text parts (most objects allowed)`,
      body: many(plan.manyMessages, 10),
    },
    // 1.6 million short strings: what JSON.parse alone costs (the bare proxy pays it too); refused after.
    { label: '8 MiB of short strings (parse only: refused)', body: shortStrings(8 * 1024 * 1024 - 1024) },
  ];
}

/** A chat body of about `bytes` whose size is one list of short strings (a `stop` list, which validation refuses). */
function shortStrings(bytes: number): string {
  const head = '{"model":"stub","messages":[{"role":"user","content":"hi"}],"stop":[';
  const count = Math.floor((bytes - head.length - 2) / 5);
  return `${head}${Array.from({ length: count }, () => '"ab"').join(',')}]}`;
}

/** One round per kind of body (and one with none first), the gaps measured on `streaming`. */
export async function measurePauses(
  streaming: BenchTarget,
  large: BenchTarget,
  plan: PausePlan,
): Promise<PauseResult[]> {
  const results: PauseResult[] = [];
  for (const kind of [undefined, ...pauseBodies(plan)]) {
    const samples: LatencySamples = { ttft: new Samples(), gaps: new Samples() };
    const answers = new Samples();
    let sent = 0;
    let accepted = 0;
    let stop = false;
    const sender = kind
      ? (async () => {
          const { call, close } = callFor(large, 1, kind.body);
          // oxlint-disable-next-line no-unmodified-loop-condition -- set when the measured window ends
          while (!stop) {
            const started = performance.now();
            sent += 1;
            const outcome = await postChat(call).done;
            answers.add(performance.now() - started);
            if (outcome.kind === 'completed') accepted += 1;
            await delay(plan.everyMs);
          }
          close();
        })()
      : Promise.resolve();
    await latencyRound(streaming, plan.streams, plan.tokens, PACED_TOKEN_INTERVAL_MS, plan.timing, samples);
    stop = true;
    await sender;
    results.push({
      bodies: kind?.label ?? 'none',
      bodyBytes: kind ? Buffer.byteLength(kind.body) : 0,
      sent,
      accepted,
      answerMs: answers.summary(),
      gaps: samples.gaps.summary(),
    });
  }
  return results;
}
