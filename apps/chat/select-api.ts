import { chatCompletionsApi } from './chat-completions-api.js';
import type { ApiName, GatewayApi } from './gateway-api.js';
import { messagesApi } from './messages-api.js';
import { responsesApi } from './responses-api.js';

/** The wire format for `--api NAME`. */
export function selectApi(name: ApiName): GatewayApi {
  switch (name) {
    case 'chat':
      return chatCompletionsApi;
    case 'responses':
      return responsesApi;
    case 'messages':
      return messagesApi;
  }
}
