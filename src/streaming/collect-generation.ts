import type { EngineEvent, FinishReason, Timings, TokenUsage } from '../engine/engine-event.js';
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
    case 'text':
      result.text += event.text;
      break;
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
      result.finishReason = event.finishReason;
      result.stopSequence = event.stopSequence;
      result.usage = event.usage;
      break;
  }
}
