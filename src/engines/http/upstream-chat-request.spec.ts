import { describe, expect, it } from 'vitest';
import { generationRequest, userMessage } from '../../../test/support/requests.js';
import { GANTRY_UPSTREAM_FIELDS } from './http-model-config.js';
import { toUpstreamChatRequest } from './upstream-chat-request.js';

const options = { upstreamModel: 'meta-llama/Llama-3.1-8B-Instruct', continuousUsage: true, whole: false };

describe('toUpstreamChatRequest', () => {
  it('streams under the upstream model name, asking for usage (continuous when supported)', () => {
    const body = toUpstreamChatRequest(generationRequest(), options);
    expect(body).toMatchObject({
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
      messages: [{ role: 'user', content: 'Hello there world' }],
    });
    expect(JSON.parse(JSON.stringify(body))).not.toHaveProperty('tools');
    expect(toUpstreamChatRequest(generationRequest(), { ...options, continuousUsage: false }).stream_options).toEqual({
      include_usage: true,
    });
  });

  it('asks for one JSON answer, without stream_options (vLLM refuses them), for a whole answer', () => {
    const body = JSON.parse(JSON.stringify(toUpstreamChatRequest(generationRequest(), { ...options, whole: true })));
    expect(body.stream).toBe(false);
    expect(body).not.toHaveProperty('stream_options');
  });

  it('maps sampling, stop strings and the response format; leaves unset fields out', () => {
    const body = toUpstreamChatRequest(
      generationRequest({
        sampling: {
          maxTokens: 64,
          temperature: 0.2,
          topP: 0.9,
          topK: 40,
          seed: 7,
          stop: ['END'],
          frequencyPenalty: 0.1,
          presencePenalty: 0.3,
          responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
        },
      }),
      options,
    );
    expect(body).toMatchObject({
      max_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      seed: 7,
      stop: ['END'],
      frequency_penalty: 0.1,
      presence_penalty: 0.3,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object' }, strict: true },
      },
    });
    const bare = JSON.parse(JSON.stringify(toUpstreamChatRequest(generationRequest(), options)));
    expect(Object.keys(bare).sort()).toEqual(['messages', 'model', 'stream', 'stream_options']);
  });

  it('maps tools, tool choice and a conversation with tool calls, images and results', () => {
    const body = toUpstreamChatRequest(
      generationRequest({
        messages: [
          { role: 'system', content: 'be brief' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is here?' },
              { type: 'image', url: 'data:image/png;base64,AAAA' },
            ],
          },
          {
            role: 'assistant',
            content: '',
            reasoning: 'hidden',
            toolCalls: [{ id: 'call_1', name: 'look', arguments: '{}' }],
          },
          { role: 'tool', toolCallId: 'call_1', content: 'a cat' },
          userMessage('thanks'),
        ],
        tools: [{ name: 'look', description: 'looks', parameters: { type: 'object' } }],
        toolChoice: { name: 'look' },
        parallelToolCalls: false,
      }),
      options,
    );
    expect(body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is here?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
      { role: 'user', content: 'thanks' },
    ]);
    expect(body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'look', description: 'looks', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'look' } },
      parallel_tool_calls: false,
    });
  });

  const noThinking = { chat_template_kwargs: { enable_thinking: false } };

  it('tells the upstream not to reason only when configured and the client did not ask for reasoning', () => {
    const hinted = { ...options, disableReasoningWith: noThinking };
    expect(toUpstreamChatRequest(generationRequest({ reasoningOutput: 'hide' }), hinted)).toMatchObject(noThinking);
    expect(toUpstreamChatRequest(generationRequest({ reasoning: { enabled: false } }), hinted)).toMatchObject(
      noThinking,
    );
    for (const asked of [
      generationRequest(),
      generationRequest({ reasoningOutput: 'show', reasoning: { enabled: true, budgetTokens: 1024 } }),
    ]) {
      expect(toUpstreamChatRequest(asked, hinted)).not.toHaveProperty('chat_template_kwargs');
    }
    expect(toUpstreamChatRequest(generationRequest({ reasoningOutput: 'hide' }), options)).not.toHaveProperty(
      'chat_template_kwargs',
    );
  });

  it('writes no field outside GANTRY_UPSTREAM_FIELDS (the ones a configured hint may not name)', () => {
    const full = toUpstreamChatRequest(
      generationRequest({
        tools: [{ name: 'look' }],
        sampling: {
          maxTokens: 1,
          temperature: 1,
          topP: 1,
          topK: 1,
          seed: 1,
          stop: ['x'],
          frequencyPenalty: 0,
          presencePenalty: 0,
          responseFormat: { type: 'json_object' },
        },
      }),
      options,
    );
    expect(Object.keys(full).filter((key) => !(GANTRY_UPSTREAM_FIELDS as readonly string[]).includes(key))).toEqual([]);
  });
});
