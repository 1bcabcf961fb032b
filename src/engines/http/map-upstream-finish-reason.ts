import type { FinishReason } from '../../engine/engine-event.js';

/** An upstream `finish_reason` to the neutral one; anything unknown ended the output normally. */
export function mapUpstreamFinishReason(reason: string): FinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    case 'abort':
      return 'abort';
    default:
      return 'stop';
  }
}
