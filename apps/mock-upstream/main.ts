import { parseArgs } from 'node:util';
import { MOCK_FAILURES, type MockBehaviour, type MockFailure } from './mock-behaviour.js';
import { startMockUpstream } from './mock-upstream.js';

const USAGE = `Usage: node dist/apps/mock-upstream/main.js [options]

  --port N                 listening port (default 18000; 0 picks a free one)
  --host H                 listening address (default 127.0.0.1)
  --model NAME             the served model; other names get 404 (default: any name is served)
  --prefill-ms N           silence before the first chunk
  --prefill-per-token-ms X prefill time per prompt token not in the prefix cache (decimals allowed)
  --prefix-cache-tokens N  keep a prefix cache of N tokens per model (0: none)
  --token-interval-ms N    delay between chunks
  --chunks-per-write N     without a delay: chunks written together before a 1 ms pause
                           (default 16; 1: each chunk its own write, one per event-loop turn)
  --max-running N          run at most N requests at once, the rest waiting first come, first
                           served, as vLLM's max_num_seqs (default 0: no limit)
  --tokens N               answer N times --word instead of echoing the last user message
  --word W                 the word of --tokens (default "token")
  --reasoning TEXT         stream TEXT as reasoning first
  --reasoning-field F      reasoning (vLLM) or reasoning_content (llama.cpp)
  --failure F              ${MOCK_FAILURES.join(' | ')}
  --failure-status N       status of --failure status, code of --failure error (default 500)
  --fail-after-tokens N    output chunks before the failure (default 0)
  --fail-at-tokens LIST    instead: positions in the whole answer where it breaks (3,5: the answer
                           after its 3rd token, its continuation after the 5th)
  --failure-quotes Q       headers | prompt: the failure's message quotes them
  --no-health              no GET /health route (as Ollama, LM Studio, hosted APIs)
  --no-models              no GET /v1/models route
  --tags                   serve Ollama's GET /api/tags

Per request, a JSON object in the x-mock-behaviour header overrides any of these.`;

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '18000' },
    host: { type: 'string', default: '127.0.0.1' },
    model: { type: 'string' },
    'prefill-ms': { type: 'string' },
    'prefill-per-token-ms': { type: 'string' },
    'prefix-cache-tokens': { type: 'string' },
    'token-interval-ms': { type: 'string' },
    'chunks-per-write': { type: 'string' },
    'max-running': { type: 'string' },
    tokens: { type: 'string' },
    word: { type: 'string' },
    reasoning: { type: 'string' },
    'reasoning-field': { type: 'string' },
    failure: { type: 'string' },
    'failure-status': { type: 'string' },
    'fail-after-tokens': { type: 'string' },
    'fail-at-tokens': { type: 'string' },
    'failure-quotes': { type: 'string' },
    'no-health': { type: 'boolean' },
    'no-models': { type: 'boolean' },
    tags: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const count = (flag: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write(`--${flag} must be a non-negative integer (got ${JSON.stringify(text)})\n\n${USAGE}\n`);
    process.exit(2);
  }
  return value;
};
const decimal = (flag: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || text.trim() === '') {
    process.stderr.write(`--${flag} must be a non-negative number (got ${JSON.stringify(text)})\n\n${USAGE}\n`);
    process.exit(2);
  }
  return value;
};
if (values.failure !== undefined && !MOCK_FAILURES.includes(values.failure as MockFailure)) {
  process.stderr.write(`--failure must be one of ${MOCK_FAILURES.join(', ')}\n`);
  process.exit(2);
}
if (values['failure-quotes'] !== undefined && !['headers', 'prompt'].includes(values['failure-quotes'])) {
  process.stderr.write('--failure-quotes must be headers or prompt\n');
  process.exit(2);
}
if (
  values['reasoning-field'] !== undefined &&
  !['reasoning', 'reasoning_content'].includes(values['reasoning-field'])
) {
  process.stderr.write('--reasoning-field must be reasoning or reasoning_content\n');
  process.exit(2);
}

const behaviour: Partial<MockBehaviour> = Object.fromEntries(
  Object.entries({
    prefillMs: count('prefill-ms', values['prefill-ms']),
    prefillPerTokenMs: decimal('prefill-per-token-ms', values['prefill-per-token-ms']),
    prefixCacheTokens: count('prefix-cache-tokens', values['prefix-cache-tokens']),
    tokenIntervalMs: count('token-interval-ms', values['token-interval-ms']),
    chunksPerWrite: count('chunks-per-write', values['chunks-per-write']),
    maxRunning: count('max-running', values['max-running']),
    tokens: count('tokens', values.tokens),
    word: values.word,
    reasoning: values.reasoning,
    reasoningField: values['reasoning-field'] as MockBehaviour['reasoningField'] | undefined,
    failure: values.failure as MockFailure | undefined,
    failureStatus: count('failure-status', values['failure-status']),
    failAfterTokens: count('fail-after-tokens', values['fail-after-tokens']),
    failAtTokens: values['fail-at-tokens']?.split(',').map((position) => count('fail-at-tokens', position.trim())!),
    failureQuotes: values['failure-quotes'] as MockBehaviour['failureQuotes'] | undefined,
  }).filter(([, value]) => value !== undefined),
);

const mock = await startMockUpstream({
  port: count('port', values.port),
  host: values.host,
  servedModel: values.model,
  behaviour,
  recordLimit: 0,
  healthRoute: values['no-health'] !== true,
  modelsRoute: values['no-models'] !== true,
  tagsRoute: values.tags === true,
});
process.stdout.write(`mock upstream listening on ${mock.url}\n`);
const stop = () => void mock.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
