import { describe, expect, it } from 'vitest';
import { generationRequest, userMessage } from '../../../test/support/requests.js';
import { EngineError } from '../../engine/engine-error.js';
import { toChatFunctions, toChatHistory } from './chat-history.js';

const weather = { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } };
const time = { name: 'get_time' };

describe('toChatHistory', () => {
  it('maps a conversation and opens the model turn to generate', () => {
    const history = toChatHistory(
      generationRequest({
        messages: [
          { role: 'system', content: 'be brief' },
          userMessage('hi'),
          { role: 'assistant', content: 'hello', reasoning: 'greet' },
          userMessage('again'),
        ],
      }),
    );
    expect(history).toEqual([
      { type: 'system', text: 'be brief' },
      { type: 'user', text: 'hi' },
      { type: 'model', response: [{ type: 'segment', segmentType: 'thought', text: 'greet', ended: true }, 'hello'] },
      { type: 'user', text: 'again' },
      { type: 'model', response: [] },
    ]);
  });

  it('attaches tool results to their calls and continues the same model turn after them', () => {
    const history = toChatHistory(
      generationRequest({
        messages: [
          userMessage('weather?'),
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
          },
          { role: 'tool', toolCallId: 'call_1', content: '21 C' },
        ],
      }),
    );
    expect(history).toEqual([
      { type: 'user', text: 'weather?' },
      {
        type: 'model',
        response: [{ type: 'functionCall', name: 'get_weather', params: { city: 'Paris' }, result: '21 C' }],
      },
    ]);
  });

  it('refuses image parts', () => {
    const request = generationRequest({
      messages: [{ role: 'user', content: [{ type: 'image', url: 'data:image/png;base64,AA' }] }],
    });
    expect(() => toChatHistory(request)).toThrow(EngineError);
  });
});

describe('toChatFunctions', () => {
  it('offers every tool, only the named one, or none as tool_choice says', () => {
    expect(Object.keys(toChatFunctions(generationRequest({ tools: [weather, time] }))!)).toEqual([
      'get_weather',
      'get_time',
    ]);
    expect(
      Object.keys(toChatFunctions(generationRequest({ tools: [weather, time], toolChoice: { name: 'get_time' } }))!),
    ).toEqual(['get_time']);
    expect(toChatFunctions(generationRequest({ tools: [weather], toolChoice: 'none' }))).toBeUndefined();
  });
});
