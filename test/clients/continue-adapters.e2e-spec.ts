import { constructLlmApi, type BaseLlmApi } from '@continuedev/openai-adapters';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THOUGHT, useClientGateway } from './support/client-gateway.js';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.js';

// Continue's adapters (the model layer of its IDE extensions and CLI) take OpenAI-shaped chat
// requests and speak each provider's own API; only the base URL and a dummy key are set. They
// fetch with their own client, so a recording proxy shows what reached them.
const served = useClientGateway();
let proxy: RecordingProxy;
beforeAll(async () => {
  proxy = await startRecordingProxy(served().gateway.url);
});
afterAll(async () => {
  await proxy?.close();
});

const signal = () => AbortSignal.timeout(10_000);
const ask = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'the verdict' }] });
/** `thinker` reasons THOUGHT (3 words), then answers 'the verdict' (2 words). */
const OUTPUT_TOKENS = 5;

const anthropicAdapter = (extraBodyProperties?: Record<string, unknown>): BaseLlmApi =>
  constructLlmApi({
    provider: 'anthropic',
    apiKey: 'test-key',
    apiBase: `${proxy.url}/v1/`,
    requestOptions: { extraBodyProperties },
  })!;

/** The content block types of the last Messages answer that reached the adapter, whole or streamed. */
function lastBlockTypes(): string[] {
  const body = proxy.bodies.at(-1)!;
  if (body.startsWith('{'))
    return (JSON.parse(body) as { content: Array<{ type: string }> }).content.map((block) => block.type);
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as { type: string; content_block?: { type: string } })
    .flatMap((event) => (event.type === 'content_block_start' ? [event.content_block!.type] : []));
}

async function streamedText(api: BaseLlmApi, body: ReturnType<typeof ask>) {
  let text = '';
  let completionTokens: number | undefined;
  for await (const chunk of api.chatCompletionStream({ ...body, stream: true }, signal())) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) completionTokens = chunk.usage.completion_tokens;
  }
  return { text, completionTokens };
}

describe('Continue @continuedev/openai-adapters, Anthropic adapter, on a reasoning model', () => {
  it('reads the answer from a whole message: no thinking block before it without thinking enabled', async () => {
    const completion = await anthropicAdapter().chatCompletionNonStream(ask('thinker'), signal());
    // The adapter reads `content[0].text`: a thinking block first would make the answer empty.
    expect(completion.choices[0].message.content).toBe('the verdict');
    expect(lastBlockTypes()).toEqual(['text']);
    expect(completion.usage?.completion_tokens).toBe(OUTPUT_TOKENS);
  });

  it('streams the answer: no thinking block reaches it, and the usage counts the reasoning', async () => {
    expect(await streamedText(anthropicAdapter(), ask('thinker'))).toEqual({
      text: 'the verdict',
      completionTokens: OUTPUT_TOKENS,
    });
    expect(lastBlockTypes()).toEqual(['text']);
  });

  it('gets thinking blocks first when the request enables thinking, streamed and whole', async () => {
    const thinking = anthropicAdapter({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(await streamedText(thinking, ask('thinker'))).toEqual({
      text: 'the verdict',
      completionTokens: OUTPUT_TOKENS,
    });
    expect(lastBlockTypes()).toEqual(['thinking', 'text']);
    await thinking.chatCompletionNonStream(ask('thinker'), signal());
    const message = JSON.parse(proxy.bodies.at(-1)!) as { content: Array<{ type: string; thinking?: string }> };
    expect(message.content).toMatchObject([{ type: 'thinking', thinking: THOUGHT }, { type: 'text' }]);
  });
});

describe('Continue @continuedev/openai-adapters, OpenAI adapter, on a reasoning model', () => {
  const openai = () => constructLlmApi({ provider: 'openai', apiKey: 'test-key', apiBase: `${served().baseURL}/` })!;

  it('reads the answer and the reasoning, whole and streamed', async () => {
    const completion = await openai().chatCompletionNonStream(ask('thinker'), signal());
    expect(completion.choices[0].message).toMatchObject({ content: 'the verdict', reasoning_content: THOUGHT });
    expect(await streamedText(openai(), ask('thinker'))).toEqual({
      text: 'the verdict',
      completionTokens: OUTPUT_TOKENS,
    });
  });
});
