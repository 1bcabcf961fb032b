import { constructLlmApi, type BaseLlmApi } from '@continuedev/openai-adapters';
import { describe, expect, it } from 'vitest';
import { useClientGateway } from './support/client-gateway.js';

// Continue's autocomplete over /v1/completions: its OpenAI adapter (the model layer of its IDE
// extensions) on its defaults, only the base URL and a dummy key set, with a Qwen-style
// fill-in-the-middle template rendered into the prompt, as Continue does for a vLLM model.
const served = useClientGateway();
const signal = () => AbortSignal.timeout(10_000);
const openaiAdapter = (): BaseLlmApi =>
  constructLlmApi({ provider: 'openai', apiKey: 'test-key', apiBase: `${served().baseURL}/` })!;

const PREFIX = 'def add(a, b):\n    ';
const SUFFIX = '\n\nprint(add(1, 2))';
const FIM_PROMPT = `<|fim_prefix|>${PREFIX}<|fim_suffix|>${SUFFIX}<|fim_middle|>`;
const STOP = ['<|endoftext|>', '<|fim_pad|>', '\n\n'];

describe('Continue @continuedev/openai-adapters autocomplete over /v1/completions', () => {
  it('streams a fill-in-the-middle completion on the HTTP engine, the template’s prompt passed on whole', async () => {
    let text = '';
    for await (const chunk of openaiAdapter().completionStream(
      { model: 'upstream', prompt: FIM_PROMPT, max_tokens: 64, temperature: 0.01, stop: STOP, stream: true },
      signal(),
    ))
      text += chunk.choices[0]?.text ?? '';
    // The mock upstream echoes the prompt's words.
    expect(text.replace(/\s+/g, ' ')).toBe(FIM_PROMPT.replace(/\s+/g, ' ').trim());
    const received = served().upstream.state.received.at(-1)!;
    expect(received.path).toBe('/v1/completions');
    expect(received.body).toMatchObject({ model: 'org/served-model', prompt: FIM_PROMPT, max_tokens: 64, stop: STOP });
  });

  it('completes with a suffix field (the FIM form of providers that take one), whole and streamed, on the stub', async () => {
    const whole = await openaiAdapter().completionNonStream(
      { model: 'stub', prompt: PREFIX, suffix: SUFFIX, max_tokens: 16 },
      signal(),
    );
    expect(whole.choices[0].text).toBe('def add(a, b):');
    let text = '';
    for await (const chunk of openaiAdapter().completionStream(
      { model: 'stub', prompt: PREFIX, suffix: SUFFIX, max_tokens: 16, stream: true },
      signal(),
    ))
      text += chunk.choices[0]?.text ?? '';
    expect(text).toBe('def add(a, b):');
  });

  it('embeds through the same adapter (Continue’s codebase index)', async () => {
    const answer = await openaiAdapter().embed({ model: 'stub', input: ['def add', 'print'] });
    expect(answer.data).toHaveLength(2);
    expect(answer.data[0].embedding).toHaveLength(32);
  });
});
