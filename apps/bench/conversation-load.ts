import type { BenchTarget } from './bench-stack.js';
import { keepAliveAgent, streamChat, type ChatCall } from './chat-client.js';
import { delay } from './closed-loop.js';
import { conversationScript, type ConversationShape } from './conversation-texts.js';
import { Samples } from './samples.js';

const REQUEST_TIMEOUT_MS = 60_000;

/** What the turns of a set of conversations measured, split into first turns and follow-ups. */
export interface TurnTally {
  firstTtft: Samples;
  followUpTtft: Samples;
  promptTokens: { first: number; followUps: number };
  cachedTokens: { first: number; followUps: number };
  turns: number;
  failures: Record<string, number>;
}

export function emptyTurnTally(): TurnTally {
  return {
    firstTtft: new Samples(),
    followUpTtft: new Samples(),
    promptTokens: { first: 0, followUps: 0 },
    cachedTokens: { first: 0, followUps: 0 },
    turns: 0,
    failures: {},
  };
}

interface TurnOutcome {
  ttftMs?: number;
  answer: string;
  promptTokens: number;
  cachedTokens: number;
  failure?: string;
}

type Message = { role: 'system' | 'user' | 'assistant'; content: string };

/**
 * Runs conversations `first` .. `first + count - 1` against `target`, `concurrency` at a time; each
 * sends its turns one after the other, the whole history every time, as chat clients and agents
 * do, after the user's pause; the first conversations open over `rampMs`. A failed turn ends its
 * conversation (counted in `failures`).
 */
export async function runConversations(
  target: BenchTarget,
  shape: ConversationShape,
  range: { first: number; count: number },
  concurrency: number,
  tally: TurnTally,
  rampMs = 0,
): Promise<void> {
  const agent = keepAliveAgent(concurrency);
  let next = range.first;
  const worker = async (index: number) => {
    // Users do not all open their conversations in the same millisecond.
    await delay((rampMs * index) / concurrency);
    while (next < range.first + range.count) {
      const script = conversationScript(shape, next);
      next += 1;
      const messages: Message[] = [
        { role: 'system', content: script.system },
        { role: 'user', content: script.document },
      ];
      for (let turn = 0; turn < shape.turns; turn += 1) {
        if (turn > 0) {
          await delay(script.thinkMs[turn - 1]);
          messages.push({ role: 'user', content: script.followUps[turn - 1] });
        }
        const call: ChatCall = {
          url: target.chatUrl,
          agent,
          body: JSON.stringify({
            model: target.model,
            messages,
            stream: true,
            stream_options: { include_usage: true },
          }),
          headers: target.headers,
          timeoutMs: REQUEST_TIMEOUT_MS,
        };
        const outcome = await sendTurn(call);
        tally.turns += 1;
        if (outcome.failure !== undefined || outcome.ttftMs === undefined) {
          const reason = outcome.failure ?? 'no output';
          tally.failures[reason] = (tally.failures[reason] ?? 0) + 1;
          break;
        }
        const part = turn === 0 ? 'first' : 'followUps';
        (turn === 0 ? tally.firstTtft : tally.followUpTtft).add(outcome.ttftMs);
        tally.promptTokens[part] += outcome.promptTokens;
        tally.cachedTokens[part] += outcome.cachedTokens;
        messages.push({ role: 'assistant', content: outcome.answer });
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, index) => worker(index)));
  agent.destroy();
}

/** One turn: time to the first token, the answer's text and the usage (cached tokens included). */
async function sendTurn(call: ChatCall): Promise<TurnOutcome> {
  const sent = performance.now();
  const outcome: TurnOutcome = { answer: '', promptTokens: 0, cachedTokens: 0 };
  const done = await streamChat(call, {
    onFrame: (kind, at, data) => {
      if (kind === 'token') {
        outcome.ttftMs ??= at - sent;
        outcome.answer +=
          (JSON.parse(data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '';
      } else if (kind === 'other' && data.includes('"choices":[]')) {
        const usage = (
          JSON.parse(data) as { usage?: { prompt_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } }
        ).usage;
        outcome.promptTokens = usage?.prompt_tokens ?? 0;
        outcome.cachedTokens = usage?.prompt_tokens_details?.cached_tokens ?? 0;
      }
    },
  }).done;
  if (done.kind !== 'completed') outcome.failure = done.kind === 'failed' ? done.reason : 'aborted';
  return outcome;
}
