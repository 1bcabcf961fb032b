import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, AIMessageChunk, HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
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

// LangChain JS chat models on their defaults (only the base URL and the key set), plus the
// options that ask a model to show its reasoning.
const served = useClientGateway();

interface Client {
  name: string;
  chat: (model: string, reasoning?: boolean) => BaseChatModel;
  /** The model to reason on, and where the client puts the reasoning it read. */
  reasoningModel: string;
  reasoningOf: (message: AIMessage) => string;
  /** The shape of the API's own tool call ids. */
  toolCallId: RegExp;
}

const reasoningBlocks = (message: AIMessage) =>
  message.contentBlocks
    .flatMap((block) => (block.type === 'reasoning' && typeof block.reasoning === 'string' ? [block.reasoning] : []))
    .join('');

const CLIENTS: Client[] = [
  {
    name: 'ChatOpenAI (chat completions)',
    chat: (model) => new ChatOpenAI({ model, apiKey: 'test-key', configuration: { baseURL: served().baseURL } }),
    reasoningModel: 'thinker',
    // LangChain keeps chat-completions reasoning out of the content blocks.
    reasoningOf: (message) => String(message.additional_kwargs.reasoning_content ?? ''),
    toolCallId: /^call_/,
  },
  {
    name: 'ChatOpenAI (responses)',
    chat: (model, reasoning) =>
      new ChatOpenAI({
        model,
        apiKey: 'test-key',
        configuration: { baseURL: served().baseURL },
        useResponsesApi: true,
        ...(reasoning && { reasoning: { summary: 'auto' as const } }),
      }),
    reasoningModel: OPENAI_REASONING_MODEL,
    reasoningOf: reasoningBlocks,
    toolCallId: /^call_/,
  },
  {
    name: 'ChatAnthropic',
    chat: (model, reasoning) =>
      new ChatAnthropic({
        model,
        apiKey: 'test-key',
        anthropicApiUrl: served().gateway.url,
        ...(reasoning && { thinking: { type: 'enabled' as const, budget_tokens: 1024 } }),
      }),
    reasoningModel: 'thinker',
    reasoningOf: reasoningBlocks,
    toolCallId: /^toolu_/,
  },
];

const weather = tool(async ({ city }: { city: string }) => weatherIn(city), {
  name: 'get_weather',
  description: 'The weather in a city',
  schema: z.object({ city: z.string() }),
});

/** Streams a model's answer and concatenates the chunks, as LangChain's docs do. */
async function streamWhole(
  model: Pick<BaseChatModel, 'stream'>,
  input: BaseMessage[] | string,
): Promise<AIMessageChunk> {
  let whole: AIMessageChunk | undefined;
  for await (const chunk of await model.stream(input)) whole = whole === undefined ? chunk : whole.concat(chunk);
  if (whole === undefined) throw new Error('the stream had no chunks');
  return whole;
}

const counted = {
  input_tokens: expect.toSatisfy((n: number) => n > 0),
  output_tokens: expect.toSatisfy((n: number) => n > 0),
};

describe.each(CLIENTS)('$name', (client) => {
  it('invoke answers with the text and usage', async () => {
    const message = await client.chat('stub').invoke('Hello from LangChain');
    expect(message.text).toBe('Hello from LangChain');
    expect(message.usage_metadata).toMatchObject(counted);
  });

  it('stream streams the text, and the chunks carry the usage', async () => {
    const message = await streamWhole(client.chat('stub'), 'Streaming from LangChain');
    expect(message.text).toBe('Streaming from LangChain');
    expect(message.usage_metadata).toMatchObject(counted);
  });

  it('stream over the HTTP engine streams the upstream answer with usage', async () => {
    const message = await streamWhole(client.chat('upstream'), 'Through the mock upstream');
    expect(message.text).toBe('Through the mock upstream');
    expect(message.usage_metadata).toMatchObject(counted);
  });

  it('runs a two-step tool loop: the call, the tool message, the final answer', async () => {
    // Named: ChatOpenAI 1.5 drops a string tool_choice ('required') on the Responses API.
    const model = client.chat('stub').bindTools!([weather], { tool_choice: 'get_weather' });
    const history: BaseMessage[] = [new HumanMessage(JSON.stringify(LYON))];
    const call = await model.invoke(history);
    expect(call.tool_calls).toMatchObject([
      { name: 'get_weather', args: LYON, id: expect.stringMatching(client.toolCallId) },
    ]);
    const result = await weather.invoke(call.tool_calls![0]);
    history.push(call, result);
    const answer = await model.invoke(history);
    expect(answer.tool_calls ?? []).toEqual([]);
    expect(answer.text).toContain(weatherIn('Lyon'));
  });

  it('streams a tool call over the HTTP engine and hands the result upstream', async () => {
    const model = client.chat('upstream').bindTools!([weather]);
    const history: BaseMessage[] = [new HumanMessage(JSON.stringify(LYON))];
    const call = await streamWhole(model, history);
    expect(call.tool_calls).toMatchObject([{ name: 'get_weather', args: LYON }]);
    const result = await weather.invoke(call.tool_calls![0]);
    history.push(call, result);
    const answer = await streamWhole(model, history);
    expect(answer.text).toBe(JSON.stringify(LYON));
    const exchange = lastToolExchange(served().upstream);
    expect(exchange.call?.function).toMatchObject({ name: 'get_weather', arguments: JSON.stringify(LYON) });
    expect(exchange.result?.tool_call_id).toBe(exchange.call?.id);
    expect(exchange.resultText).toContain(weatherIn('Lyon'));
  });

  it('takes a system message in the middle of the conversation', async () => {
    const history = [
      new SystemMessage('You are terse.'),
      new HumanMessage('first question'),
      new AIMessage('first answer'),
      new SystemMessage('Now answer in French.'),
      new HumanMessage('and then'),
    ];
    const answer = await client.chat('stub').invoke(history);
    expect(answer.text).toBe('and then');
    // The stub counts every word of every message, system messages included.
    expect(answer.usage_metadata?.input_tokens).toBe(13);
  });

  it('stream shows the reasoning before the answer', async () => {
    const message = await streamWhole(client.chat(client.reasoningModel, true), 'the verdict');
    expect(client.reasoningOf(message)).toBe(THOUGHT);
    expect(message.text).toBe('the verdict');
  });

  it('a second turn on a reasoning model sends the first answer back', async () => {
    const model = client.chat(client.reasoningModel, true);
    const history: BaseMessage[] = [new HumanMessage('first question here')];
    const first = await model.invoke(history);
    history.push(first, new HumanMessage('and a second'));
    const second = await model.invoke(history);
    expect(second.text).toBe('and a second');
    // Every word of the history reaches the model (the stub and the mock count prompt words).
    expect(second.usage_metadata!.input_tokens).toBeGreaterThanOrEqual(first.usage_metadata!.input_tokens + 2 + 3);
  });
});
