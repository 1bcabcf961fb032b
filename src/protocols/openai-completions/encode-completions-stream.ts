import { Observable, type OperatorFunction } from 'rxjs';
import type { CompletionLogprobs, TokenUsage } from '../../engine/engine-event.js';
import { ZERO_USAGE } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { toOpenAIErrorBody } from '../errors/openai-error.js';
import { toChatFinishReason } from '../openai-chat/chat-usage.js';
import { flattenString } from '../sse/flatten-string.js';
import { DONE_FRAME, type SseFrame } from '../sse/sse-frame.js';

export interface CompletionIdentity {
  id: string;
  model: string;
  created: number;
}

export interface CompletionsStreamOptions extends CompletionIdentity {
  /** `stream_options.include_usage`: a final `choices: []` chunk with the whole usage. */
  includeUsage: boolean;
}

/** Completions `usage`: prompt, completion and total tokens. */
export function toCompletionUsage(usage: TokenUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/**
 * Engine events (and heartbeats) to `text_completion` chunks. The API has no opening frame: the
 * stream's head leaves with its first heartbeat or its first text, so a refusal before either gets
 * its real status. A heartbeat is a chunk of empty text (`choices: [{index: 0, text: ""}]`), which
 * the SDKs and editors join as nothing. Reasoning and tool calls have no place in this API and are
 * left out. A completion with several choices (prompts times `n`) tags each text with its
 * choice's index and ends with a finish chunk per choice. The finish chunk carries the finish reason; `include_usage` adds a `choices: []` chunk
 * with the usage; `[DONE]` ends it. A failure after the head is `data: {"error": ...}` then `[DONE]`.
 */
export function encodeCompletionsStream(options: CompletionsStreamOptions): OperatorFunction<StreamEvent, SseFrame> {
  return (source) =>
    new Observable<SseFrame>((subscriber) => {
      const prefix =
        `{"id":${JSON.stringify(options.id)},"object":"text_completion",` +
        `"created":${options.created},"model":${JSON.stringify(options.model)},"choices":`;
      flattenString(prefix);
      const chunk = (text: string, finishReason: string | null = null, index = 0, logprobs?: CompletionLogprobs) =>
        subscriber.next({
          data: `${prefix}[{"index":${index},"text":${JSON.stringify(text)},"logprobs":${logprobs === undefined ? 'null' : JSON.stringify(logprobs)},"finish_reason":${finishReason === null ? 'null' : `"${finishReason}"`}}]}`,
        });
      let usage: TokenUsage = ZERO_USAGE;
      return source.subscribe({
        next: (event) => {
          switch (event.type) {
            case 'heartbeat':
              return chunk('');
            case 'text':
              if (event.usage !== undefined) usage = event.usage;
              return chunk(event.text, null, event.choice, event.logprobs);
            case 'done':
              usage = event.usage;
              // Several choices end together, each with its own finish chunk.
              if (event.choices === undefined) chunk('', toChatFinishReason(event.finishReason));
              else
                for (const [index, end] of event.choices.entries())
                  chunk('', toChatFinishReason(end.finishReason), index);
              if (options.includeUsage)
                subscriber.next({ data: `${prefix}[],"usage":${JSON.stringify(toCompletionUsage(usage))}}` });
              return;
            default:
              return;
          }
        },
        error: (error: unknown) => {
          subscriber.next({ data: JSON.stringify(toOpenAIErrorBody(asGatewayError(error))) });
          subscriber.next(DONE_FRAME);
          subscriber.complete();
        },
        complete: () => {
          subscriber.next(DONE_FRAME);
          subscriber.complete();
        },
      });
    });
}
