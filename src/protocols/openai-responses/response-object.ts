import type { FinishReason, TokenUsage } from '../../engine/engine-event.js';
import type { GatewayError } from '../../errors/gateway-error.js';
import { toOpenAIErrorBody } from '../errors/openai-error.js';
import type { ReasoningSealer } from './reasoning-cipher.js';
import type { ReasoningOutput } from './response-items.js';
import type { ResponsesRequestDto } from './responses-request.dto.js';
import { readResponsesTools, type ClientTool } from './responses-tools.js';

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';

/** What a response echoes of its request, and how it writes its items; fixed for the life of the stream. */
export interface ResponseEnvelope {
  id: string;
  model: string;
  createdAt: number;
  echo: Record<string, unknown>;
  /** The client's tool behind each name the model may call (namespaced and custom tools). */
  tools: ReadonlyMap<string, ClientTool>;
  reasoning: ReasoningOutput;
}

/** How a response is kept: what its `store`, `background` and `previous_response_id` say. */
export interface ResponseKeeping {
  store: boolean;
  background: boolean;
  previousResponseId: string | null;
}

/** A response nobody keeps. */
export const NOT_KEPT: ResponseKeeping = Object.freeze({ store: false, background: false, previousResponseId: null });

/** `sealer` seals reasoning when the request includes `reasoning.encrypted_content`. */
export function responseEnvelope(
  id: string,
  createdAt: number,
  body: ResponsesRequestDto,
  sealer?: ReasoningSealer,
  keeping: ResponseKeeping = NOT_KEPT,
): ResponseEnvelope {
  const summary = body.reasoning?.summary ?? body.reasoning?.generate_summary ?? null;
  return {
    id,
    model: body.model,
    createdAt,
    tools: readResponsesTools(body.tools).byFlatName,
    reasoning: {
      summary: summary !== null,
      ...(sealer !== undefined && body.include?.includes('reasoning.encrypted_content') ? { sealer } : {}),
    },
    echo: {
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      metadata: body.metadata ?? {},
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: keeping.previousResponseId,
      reasoning: { effort: body.reasoning?.effort ?? null, summary },
      store: keeping.store,
      background: keeping.background,
      temperature: body.temperature ?? 1,
      text: { format: body.text?.format ?? { type: 'text' } },
      tool_choice: body.tool_choice ?? 'auto',
      tools: (body.tools ?? []).map((tool) =>
        tool.type === 'function' ? { strict: true, parameters: null, description: null, ...tool } : tool,
      ),
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
    ...(status === 'completed' || status === 'incomplete' || status === 'failed' || status === 'cancelled'
      ? { completed_at: Math.floor(Date.now() / 1000) }
      : {}),
    model: envelope.model,
    output,
    error: extra.error
      ? { code: responsesErrorCode(extra.error), message: toOpenAIErrorBody(extra.error).error.message }
      : null,
    incomplete_details:
      status === 'incomplete'
        ? { reason: extra.finishReason === 'content_filter' ? 'content_filter' : 'max_output_tokens' }
        : null,
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
      // Agents (Codex) compact their history on this code and try again.
      return error.code === 'context_length_exceeded' ? error.code : 'invalid_prompt';
    default:
      return 'server_error';
  }
}
