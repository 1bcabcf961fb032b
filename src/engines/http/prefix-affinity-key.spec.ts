import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolDefinition } from '../../engine/generation-request.js';
import { generationRequest, userMessage } from '../../../test/support/requests.js';
import { prefixAffinityPosition, prefixAffinityText, PREFIX_KEY_LIMITS } from './prefix-affinity-key.js';

const system = (content: string): ChatMessage => ({ role: 'system', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });
const lookup: ToolDefinition = { name: 'lookup', description: 'Finds a record.', parameters: { type: 'object' } };
const conversation = (...later: ChatMessage[]) =>
  generationRequest({
    messages: [system('You are a careful assistant.'), userMessage('Summarise this report: ...'), ...later],
    tools: [lookup],
  });

describe('the prefix-affinity key', () => {
  it('is the same for every turn of one conversation', () => {
    const first = prefixAffinityPosition(conversation());
    expect(prefixAffinityPosition(conversation(assistant('Here it is.'), userMessage('Shorter, please.')))).toBe(first);
    expect(
      prefixAffinityPosition(
        conversation(
          assistant('Here it is.'),
          userMessage('Shorter.'),
          assistant('Done.'),
          userMessage('Now in French.'),
        ),
      ),
    ).toBe(first);
  });

  it('tells conversations apart by their system prompt, their tools or their first user turn', () => {
    const base = prefixAffinityPosition(conversation());
    const variants = [
      generationRequest({
        messages: [system('You are terse.'), userMessage('Summarise this report: ...')],
        tools: [lookup],
      }),
      generationRequest({
        messages: [system('You are a careful assistant.'), userMessage('Summarise this report: ...')],
        tools: [],
      }),
      generationRequest({
        messages: [system('You are a careful assistant.'), userMessage('Translate this: ...')],
        tools: [lookup],
      }),
      generationRequest({ messages: [userMessage('Summarise this report: ...')], tools: [lookup] }),
    ];
    const positions = variants.map((request) => prefixAffinityPosition(request));
    expect(new Set([base, ...positions]).size).toBe(5);
  });

  it('reads a bounded start: a huge system prompt is cut, and the first user turn still tells conversations apart', () => {
    const long = 'Policy clause. '.repeat(100_000);
    const ask = (text: string) => generationRequest({ messages: [system(long), userMessage(text)] });
    const text = prefixAffinityText(ask('first conversation'));
    expect(text.length).toBeLessThanOrEqual(PREFIX_KEY_LIMITS.leadChars + PREFIX_KEY_LIMITS.firstTurnChars + 1);
    expect(prefixAffinityPosition(ask('first conversation'))).not.toBe(
      prefixAffinityPosition(ask('second conversation')),
    );
    // What lies past the budget does not change the key (an image's data URL, a long document).
    const image = (data: string) =>
      generationRequest({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x'.repeat(3000) },
              { type: 'image', url: `data:image/png;base64,${data}` },
            ],
          },
        ],
      });
    expect(prefixAffinityPosition(image('AAAA'))).toBe(prefixAffinityPosition(image('BBBB')));
  });

  it('keys a conversation without a user turn by what it has', () => {
    const only = generationRequest({ messages: [system('Say hello.')] });
    expect(prefixAffinityText(only)).toContain('Say hello.');
  });
});
