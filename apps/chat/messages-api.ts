import type { ClientEvent } from './client-event.js';
import type { ApiRequest, GatewayApi, SseDecoder, TurnInput } from './gateway-api.js';
import { errorMessageOf, nonEmpty, parseWireJson } from './wire-json.js';

/** Anthropic requires `max_tokens`; this is the client's default when `--max-tokens` is not given. */
export const DEFAULT_MESSAGES_MAX_TOKENS = 1024;

/** The fields of an Anthropic stream event the client reads. */
interface MessagesEvent {
  type: string;
  message?: { usage?: { input_tokens?: number } };
  index?: number;
  content_block?: { type?: string; text?: string; thinking?: string; id?: string; name?: string };
  delta?: { type?: string; text?: string; thinking?: string; partial_json?: string; stop_reason?: string | null };
  usage?: { input_tokens?: number; output_tokens?: number };
  error?: unknown;
}

const STOP_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
};

/**
 * Anthropic Messages (`POST /v1/messages`, `anthropic-version: 2023-06-01`). Every frame is named;
 * `message_stop` ends the stream, `event: error` fails it (with no `message_stop` after).
 *
 * Heartbeat: `event: ping`. The prompt token count arrives in `message_start` and the output count
 * (cumulative) in `message_delta`; both are reported together as one usage at `message_delta`.
 */
export const messagesApi: GatewayApi = {
  name: 'messages',

  buildRequest(input: TurnInput): ApiRequest {
    const body: Record<string, unknown> = {
      model: input.model,
      max_tokens: input.maxTokens ?? DEFAULT_MESSAGES_MAX_TOKENS,
      messages: input.messages,
      stream: true,
      // The terminal shows reasoning (on stderr); Messages sends thinking only when asked for it.
      thinking: { type: 'adaptive' },
    };
    if (input.system !== undefined) body.system = input.system;
    return { path: '/v1/messages', headers: { 'anthropic-version': '2023-06-01' }, body };
  },

  createDecoder(): SseDecoder {
    let inputTokens = 0;
    let finishReason = 'stop';
    return (message) => {
      const event = parseWireJson<MessagesEvent>(message.data);
      const type = message.event ?? event?.type;
      if (type === 'ping') return [{ type: 'heartbeat' }];
      if (!event) return [];
      switch (type) {
        case 'message_start':
          inputTokens = event.message?.usage?.input_tokens ?? 0;
          return [{ type: 'opened' }];
        case 'content_block_start':
          return blockStart(event);
        case 'content_block_delta':
          return blockDelta(event);
        case 'message_delta': {
          const reason = event.delta?.stop_reason;
          if (reason) finishReason = STOP_REASONS[reason] ?? reason;
          if (!event.usage) return [];
          const usage = {
            promptTokens: event.usage.input_tokens ?? inputTokens,
            completionTokens: event.usage.output_tokens ?? 0,
          };
          return [{ type: 'usage', usage }];
        }
        case 'message_stop':
          return [{ type: 'done', finishReason }];
        case 'error':
          return [{ type: 'error', message: errorMessageOf(event) ?? 'the stream reported an error' }];
        default:
          return [];
      }
    };
  },
};

function blockStart(event: Partial<MessagesEvent>): ClientEvent[] {
  const block = event.content_block;
  const index = event.index ?? 0;
  switch (block?.type) {
    case 'tool_use':
      return [{ type: 'tool_call_start', index, id: block.id, name: block.name ?? '' }];
    case 'text': {
      const text = nonEmpty(block.text);
      return text ? [{ type: 'text', text }] : [];
    }
    case 'thinking': {
      const text = nonEmpty(block.thinking);
      return text ? [{ type: 'reasoning', text }] : [];
    }
    default:
      return [];
  }
}

function blockDelta(event: Partial<MessagesEvent>): ClientEvent[] {
  const delta = event.delta;
  switch (delta?.type) {
    case 'text_delta': {
      const text = nonEmpty(delta.text);
      return text ? [{ type: 'text', text }] : [];
    }
    case 'thinking_delta': {
      const text = nonEmpty(delta.thinking);
      return text ? [{ type: 'reasoning', text }] : [];
    }
    case 'input_json_delta': {
      const fragment = nonEmpty(delta.partial_json);
      return fragment ? [{ type: 'tool_call_args', index: event.index ?? 0, fragment }] : [];
    }
    default:
      return [];
  }
}
