/**
 * What the terminal client reads out of any of the three APIs: each API's decoder maps its own SSE
 * events onto this union, and the renderer reads only this union.
 *
 * Order within one answer: `opened` first (when the API has an opening frame), then any mix of
 * heartbeats, usage, timings and output, then exactly one `done` or `error`.
 */
export type ClientEvent =
  | { type: 'opened' }
  | { type: 'queued' }
  | { type: 'heartbeat' }
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call_start'; index: number; id?: string; name: string }
  | { type: 'tool_call_args'; index: number; fragment: string }
  | { type: 'usage'; usage: ClientUsage }
  | { type: 'timings'; timings: ClientTimings }
  | { type: 'done'; finishReason: string }
  | { type: 'error'; message: string };

/** Token counts so far (chat's continuous usage) or for the whole answer. */
export interface ClientUsage {
  promptTokens: number;
  completionTokens: number;
}

/** The llama.cpp `timings` fields the client shows; all optional because engines differ. */
export interface ClientTimings {
  prompt_n?: number;
  prompt_ms?: number;
  predicted_n?: number;
  predicted_ms?: number;
  predicted_per_second?: number;
}

/** Output a user sees: it ends the waiting phase (and with it the status line). */
export function isVisibleOutput(event: ClientEvent): boolean {
  return (
    event.type === 'text' ||
    event.type === 'reasoning' ||
    event.type === 'tool_call_start' ||
    event.type === 'tool_call_args'
  );
}
