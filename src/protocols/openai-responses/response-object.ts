import type { FinishReason, TokenUsage } from '../../engine/engine-event.js';
import type { GatewayError } from '../../errors/gateway-error.js';
import type { ResponsesRequestDto } from './responses-request.dto.js';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** What a response echoes of its request, fixed for the life of the stream. */
export interface ResponseEnvelope {
  id: string;
  model: string;
  createdAt: number;
  echo: Record<string, unknown>;
}

export function responseEnvelope(id: string, createdAt: number, body: ResponsesRequestDto): ResponseEnvelope {
  return {
    id,
    model: body.model,
    createdAt,
    echo: {
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      metadata: body.metadata ?? {},
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: null,
      reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
      store: false,
      background: false,
      temperature: body.temperature ?? 1,
      text: { format: body.text?.format ?? { type: 'text' } },
      tool_choice: body.tool_choice ?? 'auto',
      tools: (body.tools ?? []).map((tool) => ({ strict: true, parameters: null, description: null, ...tool })),
      top_p: body.top_p ?? 1,
      truncation: 'disabled',
      user: body.user ?? null,
    },
  };
}

/** The Response object (responses/response.py) in a given state. */
export function responseObject(
  envelope: ResponseEnvelope,
  status: ResponseStatus,
  output: unknown[],
  extra: { usage?: TokenUsage; finishReason?: FinishReason; error?: GatewayError } = {},
) {
  return {
    id: envelope.id,
    object: 'response',
    created_at: envelope.createdAt,
    status,
    ...(status === 'completed' || status === 'incomplete' || status === 'failed' ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
    model: envelope.model,
    output,
    error: extra.error ? { code: responsesErrorCode(extra.error), message: extra.error.message } : null,
    incomplete_details:
      status === 'incomplete' ? { reason: extra.finishReason === 'content_filter' ? 'content_filter' : 'max_output_tokens' } : null,
    usage: extra.usage ? toResponsesUsage(extra.usage) : null,
    ...envelope.echo,
  };
}

export function toResponsesUsage(usage: TokenUsage) {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** A finished response is `incomplete` when it ran out of tokens or was filtered, `completed` otherwise. */
export function finalStatus(finishReason: FinishReason): ResponseStatus {
  return finishReason === 'length' || finishReason === 'content_filter' ? 'incomplete' : 'completed';
}

function responsesErrorCode(error: GatewayError): string {
  switch (error.kind) {
    case 'overloaded':
    case 'rate_limited':
      return 'rate_limit_exceeded';
    case 'invalid_request':
      return 'invalid_prompt';
    default:
      return 'server_error';
  }
}
