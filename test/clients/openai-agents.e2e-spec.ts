import {
  Agent,
  OpenAIChatCompletionsModel,
  OpenAIProvider,
  Runner,
  tool,
  user,
  type AgentInputItem,
  type RunResult,
} from '@openai/agents';
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { lastToolExchange, LYON, THOUGHT, useClientGateway, weatherIn } from './support/client-gateway.js';
import { takeRefusedHosts } from './support/offline-guard.js';

// The OpenAI Agents SDK on its defaults: the Responses API and its default model (gpt-5.4-mini,
// with the reasoning and verbosity settings it sends for that model). Only the client's base URL
// and key are set. Its tracing exporter stays off because vitest sets NODE_ENV=test; the offline
// guard would catch it otherwise.
const served = useClientGateway();
let runner: Runner;
beforeAll(() => {
  runner = new Runner({ modelProvider: new OpenAIProvider({ baseURL: served().baseURL, apiKey: 'test-key' }) });
});

const getWeather = tool({
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => weatherIn(city),
});

const counted = {
  inputTokens: expect.toSatisfy((n: number) => n > 0),
  outputTokens: expect.toSatisfy((n: number) => n > 0),
};
const itemTypes = (result: Pick<RunResult<never, never>, 'newItems'>) => result.newItems.map((item) => item.type);
const reasoningText = (result: Pick<RunResult<never, never>, 'newItems'>) =>
  result.newItems
    .flatMap((item) => (item.type === 'reasoning_item' ? item.rawItem.content.map((part) => part.text) : []))
    .join('');

describe('an agent on the default model (Responses API)', () => {
  const assistant = new Agent({ name: 'Assistant', instructions: 'You are terse.' });

  it('answers, and counts the usage', async () => {
    const result = await runner.run(assistant, 'Hello from the Agents SDK');
    expect(result.finalOutput).toBe('Hello from the Agents SDK');
    expect(result.state.usage).toMatchObject({ requests: 1, ...counted });
  });

  it('streams the answer', async () => {
    const result = await runner.run(assistant, 'Streaming from the Agents SDK', { stream: true });
    let text = '';
    for await (const delta of result.toTextStream()) text += delta;
    await result.completed;
    expect(result.error).toBeNull();
    expect(text).toBe('Streaming from the Agents SDK');
    expect(result.finalOutput).toBe('Streaming from the Agents SDK');
    expect(result.state.usage).toMatchObject(counted);
  });

  it('runs a tool loop: the call, the tool output, the final answer', async () => {
    const forecaster = new Agent({ name: 'Forecaster', instructions: 'Use the tool.', tools: [getWeather] });
    const result = await runner.run(forecaster, JSON.stringify(LYON));
    expect(itemTypes(result)).toEqual(
      expect.arrayContaining(['tool_call_item', 'tool_call_output_item', 'message_output_item']),
    );
    expect(result.state.usage.requests).toBe(2);
    expect(result.finalOutput).toBe(JSON.stringify(LYON));
    const exchange = lastToolExchange(served().upstream);
    expect(exchange.result?.tool_call_id).toBe(exchange.call?.id);
    expect(exchange.resultText).toContain(weatherIn('Lyon'));
  });

  it('streams a tool loop', async () => {
    const forecaster = new Agent({ name: 'Forecaster', instructions: 'Use the tool.', tools: [getWeather] });
    const result = await runner.run(forecaster, JSON.stringify(LYON), { stream: true });
    for await (const event of result) expect(event.type).toBeTypeOf('string');
    await result.completed;
    expect(result.error).toBeNull();
    expect(itemTypes(result)).toEqual(
      expect.arrayContaining(['tool_call_item', 'tool_call_output_item', 'message_output_item']),
    );
    expect(result.finalOutput).toBe(JSON.stringify(LYON));
  });

  it('shows the reasoning when the agent asks for a summary', async () => {
    const thinker = new Agent({ name: 'Thinker', modelSettings: { reasoning: { effort: 'low', summary: 'auto' } } });
    const result = await runner.run(thinker, 'the verdict');
    expect(itemTypes(result)).toEqual(['reasoning_item', 'message_output_item']);
    expect(reasoningText(result)).toBe(THOUGHT);
    expect(result.finalOutput).toBe('the verdict');
  });

  it('a second run takes the first run history back, reasoning and tool items included', async () => {
    const forecaster = new Agent({ name: 'Forecaster', instructions: 'Use the tool.', tools: [getWeather] });
    const first = await runner.run(forecaster, JSON.stringify(LYON));
    const history: AgentInputItem[] = [...first.history, user('and a second')];
    const second = await runner.run(forecaster, history);
    expect(second.finalOutput).toBe('and a second');
    const { messages } = served().upstream.state.received.at(-1)!.body as { messages: Array<{ role: string }> };
    expect(messages.map((message) => message.role).filter((role) => role !== 'system')).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    expect(lastToolExchange(served().upstream).resultText).toContain(weatherIn('Lyon'));
  });
});

describe('an agent on a named model', () => {
  it('runs a tool loop on the stub, forcing the first call (the SDK resets tool_choice after it)', async () => {
    const forecaster = new Agent({
      name: 'Forecaster',
      model: 'stub',
      tools: [getWeather],
      modelSettings: { toolChoice: 'required' },
    });
    const result = await runner.run(forecaster, JSON.stringify(LYON));
    expect(itemTypes(result)).toEqual(['tool_call_item', 'tool_call_output_item', 'message_output_item']);
    expect(result.finalOutput).toContain(weatherIn('Lyon'));
    expect(result.state.usage).toMatchObject({ requests: 2, ...counted });
  });

  it('runs a tool loop over Chat Completions (OpenAIChatCompletionsModel)', async () => {
    const client = new OpenAI({ baseURL: served().baseURL, apiKey: 'test-key' });
    const forecaster = new Agent({
      name: 'Forecaster',
      model: new OpenAIChatCompletionsModel(client, 'stub'),
      tools: [getWeather],
      modelSettings: { toolChoice: 'required' },
    });
    const result = await runner.run(forecaster, JSON.stringify(LYON), { stream: true });
    for await (const event of result) expect(event.type).toBeTypeOf('string');
    await result.completed;
    expect(result.error).toBeNull();
    expect(itemTypes(result)).toEqual(['tool_call_item', 'tool_call_output_item', 'message_output_item']);
    expect(result.finalOutput).toContain(weatherIn('Lyon'));
  });
});

describe('the offline guard', () => {
  it('refuses and records a connection to a host that is not loopback', async () => {
    await expect(fetch('http://192.0.2.1/')).rejects.toThrow();
    expect(takeRefusedHosts()).toEqual(['192.0.2.1']);
  });
});
