import type { ClientEvent, ClientTimings } from './client-event.js';
import type { ApiRequest, GatewayApi, SseDecoder, TurnInput } from './gateway-api.js';
import { errorMessageOf, nonEmpty, parseWireJson } from './wire-json.js';

/** The parts of a `chat.completion.chunk` the client reads, with vLLM's usage and llama.cpp's `timings`. */
interface ChatChunk {
  choices: Array<{
    index?: number;
    delta?: {
      role?: string;
      content?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  timings?: ClientTimings;
  error?: unknown;
}

/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), asking for vLLM's continuous usage and
 * llama.cpp's per-token timings so that the client can show live counts and speed.
 *
 * Heartbeat: a chunk whose only choice has an empty delta and no finish reason (the stream
 * semantics in docs/architecture.md). The role chunk opens the stream; `data: [DONE]` ends it.
 */
export const chatCompletionsApi: GatewayApi = {
  name: 'chat',

  buildRequest(input: TurnInput): ApiRequest {
    const system = input.system === undefined ? [] : [{ role: 'system', content: input.system }];
    const body: Record<string, unknown> = {
      model: input.model,
      messages: [...system, ...input.messages],
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
      timings_per_token: true,
    };
    if (input.maxTokens !== undefined) body.max_completion_tokens = input.maxTokens;
    return { path: '/v1/chat/completions', headers: {}, body };
  },

  createDecoder(): SseDecoder {
    let finishReason = 'stop';
    let opened = false;
    return (message) => {
      if (message.data === '[DONE]') return [{ type: 'done', finishReason }];
      const chunk = parseWireJson<ChatChunk>(message.data);
      if (!chunk) return [];
      const error = errorMessageOf(chunk);
      if (chunk.error || message.event === 'error')
        return [{ type: 'error', message: error ?? 'the stream reported an error' }];

      const events: ClientEvent[] = [];
      const choice = chunk.choices?.[0];
      const delta = choice?.delta ?? {};
      if (!opened && delta.role !== undefined) {
        opened = true;
        events.push({ type: 'opened' });
      }
      if (chunk.choices?.length === 1 && Object.keys(delta).length === 0 && !choice?.finish_reason) {
        events.push({ type: 'heartbeat' });
      }
      const reasoning = nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning);
      if (reasoning) events.push({ type: 'reasoning', text: reasoning });
      const content = nonEmpty(delta.content);
      if (content) events.push({ type: 'text', text: content });
      for (const call of delta.tool_calls ?? []) {
        const index = call.index ?? 0;
        const name = nonEmpty(call.function?.name);
        if (name) events.push({ type: 'tool_call_start', index, id: call.id, name });
        const fragment = nonEmpty(call.function?.arguments);
        if (fragment) events.push({ type: 'tool_call_args', index, fragment });
      }
      if (choice?.finish_reason) finishReason = choice.finish_reason;
      if (chunk.usage) {
        events.push({
          type: 'usage',
          usage: { promptTokens: chunk.usage.prompt_tokens ?? 0, completionTokens: chunk.usage.completion_tokens ?? 0 },
        });
      }
      if (chunk.timings) events.push({ type: 'timings', timings: chunk.timings });
      return events;
    };
  },
};
