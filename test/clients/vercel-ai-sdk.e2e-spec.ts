import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  generateText,
  stepCountIs,
  streamText,
  tool,
  type LanguageModel,
  type ModelMessage,
  type PrepareStepFunction,
  type TextStreamPart,
  type ToolSet,
} from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  lastToolExchange,
  LYON,
  OPENAI_REASONING_MODEL,
  THOUGHT,
  useClientGateway,
  weatherIn,
} from './support/client-gateway.js';

// The Vercel AI SDK's four ways to reach Gantry, each on its defaults (only baseURL and apiKey set).
// Its warnings concern the requests it builds (an unknown model's output limit), not Gantry's
// answers: they are kept off the test output.
(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

const served = useClientGateway();

interface Provider {
  name: string;
  model: (id: string) => LanguageModel;
  /** The provider asks for usage on streams by default. */
  streamUsage: boolean;
  /** The model to reason on; none where the provider reads no reasoning (OpenAI's chat wire has none). */
  reasoningModel?: string;
  /** Per-request options that ask to see the reasoning, where the API needs asking. */
  thinking?: Parameters<typeof generateText>[0]['providerOptions'];
  /** The shape of the API's own tool call ids. */
  toolCallId: RegExp;
  /**
   * On its defaults (`store: true`) the provider sends earlier output back as `item_reference`s,
   * which Gantry resolves from its response store; the history tests also run these providers
   * with `store: false` (history sent whole, reasoning sealed).
   */
  historyByReference?: boolean;
}

const PROVIDERS: Provider[] = [
  {
    name: '@ai-sdk/openai chat',
    model: (id) => createOpenAI({ baseURL: served().baseURL, apiKey: 'test-key' }).chat(id),
    streamUsage: true,
    toolCallId: /^call_/,
  },
  {
    name: '@ai-sdk/openai responses',
    // The fetch only records what the provider sends (to see its item references).
    model: (id) => createOpenAI({ baseURL: served().baseURL, apiKey: 'test-key', fetch: recordingFetch }).responses(id),
    streamUsage: true,
    reasoningModel: OPENAI_REASONING_MODEL,
    thinking: { openai: { reasoningSummary: 'auto' } },
    toolCallId: /^call_/,
    historyByReference: true,
  },
  {
    name: '@ai-sdk/openai-compatible',
    model: (id) =>
      createOpenAICompatible({ name: 'gantry', baseURL: served().baseURL, apiKey: 'test-key' }).chatModel(id),
    streamUsage: false,
    reasoningModel: 'thinker',
    toolCallId: /^call_/,
  },
  {
    name: '@ai-sdk/anthropic',
    model: (id) => createAnthropic({ baseURL: served().baseURL, apiKey: 'test-key' })(id),
    streamUsage: true,
    reasoningModel: 'thinker',
    thinking: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } },
    toolCallId: /^toolu_/,
  },
];

/** The Responses provider's request bodies, newest last. */
const responsesBodies: Array<Record<string, any>> = [];
const recordingFetch: typeof fetch = async (input, init) => {
  if (typeof init?.body === 'string') responsesBodies.push(JSON.parse(init.body) as Record<string, any>);
  return fetch(input, init);
};
const sentItemReferences = () =>
  (responsesBodies.at(-1)!.input as Array<Record<string, any>>).filter((item) => item.type === 'item_reference');

const weatherTools = {
  get_weather: tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => weatherIn(city),
  }),
} satisfies ToolSet;

/** Reads a whole streamText result, keeping the error parts that the SDK does not throw. */
async function drain<TOOLS extends ToolSet>(result: { fullStream: AsyncIterable<TextStreamPart<TOOLS>> }) {
  const errors: unknown[] = [];
  let text = '';
  let reasoning = '';
  for await (const part of result.fullStream) {
    if (part.type === 'error') errors.push(part.error);
    if (part.type === 'text-delta') text += part.text;
    if (part.type === 'reasoning-delta') reasoning += part.text;
  }
  return { errors, text, reasoning };
}

/** The upstream got the tool's result as the answer to the call it made. */
function expectResultHandedUpstream() {
  const exchange = lastToolExchange(served().upstream);
  expect(exchange.call?.function).toMatchObject({ name: 'get_weather', arguments: JSON.stringify(LYON) });
  expect(exchange.result?.tool_call_id).toBe(exchange.call?.id);
  expect(exchange.resultText).toContain(weatherIn('Lyon'));
}

/** Forces the tool on the first step only, as a model that decides to call it once would. */
const toolFirst: PrepareStepFunction<typeof weatherTools> = ({ stepNumber }) => ({
  toolChoice: stepNumber === 0 ? 'required' : 'auto',
});

const wordCount = (text: string) => text.split(/\s+/).filter((word) => word.length > 0).length;

const usageCounted = {
  inputTokens: expect.toSatisfy((n: number) => n > 0),
  outputTokens: expect.toSatisfy((n: number) => n > 0),
};

describe.each(PROVIDERS)('$name', (provider) => {
  it('generateText answers with the text, finish reason stop and usage', async () => {
    const result = await generateText({ model: provider.model('stub'), prompt: 'Hello from the AI SDK' });
    expect(result.text).toBe('Hello from the AI SDK');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject(usageCounted);
  });

  it('streamText streams the text, with usage when the provider asks for it', async () => {
    const result = streamText({ model: provider.model('stub'), prompt: 'Streaming from the AI SDK' });
    const { errors, text } = await drain(result);
    expect(errors).toEqual([]);
    expect(text).toBe('Streaming from the AI SDK');
    expect(await result.finishReason).toBe('stop');
    if (provider.streamUsage) expect(await result.usage).toMatchObject(usageCounted);
  });

  it('streamText over the HTTP engine streams the upstream answer', async () => {
    const result = streamText({ model: provider.model('upstream'), prompt: 'Through the mock upstream' });
    const { errors, text } = await drain(result);
    expect(errors).toEqual([]);
    expect(text).toBe('Through the mock upstream');
    if (provider.streamUsage) expect(await result.usage).toMatchObject(usageCounted);
  });

  it('generateText runs a two-step tool loop: the call, the result, the final answer', async () => {
    const result = await generateText({
      model: provider.model('stub'),
      tools: weatherTools,
      prepareStep: toolFirst,
      stopWhen: stepCountIs(2),
      prompt: JSON.stringify(LYON),
    });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0].finishReason).toBe('tool-calls');
    expect(result.steps[0].toolCalls).toMatchObject([
      { toolName: 'get_weather', input: LYON, toolCallId: expect.stringMatching(provider.toolCallId) },
    ]);
    expect(result.steps[0].toolResults).toMatchObject([{ toolName: 'get_weather', output: weatherIn('Lyon') }]);
    expect(result.finishReason).toBe('stop');
    expect(result.text).toContain(weatherIn('Lyon'));
    expect(result.totalUsage).toMatchObject(usageCounted);
  });

  it('streamText runs the tool loop over the HTTP engine, handing the result upstream', async () => {
    const result = streamText({
      model: provider.model('upstream'),
      tools: weatherTools,
      stopWhen: stepCountIs(2),
      prompt: JSON.stringify(LYON),
    });
    const { errors, text } = await drain(result);
    expect(errors).toEqual([]);
    const steps = await result.steps;
    expect(steps).toHaveLength(2);
    expect(steps[0].toolCalls).toMatchObject([{ toolName: 'get_weather', input: LYON }]);
    expect(await result.finishReason).toBe('stop');
    expect(text).toBe(JSON.stringify(LYON));
    expectResultHandedUpstream();
  });

  const unstoredOptions = { openai: { ...provider.thinking?.openai, store: false } };

  it('a second turn sends the first answer back as history, on the defaults', async () => {
    const first = await generateText({
      model: provider.model(provider.reasoningModel ?? 'stub'),
      providerOptions: provider.thinking,
      prompt: 'first question here',
    });
    const messages: ModelMessage[] = [
      { role: 'user', content: 'first question here' },
      ...first.response.messages,
      { role: 'user', content: 'and a second' },
    ];
    const second = await generateText({
      model: provider.model(provider.reasoningModel ?? 'stub'),
      providerOptions: provider.thinking,
      messages,
    });
    expect(second.text).toBe('and a second');
    expect(second.usage.inputTokens).toBeGreaterThanOrEqual(
      first.usage.inputTokens! + wordCount(first.text) + wordCount('and a second'),
    );
    if (provider.historyByReference) expect(sentItemReferences().length).toBeGreaterThan(0);
  });

  it.runIf(provider.historyByReference)(
    'a second turn sends the first answer back as history, with store: false',
    async () => {
      const first = await generateText({
        model: provider.model(provider.reasoningModel ?? 'stub'),
        providerOptions: unstoredOptions,
        prompt: 'first question here',
      });
      const messages: ModelMessage[] = [
        { role: 'user', content: 'first question here' },
        ...first.response.messages,
        { role: 'user', content: 'and a second' },
      ];
      const second = await generateText({
        model: provider.model(provider.reasoningModel ?? 'stub'),
        providerOptions: unstoredOptions,
        messages,
      });
      expect(second.text).toBe('and a second');
      // The stub counts every word of the prompt: the history must have reached it whole.
      expect(second.usage.inputTokens).toBeGreaterThanOrEqual(
        first.usage.inputTokens! + wordCount(first.text) + wordCount('and a second'),
      );
    },
  );

  it('takes a system message in the middle of the conversation', async () => {
    const messages: ModelMessage[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'system', content: 'Now answer in French.' },
      { role: 'user', content: 'and then' },
    ];
    const result = await generateText({ model: provider.model('stub'), messages });
    expect(result.text).toBe('and then');
    // The stub counts every word of every message, system messages included.
    expect(result.usage.inputTokens).toBe(
      messages.reduce((sum, message) => sum + wordCount(String(message.content)), 0),
    );
  });

  it.runIf(provider.reasoningModel)('streamText surfaces the reasoning before the answer', async () => {
    const result = streamText({
      model: provider.model(provider.reasoningModel!),
      providerOptions: provider.thinking,
      prompt: 'the verdict',
    });
    const { errors, text, reasoning } = await drain(result);
    expect(errors).toEqual([]);
    expect(reasoning).toBe(THOUGHT);
    expect(text).toBe('the verdict');
    expect(await result.reasoningText).toBe(THOUGHT);
  });

  const reasoningToolLoop = async (providerOptions: typeof provider.thinking) => {
    // The model calls the tool on its own: with thinking on, Anthropic clients may not force one.
    const result = await generateText({
      model: provider.model(OPENAI_REASONING_MODEL),
      providerOptions,
      tools: weatherTools,
      stopWhen: stepCountIs(2),
      prompt: JSON.stringify(LYON),
    });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0].reasoningText).toBe(THOUGHT);
    expect(result.steps[0].toolCalls).toMatchObject([{ toolName: 'get_weather', input: LYON }]);
    expect(result.finishReason).toBe('stop');
    expect(result.text).toBe(JSON.stringify(LYON));
    expectResultHandedUpstream();
  };

  it.runIf(provider.reasoningModel)(
    'generateText runs the tool loop on a reasoning model, on the defaults',
    async () => {
      await reasoningToolLoop(provider.thinking);
      // The second step named the first one's reasoning and call by reference: the store resolved them.
      if (provider.historyByReference) expect(sentItemReferences().length).toBeGreaterThan(0);
    },
  );

  it.runIf(provider.historyByReference)(
    'generateText runs the tool loop on a reasoning model, with store: false',
    async () => {
      await reasoningToolLoop(unstoredOptions);
      expect(sentItemReferences()).toEqual([]);
    },
  );
});
