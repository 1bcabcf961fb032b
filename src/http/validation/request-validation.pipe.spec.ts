import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { ChatCompletionRequestDto } from '../../protocols/openai-chat/chat-request.dto.js';
import { RequestValidationPipe } from './request-validation.pipe.js';

const pipe = new RequestValidationPipe();
const asBody = { type: 'body' as const, metatype: ChatCompletionRequestDto, data: undefined };
const validate = (body: unknown) => pipe.transform(body, asBody) as ChatCompletionRequestDto;
const refusal = (body: unknown) => {
  try {
    validate(body);
  } catch (error) {
    return error;
  }
  throw new Error('the body was accepted');
};

describe('RequestValidationPipe', () => {
  it('hands over a DTO instance without the fields it does not know', () => {
    const dto = validate({ model: 'm', messages: [{ role: 'user', content: 'hi', mood: 'odd' }], surprise: 1 });
    expect(dto).toBeInstanceOf(ChatCompletionRequestDto);
    expect(dto).not.toHaveProperty('surprise');
    expect(dto.messages[0]).not.toHaveProperty('mood');
  });

  it('refuses with a 400 naming every field at fault, the first as param', () => {
    const error = refusal({ model: 7, messages: 'no' });
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ kind: 'invalid_request', param: 'model' });
    expect((error as Error).message).toMatch(/model/);
    expect((error as Error).message).toMatch(/messages/);
    for (const body of [null, [], 'text', 3]) expect(refusal(body)).toMatchObject({ kind: 'invalid_request', message: 'The request body must be a JSON object.' });
  });

  it('keeps a `constructor` key where the body is free-form (a JSON Schema), and drops it where it is unknown', () => {
    const schema = { type: 'object', properties: { constructor: { type: 'string' }, other: { type: 'number' } }, required: ['constructor'] };
    const dto = validate({
      model: 'm',
      messages: [{ role: 'user', content: 'hi', constructor: 'x' }],
      tools: [{ type: 'function', function: { name: 'make', parameters: schema } }],
    });
    expect(dto.tools![0].function.parameters).toEqual(schema);
    expect(Object.hasOwn(dto.messages[0], 'constructor')).toBe(false);
  });
});
