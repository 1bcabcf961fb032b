import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import {
  getMetadataStorage,
  IsDefined,
  IsInt,
  IsOptional,
  IsString,
  Validate,
  ValidateIf,
  ValidateNested,
  ValidatorConstraint,
  validateSync,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { Type } from 'class-transformer';
import { describe, expect, it } from 'vitest';
import { MessagesRequestDto } from '../../protocols/anthropic-messages/messages-request.dto.js';
import { ChatCompletionRequestDto } from '../../protocols/openai-chat/chat-request.dto.js';
import { ResponsesRequestDto } from '../../protocols/openai-responses/responses-request.dto.js';
import { createRequire } from 'node:module';
import { GatewayConfig } from '../../config/gateway-config.js';
import { isMissingOptional, skipMissingOptionals } from './missing-optional-shortcut.js';
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

// Conditions that read what validation itself changes: whitelisting strips `legacy`, a custom
// rule lowercases `mode`, nested whitelisting strips `options.skipName`. class-validator reads
// them at each property's turn; so must anything that shortcuts it.
class ReadsStripped {
  @ValidateIf((object: Record<string, unknown>) => object.legacy === undefined)
  @IsDefined()
  @IsString()
  name?: string;
}

@ValidatorConstraint({ name: 'lowercase' })
class Lowercase implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments) {
    if (typeof value === 'string') (args.object as Record<string, unknown>)[args.property] = value.toLowerCase();
    return typeof value === 'string';
  }
}

class Normalised {
  @Validate(Lowercase)
  mode!: string;

  @ValidateIf((object: Normalised) => object.mode === 'strict')
  @IsDefined()
  @IsInt()
  level?: number;
}

class Options {
  @IsOptional()
  @IsString()
  tag?: string;
}

class ReadsNested {
  @ValidateNested()
  @Type(() => Options)
  options!: Options;

  @ValidateIf((object: ReadsNested) => (object.options as unknown as Record<string, unknown>)?.skipName !== true)
  @IsDefined()
  name?: string;
}

let conditionCalls = 0;
class Counted {
  @ValidateIf(() => {
    conditionCalls += 1;
    return true;
  })
  @IsString()
  note?: string;

  @IsOptional()
  @IsDefined()
  @IsString()
  optionalAndDefined?: string;
}

/** class-validator's per-property step as shipped, before any test installs the shortcut. */
const { ValidationExecutor } = createRequire(import.meta.url)('class-validator/cjs/validation/ValidationExecutor.js') as {
  ValidationExecutor: { prototype: { performValidations: unknown } };
};
const shippedStep = ValidationExecutor.prototype.performValidations;

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

type Mode = 'request' | 'config';

/**
 * Everything a validation run yields: the full error tree and the instance it leaves
 * (whitelisted), with the options of the request pipe or of the config loader.
 */
function verdict(type: new () => object, body: Record<string, unknown>, mode: Mode = 'request'): string {
  const entity = plainToInstance(type, structuredClone(body), mode === 'config' ? { exposeDefaultValues: true } : {});
  const errors = validateSync(
    entity,
    mode === 'config'
      ? { whitelist: true, forbidNonWhitelisted: true }
      : { whitelist: true, forbidUnknownValues: true, validationError: { target: false, value: false } },
  );
  const shape = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(shape) : value !== null && typeof value === 'object' ? Object.entries(value).map(([key, item]) => [key, shape(item)]) : value;
  return JSON.stringify({ errors, entity: shape(entity) });
}

const CASES: Array<[string, new () => object, Array<Record<string, unknown>>, Mode?]> = [
  ['a small DTO with conditions', Conditional, [{ mode: 'strict', level: 2, parts: [{ kind: 'a', size: 1 }] }, { mode: 'loose', label: 'x' }]],
  ['conditions on stripped fields', ReadsStripped, [{ legacy: 1 }, { name: 'n' }]],
  ['conditions on normalised fields', Normalised, [{ mode: 'STRICT' }, { mode: 'strict', level: 1 }]],
  ['conditions on nested stripped fields', ReadsNested, [{ options: { skipName: true } }, { options: { tag: 't' }, name: 'n' }]],
  [
    'the gateway config (config loader options)',
    GatewayConfig,
    [
      { models: [{ name: 'm', engine: 'stub' }], auth: { apiKeys: ['k'], limits: { store: 'redis', redisUrl: 'redis://h:6379' } } },
      { server: { port: 8000 }, models: [{ name: 'm', engine: 'stub' }], keepalive: { mode: 'comments', intervalMs: 1000 } },
    ],
    'config',
  ],
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

/** What RequestValidationPipe installs: the rules cache and the shortcut. */
function installSpeedups(): void {
  cacheValidationRules();
  skipMissingOptionals();
}

describe('skipMissingOptionals: missing optional fields go unvisited', () => {
  it('changes no verdict, message, order or whitelisted instance of any request DTO', () => {
    // This file runs in a process of its own: the verdicts below come from class-validator as shipped.
    const corpus = CASES.map(([name, type, valid, mode]) => ({ name, type, mode, bodies: bodies(type, valid, 400) }));
    const before = corpus.map(({ type, mode, bodies }) => bodies.map((body) => verdict(type, body, mode)));
    conditionCalls = 0;
    const countedBefore = verdict(Counted, {});
    const callsBefore = conditionCalls;
    installSpeedups();
    const after = corpus.map(({ type, mode, bodies }) => bodies.map((body) => verdict(type, body, mode)));
    conditionCalls = 0;
    expect(verdict(Counted, {})).toBe(countedBefore);
    // A `@ValidateIf` condition runs exactly as often as before (once per validation).
    expect(conditionCalls).toBe(callsBefore);
    for (const [index, { name, bodies }] of corpus.entries()) {
      for (const [at, body] of bodies.entries()) expect(after[index][at], `${name}: ${JSON.stringify(body)}`).toBe(before[index][at]);
    }
    // The corpus reaches both verdicts, and required fields left out.
    const all = before.flat();
    expect(all.filter((text) => text.startsWith('{"errors":[]')).length).toBeGreaterThan(100);
    expect(all.filter((text) => text.includes('"isDefined"') || text.includes('should not be null or undefined')).length).toBeGreaterThan(10);
  });

  it('the cases that shortcut must leave alone keep their verdicts: conditions read at their turn', () => {
    installSpeedups();
    const faults = (type: new () => object, body: Record<string, unknown>) =>
      validateSync(plainToInstance(type, body), { whitelist: true }).map((error) => error.property);
    expect(faults(ReadsStripped, { legacy: 1 })).toEqual(['name']);
    expect(faults(Normalised, { mode: 'STRICT' })).toEqual(['level']);
    expect(faults(ReadsNested, { options: { skipName: true } })).toEqual(['name']);
  });

  it('shortcuts only a missing value whose only conditions are @IsOptional', () => {
    // Installed on this class-validator (a version without the step would keep its own path).
    installSpeedups();
    expect(typeof shippedStep).toBe('function');
    expect(ValidationExecutor.prototype.performValidations).not.toBe(shippedStep);
    const rules = (type: Function, property: string) =>
      getMetadataStorage()
        .getTargetValidationMetadatas(type, '', false, false)
        .filter((rule) => rule.propertyName === property && rule.type !== 'isDefined');
    const optional = rules(Counted, 'optionalAndDefined');
    expect(isMissingOptional(undefined, optional)).toBe(true);
    expect(isMissingOptional(null, optional)).toBe(true);
    expect(isMissingOptional('', optional)).toBe(false);
    expect(isMissingOptional(0, optional)).toBe(false);
    // A @ValidateIf (alone, or beside @IsOptional) and a property without conditions: never.
    expect(isMissingOptional(undefined, rules(Counted, 'note'))).toBe(false);
    expect(isMissingOptional(undefined, rules(Normalised, 'level'))).toBe(false);
    expect(isMissingOptional(undefined, rules(Normalised, 'mode'))).toBe(false);
  });

  it('still reports a required field that is absent, and a condition that reads another field', () => {
    installSpeedups();
    const properties = (body: Record<string, unknown>) =>
      validateSync(plainToInstance(Conditional, body), { forbidUnknownValues: true }).map((error) => error.property);
    expect(properties({})).toEqual(['mode']);
    expect(properties({ mode: 'strict' })).toEqual(['level']);
    expect(properties({ mode: 'loose' })).toEqual([]);
    expect(properties({ mode: 'loose', label: 5, parts: [{ size: 'x' }] })).toEqual(['label', 'parts']);
  });
});
