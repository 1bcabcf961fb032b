import { parseChatOptions, USAGE, UsageError } from './chat-options.js';
import type { GatewayTarget } from './gateway-target.js';
import { runInteractiveChat } from './interactive-chat.js';
import { readStdin, runOneShot } from './one-shot.js';
import { resolveDefaultModel } from './resolve-model.js';
import { selectApi } from './select-api.js';

/** `npm run chat -- ...`: a terminal client for any Gantry model (see USAGE). Resolves to the exit code. */
async function main(): Promise<number> {
  const options = parseChatOptions(process.argv.slice(2), process.env);
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const target: GatewayTarget = { baseUrl: options.baseUrl, apiKey: options.apiKey };
  const api = selectApi(options.api);
  const model = options.model ?? (await resolveDefaultModel(target));
  const base = { model, system: options.system, maxTokens: options.maxTokens };
  if (options.prompt !== undefined) return runOneShot(target, api, base, options.prompt);
  if (!process.stdin.isTTY) {
    const prompt = await readStdin();
    if (prompt.length === 0)
      throw new UsageError('no prompt: give --prompt, pipe one into stdin, or run in a terminal');
    return runOneShot(target, api, base, prompt);
  }
  return runInteractiveChat(target, api, base);
}

// Exit explicitly: idle keep-alive sockets to the gateway must not hold the process open.
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`chat: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
