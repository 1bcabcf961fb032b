import { describe, expect, it } from 'vitest';
import { ChatCompletionRequestDto } from '../../protocols/openai-chat/chat-request.dto.js';
import { validated } from './validated-body.js';

describe('validated', () => {
  it('passes a body the validation pipe turned into its DTO', () => {
    const body = Object.assign(new ChatCompletionRequestDto(), { model: 'stub' });
    expect(validated(body, ChatCompletionRequestDto)).toBe(body);
  });

  it('refuses a plain object (the pipe did not see it as the body): a 500, never served unvalidated', () => {
    expect(() => validated({ model: 'stub', messages: [] }, ChatCompletionRequestDto)).toThrow(
      expect.objectContaining({ kind: 'internal', message: expect.stringMatching(/not validated/) }),
    );
  });
});
