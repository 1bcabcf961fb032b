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
    for (const body of [null, [], 'text', 3])
      expect(refusal(body)).toMatchObject({
        kind: 'invalid_request',
        message: 'The request body must be a JSON object.',
      });
  });

  it('names one problem for a field of the wrong kind, not its range, length or nesting too', () => {
    const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(refusal({ ...base, tools: null })).toMatchObject({ message: 'tools must be an array', param: 'tools' });
    expect(refusal({ ...base, temperature: 'hot' })).toMatchObject({
      message: 'temperature must be a number conforming to the specified constraints',
    });
    expect(refusal({ ...base, temperature: 7 })).toMatchObject({ message: 'temperature must not be greater than 2' });
    expect(refusal({ ...base, response_format: 7 })).toMatchObject({
      message: 'response_format must be a JSON object',
    });
    expect(refusal({ ...base, empty: 1, messages: undefined })).toMatchObject({ param: 'messages' });
  });

  it('reads null as absent where the API allows null, and refuses it elsewhere', () => {
    const dto = validate({
      model: 'm',
      messages: [
        { role: 'assistant', content: null, tool_calls: null },
        { role: 'user', content: 'hi' },
      ],
      stop: null,
      temperature: null,
    });
    expect(dto.stop).toBeUndefined();
    expect(dto.temperature).toBeUndefined();
    expect(dto.messages[0].tool_calls).toBeUndefined();
    expect(refusal({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tool_choice: null })).toMatchObject({
      param: 'tool_choice',
    });
  });

  it('keeps a `constructor` key where the body is free-form (a JSON Schema), and drops it where it is unknown', () => {
    const schema = {
      type: 'object',
      properties: { constructor: { type: 'string' }, other: { type: 'number' } },
      required: ['constructor'],
    };
    const dto = validate({
      model: 'm',
      messages: [{ role: 'user', content: 'hi', constructor: 'x' }],
      tools: [{ type: 'function', function: { name: 'make', parameters: schema } }],
    });
    expect(dto.tools![0].function.parameters).toEqual(schema);
    expect(Object.hasOwn(dto.messages[0], 'constructor')).toBe(false);
  });
});
