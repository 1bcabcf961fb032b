import type { CompletionLogprobs, EngineEvent, FinishReason, Timings, TokenUsage } from '../engine/engine-event.js';
import { countersOf, ZERO_USAGE } from '../engine/engine-event.js';

/** A whole generation, gathered for a non-streaming answer. */
export interface GenerationResult {
  text: string;
  reasoning: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: FinishReason;
  stopSequence?: string;
  usage: TokenUsage;
  timings?: Timings;
  /** A completion's log probabilities, joined over its pieces. */
  logprobs?: CompletionLogprobs;
  /** Each choice of a completion with several, by index (then `text` is the first one's). */
  choices?: GenerationChoice[];
}

/** One choice of a completion with several. */
export interface GenerationChoice {
  text: string;
  finishReason: FinishReason;
  logprobs?: CompletionLogprobs;
}

/** The result of a generation that has produced nothing yet. */
export function emptyGeneration(): GenerationResult {
  return { text: '', reasoning: '', toolCalls: [], finishReason: 'stop', usage: ZERO_USAGE };
}

/**
 * Folds one engine event into a non-streaming answer's result (in place). Tool-call pieces are
 * joined by index, as a streaming client would join them. A plain fold, not an RxJS `reduce`:
 * the responder already sees every event, and an operator chain would add a subscriber per request.
 */
export function collectEvent(result: GenerationResult, event: EngineEvent): void {
  const counted = countersOf(event);
  if (counted !== undefined) {
    result.usage = counted.usage;
    result.timings = counted.timings;
  }
  switch (event.type) {
    case 'text': {
      const choice = event.choice === undefined ? result : choiceOf(result, event.choice);
      choice.text += event.text;
      if (event.logprobs !== undefined) choice.logprobs = joinLogprobs(choice.logprobs, event.logprobs);
      break;
    }
    case 'reasoning':
      result.reasoning += event.text;
      break;
    case 'tool_call': {
      const call = (result.toolCalls[event.index] ??= { id: '', name: '', arguments: '' });
      if (event.id !== undefined) call.id = event.id;
      if (event.name !== undefined) call.name = event.name;
      call.arguments += event.arguments;
      break;
    }
    case 'done':
      for (const [index, end] of (event.choices ?? []).entries())
        choiceOf(result, index).finishReason = end.finishReason;
      if (result.choices !== undefined) result.text = result.choices[0]?.text ?? '';
      result.finishReason = event.finishReason;
      result.stopSequence = event.stopSequence;
      result.usage = event.usage;
      break;
  }
}

function choiceOf(result: GenerationResult, index: number): GenerationChoice {
  const choices = (result.choices ??= []);
  for (let missing = choices.length; missing <= index; missing += 1) choices.push({ text: '', finishReason: 'stop' });
  return choices[index];
}

/** Log probabilities so far with a piece's added (in place after the first piece, which is copied). */
export function joinLogprobs(before: CompletionLogprobs | undefined, piece: CompletionLogprobs): CompletionLogprobs {
  const joined = before ?? { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  joined.tokens.push(...piece.tokens);
  joined.token_logprobs.push(...piece.token_logprobs);
  joined.top_logprobs.push(...piece.top_logprobs);
  joined.text_offset.push(...piece.text_offset);
  return joined;
}
