import type { ChatMessage, GenerationRequest } from '../../engine/generation-request.js';
import { textOf } from '../../engine/generation-request.js';

/** One token the stub will produce. */
export type StubStep =
  | { kind: 'reasoning'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'tool'; index: number; id?: string; name?: string; arguments: string };

export const EMPTY_PROMPT_ANSWER =
  'This is the Gantry stub engine: send some text and it will be echoed back word by word.';

const ARGUMENT_FRAGMENTS = 4;

/**
 * What the stub answers, token by token, decided up front so the engine only has to pace it:
 * - the configured reasoning text first, one word per token;
 * - tool calls when tools are offered, the choice is `required` or names a function, and the last
 *   user message is a JSON object (one call) or an array of objects (one call each);
 * - after tool results, their contents; otherwise the last user message (a fixed sentence when empty).
 */
export function planStubSteps(
  request: GenerationRequest,
  reasoning: string | undefined,
  callPrefix: string,
): StubStep[] {
  const steps: StubStep[] = [];
  // Loops, not push(...spread): a prompt of 200,000 words would overflow the call stack.
  if (reasoning !== undefined) for (const text of words(reasoning)) steps.push({ kind: 'reasoning', text });

  const calls = plannedToolCalls(request);
  if (calls !== undefined) {
    calls.forEach((argumentsText, index) => {
      fragments(argumentsText, ARGUMENT_FRAGMENTS).forEach((fragment, position) => {
        steps.push(
          position === 0
            ? { kind: 'tool', index, id: `${callPrefix}_${index}`, name: calls.toolName, arguments: fragment }
            : { kind: 'tool', index, arguments: fragment },
        );
      });
    });
    return steps;
  }

  for (const text of words(answerText(request.messages))) steps.push({ kind: 'text', text });
  return steps;
}

/** Prompt tokens: whitespace-separated words in every message. */
export function countPromptWords(messages: readonly ChatMessage[]): number {
  let count = 0;
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        count += words(textOf(message)).length;
        break;
      case 'assistant':
        count += words(message.content).length;
        for (const call of message.toolCalls ?? []) count += words(call.arguments).length;
        break;
      default:
        count += words(message.content).length;
    }
  }
  return count;
}

function answerText(messages: readonly ChatMessage[]): string {
  const results: string[] = [];
  for (let index = messages.length - 1; index >= 0 && messages[index].role === 'tool'; index -= 1) {
    results.unshift(messages[index].content as string);
  }
  if (results.length > 0) return results.join(' ');
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const text = lastUser && lastUser.role === 'user' ? textOf(lastUser).trim() : '';
  return text.length > 0 ? text : EMPTY_PROMPT_ANSWER;
}

function plannedToolCalls(request: GenerationRequest): (string[] & { toolName: string }) | undefined {
  const choice = request.toolChoice;
  if (request.tools.length === 0 || (choice !== 'required' && typeof choice !== 'object')) return undefined;
  const last = request.messages.at(-1);
  if (last?.role !== 'user') return undefined;

  let parsed: unknown;
  try {
    parsed = JSON.parse(textOf(last));
  } catch {
    return undefined;
  }
  const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  let argumentsList: unknown[];
  if (isObject(parsed)) argumentsList = [parsed];
  else if (Array.isArray(parsed) && parsed.length > 0 && parsed.every(isObject)) argumentsList = parsed;
  else return undefined;
  if (!request.parallelToolCalls) argumentsList = argumentsList.slice(0, 1);

  const toolName = typeof choice === 'object' ? choice.name : request.tools[0].name;
  return Object.assign(
    argumentsList.map((value) => JSON.stringify(value)),
    { toolName },
  );
}

/** Words with the spacing kept, so that the pieces concatenate back to the text. */
function words(text: string): string[] {
  return text
    .split(/\s+/)
    .filter((word) => word.length > 0)
    .map((word, index) => (index === 0 ? word : ` ${word}`));
}

function fragments(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count));
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size));
  return pieces;
}
