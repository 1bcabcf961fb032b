import { describe, expect, it } from 'vitest';
import { parseChatOptions, UsageError } from './chat-options.js';

describe('parseChatOptions', () => {
  it('defaults to the local gateway, the chat API and no model (the first listed is used)', () => {
    expect(parseChatOptions([], {})).toEqual({
      baseUrl: 'http://127.0.0.1:8000',
      model: undefined,
      api: 'chat',
      prompt: undefined,
      system: undefined,
      maxTokens: undefined,
      apiKey: undefined,
      help: false,
    });
  });

  it('reads every flag, accepts a base URL ending in /v1, and takes the URL and key from the environment', () => {
    const argv = [
      '--url',
      'http://gpu-box:8000/v1/',
      '--model',
      'slow',
      '--api',
      'messages',
      '--prompt',
      'hi',
      '--system',
      'be brief',
      '--max-tokens',
      '64',
      '--api-key',
      'k1',
    ];
    expect(parseChatOptions(argv, {})).toMatchObject({
      baseUrl: 'http://gpu-box:8000',
      model: 'slow',
      api: 'messages',
      prompt: 'hi',
      system: 'be brief',
      maxTokens: 64,
      apiKey: 'k1',
    });
    expect(parseChatOptions([], { GANTRY_URL: 'https://gantry.example', GANTRY_API_KEY: 'k2' })).toMatchObject({
      baseUrl: 'https://gantry.example',
      apiKey: 'k2',
    });
  });

  it('refuses unknown flags, unknown APIs, bad token limits and URLs without a scheme', () => {
    expect(() => parseChatOptions(['--modle', 'x'], {})).toThrow(UsageError);
    expect(() => parseChatOptions(['--api', 'completions'], {})).toThrow(
      /--api must be one of chat, responses, messages/,
    );
    expect(() => parseChatOptions(['--max-tokens', '0'], {})).toThrow(/--max-tokens must be a positive integer/);
    expect(() => parseChatOptions(['--url', 'localhost:8000'], {})).toThrow(/--url must start with http/);
  });
});
