import { parseArgs } from 'node:util';
import { API_NAMES, type ApiName } from './gateway-api.js';

export const USAGE = `Usage: npm run chat -- [--url URL] [--model NAME] [--api chat|responses|messages] [options]

  --url URL          the gateway (or GANTRY_URL; default http://127.0.0.1:8000)
  --model NAME       the model to talk to (default: the first one the gateway lists)
  --api NAME         wire format: chat (Chat Completions, default), responses, messages
  --prompt TEXT      one-shot: print the answer and exit (without it and with stdin not a
                     terminal, the prompt is read from stdin)
  --system TEXT      a system prompt
  --max-tokens N     the answer's token limit (messages: default 1024)
  --api-key KEY      sent as Authorization: Bearer and x-api-key (or GANTRY_API_KEY)
  -h, --help         this text

In a chat, Ctrl-C stops the answer being written; Ctrl-C (or Ctrl-D) at the prompt exits.`;

/** The command line, checked. */
export interface ChatOptions {
  baseUrl: string;
  model?: string;
  api: ApiName;
  prompt?: string;
  system?: string;
  maxTokens?: number;
  apiKey?: string;
  help: boolean;
}

/** A command line the client cannot run: printed with the usage, exit code 2. */
export class UsageError extends Error {
  readonly code = 'CHAT_USAGE';
}

export function parseChatOptions(argv: string[], env: NodeJS.ProcessEnv): ChatOptions {
  const values = readFlags(argv);
  const api = values.api ?? 'chat';
  if (!isApiName(api))
    throw new UsageError(`--api must be one of ${API_NAMES.join(', ')} (got ${JSON.stringify(api)})`);
  const maxTokensText = values['max-tokens'];
  const maxTokens = maxTokensText === undefined ? undefined : Number(maxTokensText);
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 1)) {
    throw new UsageError(`--max-tokens must be a positive integer (got ${JSON.stringify(maxTokensText)})`);
  }
  const url = values.url ?? env.GANTRY_URL ?? 'http://127.0.0.1:8000';
  if (!/^https?:\/\//.test(url))
    throw new UsageError(`--url must start with http:// or https:// (got ${JSON.stringify(url)})`);
  return {
    // The gateway's base URL; a trailing /v1 (as SDKs take it) is accepted too.
    baseUrl: url.replace(/\/+$/, '').replace(/\/v1$/, ''),
    model: values.model,
    api,
    prompt: values.prompt,
    system: values.system,
    maxTokens,
    apiKey: values['api-key'] ?? env.GANTRY_API_KEY,
    help: values.help === true,
  };
}

function readFlags(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        url: { type: 'string' },
        model: { type: 'string' },
        api: { type: 'string' },
        prompt: { type: 'string' },
        system: { type: 'string' },
        'max-tokens': { type: 'string' },
        'api-key': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function isApiName(name: string): name is ApiName {
  return (API_NAMES as readonly string[]).includes(name);
}
