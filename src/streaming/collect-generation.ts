import { reduce, type OperatorFunction } from 'rxjs';
import type { EngineEvent, FinishReason, Timings, TokenUsage } from '../engine/engine-event.js';
import { ZERO_USAGE } from '../engine/engine-event.js';

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

/**
 * Folds an engine event stream into one GenerationResult, emitted when the stream completes.
 * Tool-call pieces are joined by index, as a streaming client would join them.
 */
export function collectGeneration(): OperatorFunction<EngineEvent, GenerationResult> {
  return reduce<EngineEvent, GenerationResult>(
    (result, event) => {
      switch (event.type) {
        case 'ack':
          result.usage = event.usage;
          result.timings = event.timings;
          break;
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
      return result;
    },
    { text: '', reasoning: '', toolCalls: [], finishReason: 'stop', usage: ZERO_USAGE },
  );
}
