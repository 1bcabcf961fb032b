import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, IsDefined, IsInt, IsOptional, IsString, ValidateIf, ValidateNested, validateSync } from 'class-validator';
import { Type } from 'class-transformer';
import { describe, expect, it } from 'vitest';
import { MessagesRequestDto } from '../protocols/anthropic-messages/messages-request.dto.js';
import { ChatCompletionRequestDto } from '../protocols/openai-chat/chat-request.dto.js';
import { ResponsesRequestDto } from '../protocols/openai-responses/responses-request.dto.js';
import { cacheValidationRules } from './validation-rules-cache.js';

class Part {
  @IsString()
  kind!: string;

  @IsOptional()
  @IsInt()
  size?: number;
}

class Conditional {
  @IsOptional()
  @IsString()
  label?: string;

  // Required only when `mode` is "strict": a condition that reads another field.
  @ValidateIf((object: Conditional) => object.mode === 'strict')
  @IsDefined()
  @IsInt()
  level?: number;

  @IsString()
  mode!: string;

  @IsOptional()
  @ValidateNested({ each: true })
  @Type(() => Part)
  parts?: Part[];
}

/** A small deterministic generator, so that a failure names a body that can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const ODD_VALUES: unknown[] = [null, 'text', 7, -1, 0.5, true, [], ['a'], {}, { role: 'user', content: 'x' }, { type: 'text', text: 'y' }];

/** Valid bodies with fields dropped, nulled or replaced, at the top level and one level down. */
function bodies(type: Function, valid: Array<Record<string, unknown>>, count: number): Array<Record<string, unknown>> {
  const properties = [...new Set(getMetadataStorage().getTargetValidationMetadatas(type, '', false, false).map((rule) => rule.propertyName))];
  const next = random(properties.length * 7919 + count);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const out: Array<Record<string, unknown>> = [];
  for (let index = 0; index < count; index += 1) {
    const body = structuredClone(pick(valid));
    for (let change = Math.floor(next() * 4); change > 0; change -= 1) {
      const property = next() < 0.1 ? 'unknown_field' : pick(properties);
      if (next() < 0.3) delete body[property];
      else body[property] = structuredClone(pick(ODD_VALUES));
    }
    const nested = Object.values(body).find((value): value is unknown[] => Array.isArray(value) && typeof value[0] === 'object');
    if (nested && nested[0] !== null && next() < 0.5) {
      const item = nested[0] as Record<string, unknown>;
      const key = pick(Object.keys(item).concat('content', 'name', 'tool_calls'));
      if (next() < 0.5) delete item[key];
      else item[key] = structuredClone(pick(ODD_VALUES));
    }
    out.push(body);
  }
  return out;
}

/** Everything a validation run yields: the full error tree and the instance it leaves (whitelisted). */
function verdict(type: new () => object, body: Record<string, unknown>): string {
  const entity = plainToInstance(type, structuredClone(body));
  const errors = validateSync(entity, { whitelist: true, forbidUnknownValues: true, validationError: { target: false, value: false } });
  const shape = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(shape) : value !== null && typeof value === 'object' ? Object.entries(value).map(([key, item]) => [key, shape(item)]) : value;
  return JSON.stringify({ errors, entity: shape(entity) });
}

const CASES: Array<[string, new () => object, Array<Record<string, unknown>>]> = [
  ['a small DTO with conditions', Conditional, [{ mode: 'strict', level: 2, parts: [{ kind: 'a', size: 1 }] }, { mode: 'loose', label: 'x' }]],
  [
    'Chat Completions',
    ChatCompletionRequestDto,
    [
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16, stream: true, stream_options: { include_usage: true } },
      {
        model: 'm',
        messages: [
          { role: 'system', content: 's' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c', content: 'r' },
        ],
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
        tool_choice: 'auto',
        temperature: 0.2,
        stop: ['x'],
      },
    ],
  ],
  ['Responses', ResponsesRequestDto, [{ model: 'm', input: 'hi', max_output_tokens: 20, stream: true }, { model: 'm', input: [{ role: 'user', content: 'hi' }], instructions: 'be brief' }]],
  [
    'Messages',
    MessagesRequestDto,
    [
      { model: 'm', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }], system: 's', stream: true },
      { model: 'm', max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [{ name: 't', input_schema: { type: 'object' } }] },
    ],
  ],
];

describe('cacheValidationRules: absent optional fields go unvisited', () => {
  it('changes no verdict, message, order or whitelisted instance of any request DTO', () => {
    // This file runs in a process of its own: the verdicts below come from class-validator as shipped.
    const corpus = CASES.map(([name, type, valid]) => ({ name, type, bodies: bodies(type, valid, 400) }));
    const before = corpus.map(({ type, bodies }) => bodies.map((body) => verdict(type, body)));
    cacheValidationRules();
    const after = corpus.map(({ type, bodies }) => bodies.map((body) => verdict(type, body)));
    for (const [index, { name, bodies }] of corpus.entries()) {
      for (const [at, body] of bodies.entries()) expect(after[index][at], `${name}: ${JSON.stringify(body)}`).toBe(before[index][at]);
    }
    // The corpus reaches both verdicts, and required fields left out.
    const all = before.flat();
    expect(all.filter((text) => text.startsWith('{"errors":[]')).length).toBeGreaterThan(100);
    expect(all.filter((text) => text.includes('"isDefined"') || text.includes('should not be null or undefined')).length).toBeGreaterThan(10);
  });

  it('still reports a required field that is absent, and a condition that reads another field', () => {
    cacheValidationRules();
    const properties = (body: Record<string, unknown>) =>
      validateSync(plainToInstance(Conditional, body), { forbidUnknownValues: true }).map((error) => error.property);
    expect(properties({})).toEqual(['mode']);
    expect(properties({ mode: 'strict' })).toEqual(['level']);
    expect(properties({ mode: 'loose' })).toEqual([]);
    expect(properties({ mode: 'loose', label: 5, parts: [{ size: 'x' }] })).toEqual(['label', 'parts']);
  });
});
