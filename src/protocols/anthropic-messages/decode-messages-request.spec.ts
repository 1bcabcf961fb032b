import { plainToInstance } from 'class-transformer';
import { describe, expect, it } from 'vitest';
import { decodeMessagesRequest } from './decode-messages-request.js';
import { MessagesRequestDto } from './messages-request.dto.js';

const decode = (thinking?: unknown) =>
  decodeMessagesRequest(
    plainToInstance(MessagesRequestDto, {
      model: 'm',
      max_tokens: 2000,
      messages: [{ role: 'user', content: 'hi' }],
      thinking,
    }),
  );

describe('decodeMessagesRequest: thinking', () => {
  it('shows reasoning only when thinking is enabled or adaptive, as the real API sends thinking blocks', () => {
    expect(decode({ type: 'enabled', budget_tokens: 1024 })).toMatchObject({
      reasoning: { enabled: true, budgetTokens: 1024 },
      reasoningOutput: 'show',
    });
    expect(decode({ type: 'adaptive' })).toMatchObject({ reasoning: { enabled: true }, reasoningOutput: 'show' });
    expect(decode({ type: 'disabled' })).toMatchObject({ reasoning: { enabled: false }, reasoningOutput: 'hide' });
    expect(decode()).toMatchObject({ reasoning: undefined, reasoningOutput: 'hide' });
    expect(decode(null)).toMatchObject({ reasoningOutput: 'hide' });
  });
});
