import type { EngineEvent } from '../../engine/engine-event.js';

/**
 * A predicate (stateful: one per answer) telling which engine events show the answer moving on:
 * output (a token of text or reasoning, a tool-call piece), or counters that grew (completion
 * tokens, or llama.cpp's `predicted_n`: a parser may hold text back while tokens are made). Bytes,
 * SSE comments, empty chunks and repeated counters are not progress (see stallWatch).
 */
export function answerProgress(): (event: EngineEvent) => boolean {
  let tokens = 0;
  let predicted = 0;
  return (event) => {
    let output: boolean;
    switch (event.type) {
      case 'text':
      case 'reasoning':
        output = event.text.length > 0;
        break;
      case 'tool_call':
        output = true;
        break;
      case 'ack':
        output = false;
        break;
      default:
        return false;
    }
    if (event.usage === undefined) return output;
    const completion = event.usage.completionTokens;
    const made = event.timings?.predicted_n ?? 0;
    const grew = completion > tokens || made > predicted;
    if (completion > tokens) tokens = completion;
    if (made > predicted) predicted = made;
    return output || grew;
  };
}
