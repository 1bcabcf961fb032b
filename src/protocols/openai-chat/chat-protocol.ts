import { newId, unixSeconds } from '../ids.js';
import type { ProtocolDescriptor } from '../protocol-descriptor.js';
import { type ChatCompletionIdentity, toChatCompletion } from './chat-completion.js';
import type { ChatCompletionRequestDto } from './chat-request.dto.js';
import { decodeChatRequest } from './decode-chat-request.js';
import { encodeChatStream } from './encode-chat-stream.js';

/** OpenAI Chat Completions: `POST /v1/chat/completions`, streaming and not. */
export const CHAT_PROTOCOL: ProtocolDescriptor<ChatCompletionRequestDto, ChatCompletionIdentity> = {
  api: 'chat',
  path: '/v1/chat/completions',
  dialect: 'openai',
  countsPromptTokens: false,
  fieldNames: (body) => ({
    maxTokens: body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens',
    messages: 'messages',
  }),
  decode: (body) => decodeChatRequest(body),
  identify: (body) => ({ id: newId('chatcmpl-'), model: body.model, created: unixSeconds() }),
  toBody: (result, identity) => toChatCompletion(result, identity),
  encode: (body, identity) =>
    encodeChatStream({
      ...identity,
      includeUsage: body.stream_options?.include_usage === true,
      continuousUsage: body.stream_options?.continuous_usage_stats === true,
      timings: body.timings_per_token === true,
    }),
};
