import { newId } from '../ids.js';
import type { ProtocolDescriptor } from '../protocol-descriptor.js';
import { toAnthropicMessage } from './anthropic-message.js';
import { decodeMessagesRequest } from './decode-messages-request.js';
import { encodeMessagesStream } from './encode-messages-stream.js';
import type { MessagesRequestDto } from './messages-request.dto.js';

interface MessageIdentity {
  id: string;
  model: string;
}

/**
 * Anthropic Messages: `POST /v1/messages`, streaming and not. Any query string (Claude Code's
 * `?beta=true`) and any `anthropic-version` or `anthropic-beta` header are accepted.
 * `message_start` carries the prompt's tokens, so they are counted before the stream opens (the
 * engine's own count: local for the stub and llama, bounded in time for HTTP upstreams).
 */
export const MESSAGES_PROTOCOL: ProtocolDescriptor<MessagesRequestDto, MessageIdentity> = {
  api: 'messages',
  path: '/v1/messages',
  dialect: 'anthropic',
  countsPromptTokens: true,
  fieldNames: () => ({ maxTokens: 'max_tokens', messages: 'messages' }),
  decode: (body) => decodeMessagesRequest(body),
  identify: (body) => ({ id: newId('msg_'), model: body.model }),
  toBody: (result, identity) => toAnthropicMessage(result, identity),
  encode: (_body, identity, promptTokens) => encodeMessagesStream({ ...identity, inputTokens: promptTokens ?? 0 }),
};
