import type { ServerResponse } from 'node:http';
import type { MockBehaviour } from './mock-behaviour.js';

/** One chunk's worth of output. */
export type MockStep =
  | { kind: 'reasoning'; text: string }
  | { kind: 'content'; text: string }
  | { kind: 'tool'; index: number; id?: string; name?: string; arguments: string };

/** What the mock will say to one request, decided up front so that it is deterministic. */
export interface MockAnswer {
  steps: MockStep[];
  finishReason: 'stop' | 'length' | 'tool_calls';
  /** The stop string that cut the answer (vLLM's `stop_reason`). */
  stopReason: string | null;
  promptTokens: number;
  /** Steps of the whole answer that a continued final assistant message already held (0 for a fresh answer). */
  offset: number;
  /** Prompt tokens found in the prefix cache; absent when the mock keeps none. */
  cachedTokens?: number;
  reasoningTokens: number;
}

/** One request being answered: where to, what, and how. */
export interface MockReplyContext {
  response: ServerResponse;
  answer: MockAnswer;
  behaviour: MockBehaviour;
  id: string;
  created: number;
  model: string;
  /** Aborted when the client goes away: every wait ends at once. */
  signal: AbortSignal;
  /** Called when prefill ends and decoding begins (for the running/waiting gauges). */
  onDecoding: () => void;
  /** The message of an injected `status` or `error` failure. */
  failureMessage: string;
  /** A `/v1/completions` request: answered as `text_completion` (no role chunk, `text` for `delta`). */
  completion?: boolean;
  /** A completion's `logprobs` (its top N): each step's log probabilities are sent (mock-logprobs.ts). */
  logprobs?: number;
  /** Resolves when the server's scheduler lets the request run (after its headers, as vLLM streams). */
  scheduled?: () => Promise<void>;
}

export const EMPTY_PROMPT_ANSWER = 'Hello from the mock upstream';

interface ChatBody {
  messages?: Array<{ role?: string; content?: unknown }>;
  continue_final_message?: boolean;
  tools?: Array<{ function?: { name?: string } }>;
  tool_choice?: unknown;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[];
  chat_template_kwargs?: { enable_thinking?: unknown };
}

/**
 * Plans an answer. With tools offered (and tool_choice not `none`) and a last user message that
 * is a JSON object, it calls the named (or first) tool with that object, in three fragments.
 * Otherwise it answers `tokens` times `word`, or echoes the last user message word by word.
 * Reasoning comes first, unless `chat_template_kwargs.enable_thinking` is false (a Qwen3 template
 * then skips it). `max_tokens` counts every chunk (finish `length`); `stop` strings cut
 * the content (finish `stop`, `stopReason` set).
 *
 * With `continue_final_message` (vLLM's continuation of a final assistant message) the answer is
 * the rest of the one a fresh request would get: the steps the partial text already holds are
 * skipped (no reasoning: it came before the text), and `max_tokens` counts only what follows, so
 * a cut answer continued from where it stopped reads as one healthy answer.
 */
export function planAnswer(body: ChatBody, behaviour: MockBehaviour, callId: string): MockAnswer {
  const messages = body.messages ?? [];
  const promptTokens = promptTokensOf(body);
  const partial = body.continue_final_message === true ? textOf(messages.at(-1)?.content) : undefined;
  const thinks = body.chat_template_kwargs?.enable_thinking !== false;
  const reasoning =
    partial === undefined
      ? words((thinks && behaviour.reasoning) || '').map((text): MockStep => ({ kind: 'reasoning', text }))
      : [];
  const base = { stopReason: null, promptTokens, reasoningTokens: reasoning.length, offset: 0 };

  const toolCall = plannedToolCall(body, callId);
  if (toolCall) return { ...base, steps: [...reasoning, ...toolCall], finishReason: 'tool_calls' };

  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const text = textOf(lastUser?.content).trim();
  const said = partial === undefined ? 0 : words(partial).length;
  // One word past max_tokens is enough to finish with `length`; `tokens` may be huge (benchmarks).
  const wanted = Math.min(
    behaviour.tokens ?? 0,
    said + (body.max_completion_tokens ?? body.max_tokens ?? Number.POSITIVE_INFINITY) + 1,
  );
  const whole =
    behaviour.tokens !== undefined
      ? Array.from({ length: wanted }, (_, index) => (index === 0 ? behaviour.word : ` ${behaviour.word}`))
      : words(text.length > 0 ? text : EMPTY_PROMPT_ANSWER);
  const { rest: answer, offset } = partial === undefined ? { rest: whole, offset: 0 } : afterPartial(whole, partial);
  base.offset = offset;

  const steps: MockStep[] = [...reasoning];
  const stops = body.stop === undefined ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
  // As vLLM: stop strings are looked for in the new output only.
  let output = '';
  for (const piece of answer) {
    const stop = stops.find((candidate) => candidate.length > 0 && (output + piece).includes(candidate));
    if (stop) {
      const cut = (output + piece).indexOf(stop) - output.length;
      if (cut > 0) steps.push({ kind: 'content', text: piece.slice(0, cut) });
      return limit({ ...base, steps, finishReason: 'stop', stopReason: stop }, body);
    }
    output += piece;
    steps.push({ kind: 'content', text: piece });
  }
  return limit({ ...base, steps, finishReason: 'stop' }, body);
}

/**
 * The pieces of `whole` after the text `partial` holds, and how many pieces it held: a piece the
 * partial text ends inside goes on with its rest. From the first piece that does not match, the
 * partial is not this answer's start, and the rest of the answer follows from there.
 */
function afterPartial(whole: string[], partial: string): { rest: string[]; offset: number } {
  let consumed = 0;
  let index = 0;
  while (index < whole.length && consumed < partial.length) {
    const piece = whole[index];
    const left = partial.slice(consumed);
    if (left.startsWith(piece)) {
      consumed += piece.length;
      index += 1;
    } else if (piece.startsWith(left)) {
      return { rest: [piece.slice(left.length), ...whole.slice(index + 1)], offset: index + 1 };
    } else {
      break;
    }
  }
  return { rest: whole.slice(index), offset: index };
}

function limit(answer: MockAnswer, body: ChatBody): MockAnswer {
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens === undefined || answer.steps.length <= maxTokens) return answer;
  return { ...answer, steps: answer.steps.slice(0, maxTokens), finishReason: 'length', stopReason: null };
}

function plannedToolCall(body: ChatBody, callId: string): MockStep[] | undefined {
  const tools = body.tools ?? [];
  if (tools.length === 0 || body.tool_choice === 'none') return undefined;
  const last = body.messages?.at(-1);
  if (last?.role !== 'user') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(textOf(last.content));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const named = (body.tool_choice as { function?: { name?: string } } | undefined)?.function?.name;
  const name = named ?? tools[0].function?.name ?? 'tool';
  const json = JSON.stringify(parsed);
  const size = Math.ceil(json.length / 3);
  const fragments = [0, 1, 2]
    .map((part) => json.slice(part * size, (part + 1) * size))
    .filter((part) => part.length > 0);
  return [
    { kind: 'tool', index: 0, id: callId, name, arguments: '' },
    ...fragments.map((fragment): MockStep => ({ kind: 'tool', index: 0, arguments: fragment })),
  ];
}

/** A message's text: a string, or its text parts joined. */
/** The prompt's tokens as `usage` reports them: the words of every message. */
export function promptTokensOf(body: ChatBody): number {
  return (body.messages ?? []).reduce((sum, message) => sum + words(textOf(message.content)).length, 0);
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .flatMap((part: { type?: string; text?: unknown }) =>
      part?.type === 'text' && typeof part.text === 'string' ? [part.text] : [],
    )
    .join('\n');
}

/** Words with their leading space kept, so that the pieces join back into the text. */
function words(text: string): string[] {
  return text
    .split(/\s+/)
    .filter((word) => word.length > 0)
    .map((word, index) => (index === 0 ? word : ` ${word}`));
}
