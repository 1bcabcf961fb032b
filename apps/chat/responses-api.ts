import type { ClientEvent } from './client-event.js';
import type { ApiRequest, GatewayApi, SseDecoder, TurnInput } from './gateway-api.js';
import { errorMessageOf, nonEmpty, parseWireJson } from './wire-json.js';

/** The fields of a Responses stream event the client reads. */
interface ResponsesEvent {
  type: string;
  response?: {
    status?: string;
    output?: Array<{ type?: string }>;
    usage?: { input_tokens?: number; output_tokens?: number };
    incomplete_details?: { reason?: string } | null;
    error?: { message?: string } | null;
  };
  item?: { type?: string; id?: string; call_id?: string; name?: string; arguments?: string };
  item_id?: string;
  output_index?: number;
  delta?: string;
  error?: unknown;
  message?: string;
}

type ReasoningFamily = 'text' | 'summary';

/**
 * OpenAI Responses (`POST /v1/responses`). There is no `[DONE]`: `response.completed`,
 * `response.incomplete` or `response.failed` ends the stream.
 *
 * Heartbeat: every `response.in_progress` after the opening one, before output begins (the stream
 * semantics in docs/architecture.md), and OpenAI's undocumented `keepalive` event. llama.cpp sends each reasoning
 * delta twice (summary and raw text families), so each reasoning item keeps to the family it
 * started with.
 */
export const responsesApi: GatewayApi = {
  name: 'responses',

  buildRequest(input: TurnInput): ApiRequest {
    const body: Record<string, unknown> = {
      model: input.model,
      input: input.messages.map((message) => ({ role: message.role, content: message.content })),
      stream: true,
    };
    if (input.system !== undefined) body.instructions = input.system;
    if (input.maxTokens !== undefined) body.max_output_tokens = input.maxTokens;
    return { path: '/v1/responses', headers: {}, body };
  },

  createDecoder(): SseDecoder {
    let inProgressSeen = false;
    let outputStarted = false;
    const reasoningFamilies = new Map<string, ReasoningFamily>();

    const reasoning = (event: Partial<ResponsesEvent>, family: ReasoningFamily): ClientEvent[] => {
      const key = event.item_id ?? String(event.output_index ?? 0);
      const chosen = reasoningFamilies.get(key) ?? family;
      reasoningFamilies.set(key, chosen);
      const text = nonEmpty(event.delta);
      return chosen === family && text ? [{ type: 'reasoning', text }] : [];
    };

    return (message) => {
      const event = parseWireJson<ResponsesEvent>(message.data);
      if (!event) return [];
      switch (event.type ?? message.event) {
        case 'response.created':
          return [{ type: 'opened' }];
        case 'response.queued':
          return [{ type: 'queued' }];
        case 'response.in_progress': {
          const beat = inProgressSeen && !outputStarted;
          inProgressSeen = true;
          if (event.response?.status === 'queued') return [{ type: 'queued' }];
          return beat ? [{ type: 'heartbeat' }] : [];
        }
        case 'keepalive':
          return [{ type: 'heartbeat' }];
        case 'response.output_item.added': {
          outputStarted = true;
          const item = event.item;
          if (item?.type !== 'function_call') return [];
          const index = event.output_index ?? 0;
          const events: ClientEvent[] = [
            { type: 'tool_call_start', index, id: item.call_id ?? item.id, name: item.name ?? '' },
          ];
          const fragment = nonEmpty(item.arguments);
          if (fragment) events.push({ type: 'tool_call_args', index, fragment });
          return events;
        }
        case 'response.output_text.delta':
        case 'response.refusal.delta': {
          const text = nonEmpty(event.delta);
          return text ? [{ type: 'text', text }] : [];
        }
        case 'response.reasoning_text.delta':
          return reasoning(event, 'text');
        case 'response.reasoning_summary_text.delta':
          return reasoning(event, 'summary');
        case 'response.function_call_arguments.delta': {
          const fragment = nonEmpty(event.delta);
          return fragment ? [{ type: 'tool_call_args', index: event.output_index ?? 0, fragment }] : [];
        }
        case 'response.completed':
        case 'response.incomplete':
          return finish(event);
        case 'response.failed':
          return [{ type: 'error', message: event.response?.error?.message ?? 'the response failed' }];
        case 'error':
          return [{ type: 'error', message: errorMessageOf(event) ?? 'the stream reported an error' }];
        default:
          return [];
      }
    };
  },
};

/** The terminal event's usage, then `done` with a Chat-style finish reason. */
function finish(event: Partial<ResponsesEvent>): ClientEvent[] {
  const response = event.response ?? {};
  const events: ClientEvent[] = [];
  if (response.usage) {
    events.push({
      type: 'usage',
      usage: { promptTokens: response.usage.input_tokens ?? 0, completionTokens: response.usage.output_tokens ?? 0 },
    });
  }
  events.push({ type: 'done', finishReason: finishReasonOf(event.type, response) });
  return events;
}

function finishReasonOf(type: string | undefined, response: NonNullable<ResponsesEvent['response']>): string {
  if (type === 'response.incomplete') {
    return response.incomplete_details?.reason === 'max_output_tokens'
      ? 'length'
      : (response.incomplete_details?.reason ?? 'incomplete');
  }
  return response.output?.some((item) => item.type === 'function_call') ? 'tool_calls' : 'stop';
}
