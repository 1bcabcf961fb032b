import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { expect } from 'vitest';
import type { MockBehaviour } from '../../apps/mock-upstream/mock-behaviour.js';

export const PROMPT = 'one two three four five six seven eight';
export const behaving = (behaviour: Partial<MockBehaviour>) => ({ 'x-mock-behaviour': JSON.stringify(behaviour) });

/** What a client made of one answer, whatever its API. */
export interface Answer {
  text: string;
  /** The in-band error (streams) or the error status's message (whole answers). */
  error?: string;
  usage?: { prompt: number; completion: number };
  /** Opening frames seen: the role chunk, `message_start`, `response.created`. */
  openings?: number;
}

export type Api = 'chat' | 'responses' | 'messages';
export const APIS: Api[] = ['chat', 'responses', 'messages'];
export type Ask = (model: string, api: Api, stream: boolean, extra?: Record<string, unknown>) => Promise<Answer>;
/** Asks one model through one API with its official SDK, streamed or not, and reads the answer as a client would. */
export function answerer(url: string): Ask {
  const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const anthropic = new Anthropic({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
  const messages = [{ role: 'user' as const, content: PROMPT }];
  const failed = (error: unknown): Answer => ({ text: '', error: (error as Error).message });
  return async (model, api, stream, extra = {}) => {
    if (api === 'chat' && stream) {
      const { toolArguments: _ignored, ...answer } = await chatStream(url, model, { messages, ...extra });
      return answer;
    }
    if (api === 'chat') {
      const completion = await openai.chat.completions
        .create({ model, messages, ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch(failed);
      if (!('choices' in completion)) return completion;
      return {
        text: completion.choices[0].message.content ?? '',
        usage: { prompt: completion.usage!.prompt_tokens, completion: completion.usage!.completion_tokens },
      };
    }
    if (api === 'responses' && stream) {
      const events = await openai.responses.create({
        model,
        input: PROMPT,
        stream: true,
        ...extra,
      } as OpenAI.Responses.ResponseCreateParamsStreaming);
      const answer: Answer = { text: '', openings: 0 };
      let sequence = -1;
      for await (const event of events) {
        expect(event.sequence_number).toBe(sequence + 1);
        sequence = event.sequence_number;
        if (event.type === 'response.created') answer.openings! += 1;
        if (event.type === 'response.output_text.delta') answer.text += event.delta;
        if (event.type === 'response.failed') answer.error = event.response.error?.message;
        if (event.type === 'response.completed')
          answer.usage = {
            prompt: event.response.usage!.input_tokens,
            completion: event.response.usage!.output_tokens,
          };
      }
      return answer;
    }
    if (api === 'responses') {
      const response = await openai.responses
        .create({ model, input: PROMPT, ...extra } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
        .catch(failed);
      if ('error' in response && !('output' in response)) return response as Answer;
      const whole = response as OpenAI.Responses.Response;
      return {
        text: whole.output_text,
        usage: { prompt: whole.usage!.input_tokens, completion: whole.usage!.output_tokens },
      };
    }
    if (stream) {
      const answer: Answer = { text: '', openings: 0 };
      const blocks = new Set<number>();
      let prompt = 0;
      try {
        const events = await anthropic.messages.create({ model, max_tokens: 100, messages, stream: true, ...extra });
        for await (const event of events) {
          if (event.type === 'message_start') {
            answer.openings! += 1;
            prompt = event.message.usage.input_tokens;
          }
          if (event.type === 'content_block_start') blocks.add(event.index);
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
            answer.text += event.delta.text;
          if (event.type === 'message_delta') answer.usage = { prompt, completion: event.usage.output_tokens };
        }
      } catch (error) {
        answer.error = (error as Error).message;
      }
      // One text block, however many replicas wrote it.
      if (!answer.error) expect([...blocks]).toEqual([0]);
      return answer;
    }
    const message = await anthropic.messages.create({ model, max_tokens: 100, messages, ...extra }).catch(failed);
    if (!('content' in message)) return message;
    const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    return { text, usage: { prompt: message.usage.input_tokens, completion: message.usage.output_tokens } };
  };
}

/** A streamed chat completion with the openai SDK: its text, tool-call arguments, usage, role chunks and in-band error. */
export async function chatStream(
  url: string,
  model: string,
  body: Record<string, unknown>,
): Promise<Answer & { toolArguments: string }> {
  const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const answer: Answer & { toolArguments: string } = { text: '', openings: 0, toolArguments: '' };
  try {
    const stream = await openai.chat.completions.create({
      model,
      stream: true,
      stream_options: { include_usage: true },
      ...body,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.role) answer.openings! += 1;
      answer.text += delta?.content ?? '';
      answer.toolArguments += delta?.tool_calls?.map((call) => call.function?.arguments ?? '').join('') ?? '';
      if (chunk.usage) answer.usage = { prompt: chunk.usage.prompt_tokens, completion: chunk.usage.completion_tokens };
    }
  } catch (error) {
    answer.error = (error as Error).message;
  }
  return answer;
}
