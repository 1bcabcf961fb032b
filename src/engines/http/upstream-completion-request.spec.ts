import { describe, expect, it } from 'vitest';
import type { GenerationRequest } from '../../engine/generation-request.js';
import { toUpstreamRequest } from './upstream-completion-request.js';

const options = {
  upstreamModel: 'org/coder',
  continuousUsage: false,
  whole: false,
  disableReasoningWith: { chat_template_kwargs: { enable_thinking: false } },
};
const request = (completion?: GenerationRequest['completion']): GenerationRequest => ({
  model: 'coder',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'def add(' }] }],
  tools: [],
  toolChoice: 'none',
  parallelToolCalls: false,
  sampling: { maxTokens: 8, temperature: 0.1, stop: ['\n'] },
  reasoning: { enabled: false },
  completion,
});

describe('toUpstreamRequest', () => {
  it('keeps a chat request a chat request', () => {
    const upstream = toUpstreamRequest(request(), options);
    expect(upstream.route).toBe('chat/completions');
    expect(upstream.body.messages).toEqual([{ role: 'user', content: 'def add(' }]);
  });

  it('makes a raw completion a /completions request: prompt, suffix, echo, logprobs, sampling and unread fields, no messages', () => {
    const upstream = toUpstreamRequest(
      request({ prompt: 'def add(', suffix: ')', echo: true, logprobs: 1, extra: { best_of: 2, model: 'ignored' } }),
      options,
    );
    expect(upstream.route).toBe('completions');
    expect(JSON.parse(JSON.stringify(upstream.body))).toEqual({
      best_of: 2,
      model: 'org/coder',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 8,
      temperature: 0.1,
      stop: ['\n'],
      prompt: 'def add(',
      suffix: ')',
      echo: true,
      logprobs: 1,
    });
  });
});
