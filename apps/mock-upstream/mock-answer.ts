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
}

export const EMPTY_PROMPT_ANSWER = 'Hello from the mock upstream';

interface ChatBody {
  messages?: Array<{ role?: string; content?: unknown }>;
  tools?: Array<{ function?: { name?: string } }>;
  tool_choice?: unknown;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[];
}

/**
 * Plans an answer. With tools offered (and tool_choice not `none`) and a last user message that
 * is a JSON object, it calls the named (or first) tool with that object, in three fragments.
 * Otherwise it answers `tokens` times `word`, or echoes the last user message word by word.
 * Reasoning comes first. `max_tokens` counts every chunk (finish `length`); `stop` strings cut
 * the content (finish `stop`, `stopReason` set).
 */
export function planAnswer(body: ChatBody, behaviour: MockBehaviour, callId: string): MockAnswer {
  const messages = body.messages ?? [];
  const promptTokens = promptTokensOf(body);
  const reasoning = words(behaviour.reasoning ?? '').map((text): MockStep => ({ kind: 'reasoning', text }));
  const base = { stopReason: null, promptTokens, reasoningTokens: reasoning.length };

  const toolCall = plannedToolCall(body, callId);
  if (toolCall) return { ...base, steps: [...reasoning, ...toolCall], finishReason: 'tool_calls' };

  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const text = textOf(lastUser?.content).trim();
  // One word past max_tokens is enough to finish with `length`; `tokens` may be huge (benchmarks).
  const wanted = Math.min(behaviour.tokens ?? 0, (body.max_completion_tokens ?? body.max_tokens ?? Number.POSITIVE_INFINITY) + 1);
  const answer =
    behaviour.tokens !== undefined
      ? Array.from({ length: wanted }, (_, index) => (index === 0 ? behaviour.word : ` ${behaviour.word}`))
      : words(text.length > 0 ? text : EMPTY_PROMPT_ANSWER);

  const steps: MockStep[] = [...reasoning];
  const stops = body.stop === undefined ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
  let said = '';
  for (const piece of answer) {
    const stop = stops.find((candidate) => candidate.length > 0 && (said + piece).includes(candidate));
    if (stop) {
      const cut = (said + piece).indexOf(stop) - said.length;
      if (cut > 0) steps.push({ kind: 'content', text: piece.slice(0, cut) });
      return limit({ ...base, steps, finishReason: 'stop', stopReason: stop }, body);
    }
    said += piece;
    steps.push({ kind: 'content', text: piece });
  }
  return limit({ ...base, steps, finishReason: 'stop' }, body);
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
  const fragments = [0, 1, 2].map((part) => json.slice(part * size, (part + 1) * size)).filter((part) => part.length > 0);
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
    .flatMap((part: { type?: string; text?: unknown }) => (part?.type === 'text' && typeof part.text === 'string' ? [part.text] : []))
    .join('\n');
}

/** Words with their leading space kept, so that the pieces join back into the text. */
function words(text: string): string[] {
  return text
    .split(/\s+/)
    .filter((word) => word.length > 0)
    .map((word, index) => (index === 0 ? word : ` ${word}`));
}
