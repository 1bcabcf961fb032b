import type { GenerationRequest } from '../../engine/generation-request.js';
import { toUpstreamChatRequest, type UpstreamRequestOptions } from './upstream-chat-request.js';
import type { Replica } from './replica-pool.js';

/** An upstream request: the route under the replica's base URL, and its body. */
export interface UpstreamRequest {
  route: 'chat/completions' | 'completions';
  body: Record<string, unknown>;
}

/** How one attempt on a replica asks: for a whole answer or a stream, on which route, with which trace context. */
export interface AttemptOptions {
  whole: boolean;
  route: UpstreamRequest['route'];
  traceHeaders: Record<string, string>;
  onAccepted: () => void;
  /** Judges the failure (see HeldFailureJudge). */
  onFailure: (replica: Replica, error: unknown) => void;
}

/**
 * A generation as the upstream request it becomes: a chat completion, or for a raw completion
 * (`request.completion`) a `/completions` request with the client's prompt, suffix, echo and
 * logprobs, its sampling fields and those Gantry does not read, as the client sent them.
 */
export function toUpstreamRequest(request: GenerationRequest, options: UpstreamRequestOptions): UpstreamRequest {
  const completion = request.completion;
  if (completion === undefined) return { route: 'chat/completions', body: toUpstreamChatRequest(request, options) };
  // Chat's sampling and stream fields; its messages and reasoning switch have no place in a raw completion.
  const chat = toUpstreamChatRequest(request, { ...options, disableReasoningWith: undefined });
  delete chat.messages;
  return {
    route: 'completions',
    body: {
      ...completion.extra,
      ...chat,
      prompt: completion.prompt,
      suffix: completion.suffix,
      echo: completion.echo,
      logprobs: completion.logprobs,
    },
  };
}
