import { MESSAGES_PROTOCOL } from './anthropic-messages/messages-protocol.js';
import type { ErrorDialect } from './errors/render-error.js';
import { CHAT_PROTOCOL } from './openai-chat/chat-protocol.js';
import { COMPLETIONS_PROTOCOL } from './openai-completions/completions-protocol.js';
import { RESPONSES_PROTOCOL } from './openai-responses/responses-protocol.js';
import type { ApiName, ProtocolDescriptor } from './protocol-descriptor.js';

/** The generation APIs Gantry serves. */
export const GENERATION_PROTOCOLS: readonly ProtocolDescriptor[] = [
  CHAT_PROTOCOL,
  RESPONSES_PROTOCOL,
  MESSAGES_PROTOCOL,
  COMPLETIONS_PROTOCOL,
];

const BY_API = new Map<ApiName, ProtocolDescriptor>(GENERATION_PROTOCOLS.map((protocol) => [protocol.api, protocol]));

export function protocolNamed(api: ApiName): ProtocolDescriptor {
  return BY_API.get(api)!;
}

/**
 * The one rule for which error dialect a request gets: that of the API whose path its path is or
 * lies under (`/v1/messages/count_tokens` is Anthropic's), OpenAI's otherwise. Decided on the
 * decoded path, as the router matches it (`/v1/message%73` is Messages).
 */
export function dialectOfPath(url: string): ErrorDialect {
  const path = decodedPathOf(url);
  for (const protocol of GENERATION_PROTOCOLS) {
    if (path.startsWith(protocol.path)) return protocol.dialect;
  }
  return 'openai';
}

/** The dialect of a generation request known by its API (telemetry's), OpenAI's when none is known. */
export function dialectOfApi(api: ApiName | undefined): ErrorDialect {
  return (api === undefined ? undefined : BY_API.get(api)?.dialect) ?? 'openai';
}

function decodedPathOf(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
