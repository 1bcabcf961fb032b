import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { type RunningGateway } from './support/gateway.js';
import { postSse } from './support/sse-client.js';
import { ask, contentOf, isHeartbeat, NO_THINKING, useOneUpstreamGateway } from './support/one-upstream-gateway.js';

describe('one upstream per model', () => {
  let main: MockUpstream;
  let gateway: RunningGateway;
  let client: OpenAI;
  const chatUrl = () => `${gateway.url}/v1/chat/completions`;

  useOneUpstreamGateway((running) => ({ main, gateway, client } = running));

  describe('through Chat Completions with the openai SDK', () => {
    it('streams text with finish reason and the upstream usage, and answers non-streaming alike', async () => {
      const stream = await client.chat.completions.create({
        model: 'fast',
        messages: ask('one two three'),
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      const finishes: string[] = [];
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe('one two three');
      expect(finishes).toEqual(['stop']);
      expect(usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });

      const completion = await client.chat.completions.create({ model: 'fast', messages: ask('four five') });
      expect(completion.choices[0]).toMatchObject({
        finish_reason: 'stop',
        message: { role: 'assistant', content: 'four five' },
      });
      expect(completion.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 2 });
    });

    it('sends the upstream a request under its own model name, with the configured headers: streamed for a stream, JSON for a whole answer', async () => {
      const request = {
        model: 'fast',
        messages: ask('a b c'),
        max_tokens: 9,
        stop: ['zz'],
        temperature: 0.5,
        tools: [{ type: 'function' as const, function: { name: 'noop', parameters: { type: 'object' } } }],
      };
      const expected = {
        model: 'org/served-model',
        max_tokens: 9,
        stop: ['zz'],
        temperature: 0.5,
        tool_choice: 'auto',
        tools: [{ type: 'function', function: { name: 'noop', parameters: { type: 'object' } } }],
      };
      for await (const _chunk of await client.chat.completions.create({ ...request, stream: true }));
      const streamed = main.state.received.at(-1)!;
      expect(streamed.body).toMatchObject({
        ...expected,
        stream: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
      });
      expect(streamed.headers).toMatchObject({
        authorization: 'Bearer sk-upstream',
        'x-team': 'gantry',
        accept: 'text/event-stream',
      });

      await client.chat.completions.create(request);
      const whole = main.state.received.at(-1)!;
      expect(whole.body).toMatchObject({ ...expected, stream: false });
      expect(whole.body).not.toHaveProperty('stream_options');
      expect(whole.headers).toMatchObject({ authorization: 'Bearer sk-upstream', accept: 'application/json' });

      // `nonStreaming: stream` streams from the upstream and collects at the gateway.
      const collected = await client.chat.completions.create({ ...request, model: 'fast-streamed', tools: undefined });
      expect(collected.choices[0].message.content).toBe('a b c');
      expect(main.state.received.at(-1)!.body).toMatchObject({ stream: true });
    });

    it('answers non-streaming requests from one JSON answer: reasoning, tool calls, usage, finish reasons', async () => {
      const thought = await client.chat.completions.create({ model: 'thinker', messages: ask('the answer') });
      expect(thought.choices[0].message).toMatchObject({ content: 'the answer', reasoning_content: 'first think' });
      expect(thought.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: expect.any(Number) });
      const called = await client.chat.completions.create({
        model: 'fast',
        messages: ask('{"city":"Paris"}'),
        tool_choice: 'required',
        tools: [{ type: 'function', function: { name: 'get_forecast', parameters: { type: 'object' } } }],
      });
      expect(called.choices[0].finish_reason).toBe('tool_calls');
      expect(called.choices[0].message.tool_calls?.[0]).toMatchObject({
        type: 'function',
        function: { name: 'get_forecast', arguments: '{"city":"Paris"}' },
      });
      const thinking = await new Anthropic({ baseURL: gateway.url, apiKey: 'unused', maxRetries: 0 }).messages.create({
        model: 'thinker-llama',
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: ask('the answer'),
      });
      expect(thinking.content.map((block) => block.type)).toEqual(['thinking', 'text']);
      expect(main.state.received.at(-1)!.body).toMatchObject({ stream: false });
    });

    it('streams upstream reasoning from either field name as reasoning_content', async () => {
      for (const model of ['thinker', 'thinker-llama']) {
        const stream = await client.chat.completions.create({ model, messages: ask('the answer'), stream: true });
        let reasoning = '';
        let content = '';
        for await (const chunk of stream) {
          const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
          expect(content !== '' && Boolean(delta?.reasoning_content)).toBe(false);
          reasoning += delta?.reasoning_content ?? '';
          content += delta?.content ?? '';
        }
        expect({ model, reasoning, content }).toEqual({ model, reasoning: 'first think', content: 'the answer' });
      }
    });

    it('streams tool calls that the SDK helper assembles', async () => {
      const runner = client.chat.completions.stream({
        model: 'fast',
        messages: ask('{"city":"Paris","days":3}'),
        tools: [{ type: 'function', function: { name: 'get_forecast', parameters: { type: 'object' } } }],
        tool_choice: 'required',
      });
      const final = await runner.finalChatCompletion();
      const call = final.choices[0].message.tool_calls?.[0];
      expect(final.choices[0].finish_reason).toBe('tool_calls');
      expect(call?.type === 'function' && call.function.name).toBe('get_forecast');
      expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', days: 3 });
    });

    it('finishes with length at max_tokens and with stop at a stop string', async () => {
      const limited = await client.chat.completions.create({
        model: 'fast',
        messages: ask('a b c d e'),
        max_tokens: 2,
      });
      expect(limited.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'a b' } });
      const stopped = await client.chat.completions.create({
        model: 'fast',
        messages: ask('alpha beta END gamma'),
        stop: ['END'],
      });
      expect(stopped.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'alpha beta ' } });
    });
  });

  describe('through Anthropic Messages and OpenAI Responses with their SDKs', () => {
    const anthropic = () => new Anthropic({ baseURL: gateway.url, apiKey: 'unused', maxRetries: 0 });
    const tools = { name: 'get_forecast', input_schema: { type: 'object' as const } };

    it('Messages: text with usage, reasoning from either field as thinking, tool use, max_tokens and stop_sequence', async () => {
      const text = await anthropic()
        .messages.stream({ model: 'fast', max_tokens: 50, messages: ask('one two three') })
        .finalMessage();
      expect(text).toMatchObject({
        content: [{ type: 'text', text: 'one two three' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 3, output_tokens: 3 },
      });
      for (const model of ['thinker', 'thinker-llama']) {
        const thought = await anthropic()
          .messages.stream({
            model,
            max_tokens: 2000,
            thinking: { type: 'enabled', budget_tokens: 1024 },
            messages: ask('the answer'),
          })
          .finalMessage();
        expect(
          thought.content.map((block) =>
            block.type === 'thinking' ? block.thinking : block.type === 'text' ? block.text : block.type,
          ),
        ).toEqual(['first think', 'the answer']);
      }
      const called = await anthropic()
        .messages.stream({
          model: 'fast',
          max_tokens: 50,
          tools: [tools],
          tool_choice: { type: 'any' },
          messages: ask('{"city":"Oslo"}'),
        })
        .finalMessage();
      expect(called.stop_reason).toBe('tool_use');
      expect(called.content.find((block) => block.type === 'tool_use')).toMatchObject({
        name: 'get_forecast',
        input: { city: 'Oslo' },
      });
      const limited = await anthropic().messages.create({ model: 'fast', max_tokens: 2, messages: ask('a b c d') });
      expect(limited).toMatchObject({ stop_reason: 'max_tokens', content: [{ type: 'text', text: 'a b' }] });
      const stopped = await anthropic().messages.create({
        model: 'fast',
        max_tokens: 50,
        stop_sequences: ['END'],
        messages: ask('alpha END beta'),
      });
      expect(stopped).toMatchObject({
        stop_reason: 'stop_sequence',
        stop_sequence: 'END',
        content: [{ type: 'text', text: 'alpha ' }],
      });
    });

    it('Messages without thinking: no thinking shown, and the upstream told not to reason where the model is configured so', async () => {
      const sent = () => main.state.received.at(-1)!.body as Record<string, unknown>;
      const whole = await anthropic().messages.create({
        model: 'thinker',
        max_tokens: 50,
        messages: ask('the answer'),
      });
      expect(sent()).not.toHaveProperty('chat_template_kwargs');
      const streamed = await anthropic()
        .messages.stream({ model: 'thinker', max_tokens: 50, messages: ask('the answer') })
        .finalMessage();
      for (const message of [whole, streamed]) {
        expect(message.content).toEqual([{ type: 'text', text: 'the answer' }]);
        // The reasoning was generated: its tokens count as output, as Anthropic counts them.
        expect(message.usage.output_tokens).toBe(4);
      }

      const hinted = await anthropic()
        .messages.stream({ model: 'thinker-hinted', max_tokens: 50, messages: ask('the answer') })
        .finalMessage();
      expect(sent()).toMatchObject(NO_THINKING);
      expect(hinted).toMatchObject({ content: [{ type: 'text', text: 'the answer' }], usage: { output_tokens: 2 } });
      await anthropic().messages.create({
        model: 'thinker-hinted',
        max_tokens: 50,
        thinking: { type: 'disabled' },
        messages: ask('the answer'),
      });
      expect(sent()).toMatchObject(NO_THINKING);

      const asked = await anthropic().messages.create({
        model: 'thinker-hinted',
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: ask('the answer'),
      });
      expect(sent()).not.toHaveProperty('chat_template_kwargs');
      expect(asked.content.map((block) => block.type)).toEqual(['thinking', 'text']);
      // Chat Completions shows reasoning unless told not to reason.
      await client.chat.completions.create({ model: 'thinker-hinted', messages: ask('the answer') });
      expect(sent()).not.toHaveProperty('chat_template_kwargs');
      const off = await client.chat.completions.create({
        model: 'thinker-hinted',
        reasoning_effort: 'none',
        messages: ask('the answer'),
      });
      expect(sent()).toMatchObject(NO_THINKING);
      expect(off.choices[0].message).toEqual(expect.not.objectContaining({ reasoning_content: expect.anything() }));
    });

    it('Responses: text with usage, reasoning from either field as a reasoning item, function calls, incomplete at max_output_tokens', async () => {
      const text = await client.responses.stream({ model: 'fast', input: 'one two three' }).finalResponse();
      expect(text.output_text).toBe('one two three');
      expect(text.usage).toMatchObject({ input_tokens: 3, output_tokens: 3 });
      for (const model of ['thinker', 'thinker-llama']) {
        const thought = await client.responses.stream({ model, input: 'the answer' }).finalResponse();
        expect(thought.output[0]).toMatchObject({
          type: 'reasoning',
          content: [{ type: 'reasoning_text', text: 'first think' }],
        });
        expect(thought.output_text).toBe('the answer');
      }
      const called = await client.responses
        .stream({
          model: 'fast',
          input: '{"city":"Oslo"}',
          tools: [{ type: 'function', name: 'get_forecast', parameters: { type: 'object' }, strict: false }],
          tool_choice: 'required',
        })
        .finalResponse();
      expect(called.output.find((item) => item.type === 'function_call')).toMatchObject({
        name: 'get_forecast',
        arguments: '{"city":"Oslo"}',
      });
      const limited = await client.responses.create({ model: 'fast', input: 'a b c d', max_output_tokens: 2 });
      expect(limited).toMatchObject({ status: 'incomplete', output_text: 'a b' });
    });
  });

  describe('timings and keep-alives on the wire', () => {
    it('measures timings at the gateway for timings_per_token, with continuous usage', async () => {
      const exchange = await postSse(chatUrl(), {
        model: 'timed',
        messages: ask('w1 w2 w3 w4'),
        stream: true,
        timings_per_token: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
      });
      const chunks = exchange.json();
      const firstContent = chunks.findIndex((chunk) => chunk.choices[0]?.delta.content);
      expect(chunks.slice(0, firstContent).filter(isHeartbeat).length).toBeGreaterThanOrEqual(1);
      expect(chunks[firstContent].timings).toMatchObject({ prompt_n: 4, predicted_n: 1 });
      expect(chunks[firstContent].timings.prompt_ms).toBeGreaterThanOrEqual(250);
      const last = chunks.at(-1)!;
      expect(last.usage).toEqual({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
      expect(last.timings.predicted_n).toBe(4);
      expect(last.timings.predicted_ms).toBeGreaterThanOrEqual(100);
      expect(last.timings.predicted_per_second).toBeCloseTo((1000 / last.timings.predicted_ms) * 4, 6);
    });

    it('keeps the client stream alive while the upstream is silent through a 2 s prefill', async () => {
      const exchange = await postSse(chatUrl(), {
        model: 'silent-prefill',
        messages: ask('finally here'),
        stream: true,
      });
      const chunks = exchange.json();
      const firstContent = chunks.findIndex((chunk) => chunk.choices[0]?.delta.content);
      expect(chunks.slice(1, firstContent).filter(isHeartbeat).length).toBeGreaterThanOrEqual(5);
      expect(contentOf(exchange)).toBe('finally here');
      expect(exchange.frames.at(-1)).toMatchObject({ data: '[DONE]' });
    });
  });
});
