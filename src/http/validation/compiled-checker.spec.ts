import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsString,
  Max,
  Min,
  ValidateBy,
  type ValidationArguments,
  validateSync,
  type ValidatorOptions,
} from 'class-validator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostileCases } from '../../../test/support/hostile-bodies.js';
import { hostileShapeCases, SHAPE_ENDPOINTS } from '../../../test/support/hostile-shapes.js';
import { CountTokensRequestDto, MessagesRequestDto } from '../../protocols/anthropic-messages/messages-request.dto.js';
import { ChatCompletionRequestDto } from '../../protocols/openai-chat/chat-request.dto.js';
import { InputTokensRequestDto, ResponsesRequestDto } from '../../protocols/openai-responses/responses-request.dto.js';
import { NestedObject, NestedObjectList, Nullable, Optional } from '../../protocols/validation/dto-fields.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { passesValidation } from './compiled-checker.js';
import { isCompiled, toInstance } from './compiled-transform.js';
import { validateRequestBody } from './request-validation.pipe.js';
import { nestsDeeperThan } from './strict-json-body-parser.js';

/** Each API's body DTO, by the path that takes it. */
const DTO_OF_PATH: Record<string, new () => object> = {
  '/v1/chat/completions': ChatCompletionRequestDto,
  '/v1/responses': ResponsesRequestDto,
  '/v1/responses/input_tokens': InputTokensRequestDto,
  '/v1/messages': MessagesRequestDto,
  '/v1/messages/count_tokens': CountTokensRequestDto,
};

/** The options request-validation.pipe.ts gives class-validator. */
const OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidUnknownValues: true,
  validationError: { target: false, value: false },
};

type Verdict = { kind: 'accepted'; entity: object } | { kind: 'refused' } | { kind: 'untransformable' };

/** class-validator's verdict on class-transformer's instance, and the instance it leaves (unknown keys stripped). */
function reference(dto: new () => object, body: unknown): Verdict {
  const entity = transform(dto, body);
  if (!entity) return { kind: 'untransformable' };
  return validateSync(entity, OPTIONS).length === 0 ? { kind: 'accepted', entity } : { kind: 'refused' };
}

/** The compiled transform and checker, as the pipe runs them; the transform's instance must be class-transformer's. */
function compiled(dto: new () => object, body: unknown): Verdict {
  const expected = transform(dto, body);
  if (!expected) return { kind: 'untransformable' };
  // The pipe hands the transform JSON objects only (it refuses any other body first).
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  const entity = isObject ? toInstance(dto, structuredClone(body)) : expected;
  expect(entity).toStrictEqual(expected);
  return passesValidation(entity) ? { kind: 'accepted', entity } : { kind: 'refused' };
}

/** class-transformer throws on a `constructor` key (the pipe renames those first); such bodies are left out. */
function transform(dto: new () => object, body: unknown): object | undefined {
  try {
    return plainToInstance(dto, structuredClone(body));
  } catch {
    return undefined;
  }
}

function expectAgreement(dto: new () => object, body: unknown): Verdict {
  const expected = reference(dto, body);
  const actual = compiled(dto, body);
  expect(actual.kind, JSON.stringify(body)?.slice(0, 300)).toBe(expected.kind);
  // The same instance reaches the decoders: same classes, same keys stripped.
  if (actual.kind === 'accepted' && expected.kind === 'accepted') expect(actual.entity).toStrictEqual(expected.entity);
  return expected;
}

/** Values that break, or just pass, the DTOs' rules: kinds, bounds, the keywords conditions read. */
const SPECIAL_VALUES: unknown[] = [
  null,
  [],
  {},
  [[]],
  [{}],
  [null],
  '',
  ' ',
  0,
  -1,
  1,
  1.5,
  2,
  16,
  1024,
  1e300,
  true,
  false,
  'x',
  'user',
  'assistant',
  'system',
  'developer',
  'tool',
  'function',
  'text',
  'image_url',
  'refusal',
  'json_schema',
  'json_object',
  'enabled',
  'disabled',
  'auto',
  'none',
  'required',
  'any',
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'input_text',
  'output_text',
  'tool_use',
  'tool_result',
  'custom',
  '__proto__',
  'toString',
  { toString: 1, valueOf: { hasOwnProperty: [] }, ok: 2 },
  'bad name!',
  ['a', 'b'],
  [1, 2],
  { type: 'function', function: { name: 'f' } },
  { type: 'text', text: 'hi' },
  { role: 'user', content: 'hi' },
];
const KEYS = [
  'type',
  'role',
  'content',
  'name',
  'text',
  'id',
  'function',
  'arguments',
  'input',
  'extra',
  '__proto__',
  'toString',
  'valueOf',
];

const valueArbitrary = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_VALUES) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);
const mutationArbitrary = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('replace', 'replace', 'delete', 'add'),
  key: fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 6 })),
  value: valueArbitrary,
});

type Segment = string | number;

function pathsOf(value: unknown, at: Segment[] = []): Segment[][] {
  const paths: Segment[][] = [at];
  if (Array.isArray(value)) value.forEach((item, index) => paths.push(...pathsOf(item, [...at, index])));
  else if (value !== null && typeof value === 'object')
    for (const [key, inner] of Object.entries(value)) paths.push(...pathsOf(inner, [...at, key]));
  return paths;
}

/** One change at one place in the body; as JSON.parse would have made it (an own `__proto__` key included). */
function mutate(body: unknown, mutation: { at: number; op: string; key: string; value: unknown }): unknown {
  const paths = pathsOf(body);
  const path = paths[mutation.at % paths.length];
  if (path.length === 0) {
    if (mutation.op === 'replace') return mutation.value;
    if (mutation.op === 'add' && typeof body === 'object' && body !== null && !Array.isArray(body))
      define(body as Record<string, unknown>, mutation.key, mutation.value);
    return body;
  }
  const holder = path
    .slice(0, -1)
    .reduce<unknown>((inner, segment) => (inner as Record<Segment, unknown>)[segment], body);
  const last = path.at(-1)!;
  const record = holder as Record<Segment, unknown>;
  if (mutation.op === 'delete') {
    if (Array.isArray(holder)) holder.splice(last as number, 1);
    else delete record[last];
  } else if (mutation.op === 'add') {
    const target = record[last];
    if (Array.isArray(target)) target.push(mutation.value);
    else if (target !== null && typeof target === 'object')
      define(target as Record<string, unknown>, mutation.key, mutation.value);
    else record[last] = mutation.value;
  } else {
    record[last] = mutation.value;
  }
  return body;
}

function define(record: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

describe('the compiled checker agrees with class-validator', () => {
  it("on every API's full valid bodies (accepted, and the same instance)", () => {
    for (const endpoint of SHAPE_ENDPOINTS) {
      const verdict = expectAgreement(DTO_OF_PATH[endpoint.path], endpoint.body());
      expect(verdict.kind).toBe('accepted');
    }
    // Every API's DTO takes the compiled copy, so the instances compared above are the compiled transform's.
    for (const dto of Object.values(DTO_OF_PATH)) expect(isCompiled(dto), dto.name).toBe(true);
  });

  it("on generated bodies: each API's full body changed at one to four places", () => {
    let refused = 0;
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...SHAPE_ENDPOINTS),
        fc.array(mutationArbitrary, { minLength: 1, maxLength: 4 }),
        (endpoint, mutations) => {
          const body = mutations.reduce<unknown>((inner, mutation) => mutate(inner, mutation), endpoint.body());
          const verdict = expectAgreement(DTO_OF_PATH[endpoint.path], JSON.parse(JSON.stringify(body) ?? 'null'));
          if (verdict.kind === 'accepted') accepted += 1;
          if (verdict.kind === 'refused') refused += 1;
        },
      ),
      { numRuns: 3000, seed: 37 },
    );
    // Both sides of the line were reached, often.
    expect(accepted).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(300);
  });

  it('on arbitrary JSON bodies', () => {
    fc.assert(
      fc.property(fc.constantFrom(...Object.values(DTO_OF_PATH)), fc.jsonValue({ maxDepth: 4 }), (dto, body) => {
        if (body !== null && typeof body === 'object' && !Array.isArray(body)) expectAgreement(dto, body);
      }),
      { numRuns: 1000, seed: 37 },
    );
  });

  it('on the hostile bodies and hostile shapes of the e2e suites', () => {
    const decoder = new TextDecoder();
    const parsed = (bytes: Uint8Array): unknown => {
      try {
        return JSON.parse(decoder.decode(bytes));
      } catch {
        return undefined;
      }
    };
    let seed = 37;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const cases = [
      ...hostileCases(400, random, { maxTokensModel: 'stub', maxTokens: 64, maxMessages: 8 }),
      ...hostileShapeCases(),
    ];
    let compared = 0;
    for (const hostile of cases) {
      const dto = DTO_OF_PATH[hostile.path];
      const body = parsed(hostile.body);
      if (!dto || body === null || typeof body !== 'object' || Array.isArray(body)) continue;
      // Bodies nested deeper than server.maxJsonDepth are refused by the body parser, before validation.
      if (nestsDeeperThan(body, 64)) continue;
      expectAgreement(dto, body);
      compared += 1;
    }
    expect(compared).toBeGreaterThan(200);
  });
});

describe('validateRequestBody', () => {
  it('refuses a role named like an Object property with a 400, as any unknown role (it threw a TypeError)', () => {
    const bodies: Array<[new () => object, object]> = [];
    for (const role of ['__proto__', 'toString', 'constructor']) {
      bodies.push([
        ChatCompletionRequestDto,
        { model: 'm', messages: [{ role, content: [{ type: 'text', text: 'hi' }] }] },
      ]);
      bodies.push([
        ResponsesRequestDto,
        { model: 'm', input: [{ role, content: [{ type: 'input_text', text: 'hi' }] }] },
      ]);
      bodies.push([
        MessagesRequestDto,
        { model: 'm', max_tokens: 8, messages: [{ role, content: [{ type: 'text', text: 'hi' }] }] },
      ]);
    }
    for (const [dto, body] of bodies) {
      const parsed = JSON.parse(JSON.stringify(body).replace('"role":"', '"role":"')) as object;
      expect(() => validateRequestBody(dto, parsed)).toThrow(GatewayError);
    }
  });
});

describe('the compiled checker on any class-validator DTO', () => {
  class Leaf {
    @IsIn(['a', 'b'])
    kind!: string;

    @Optional()
    @IsInt()
    @Min(0)
    @Max(9)
    count?: number;
  }
  class Root {
    @IsString()
    name!: string;

    @Nullable()
    @NestedObject(() => Leaf)
    leaf?: Leaf;

    @Optional()
    @NestedObjectList(() => Leaf)
    leaves?: Leaf[];

    @Optional()
    @IsString({ each: true })
    tags?: string[];
  }

  it('checks nested classes it has not seen, and strips unknown keys at every depth', () => {
    const entity = plainToInstance(Root, {
      name: 'n',
      leaf: { kind: 'a', odd: 1 },
      leaves: [{ kind: 'b', count: 3, x: 2 }],
      y: 0,
    });
    expect(passesValidation(entity)).toBe(true);
    expect(entity).toStrictEqual(
      plainToInstance(Root, { name: 'n', leaf: { kind: 'a' }, leaves: [{ kind: 'b', count: 3 }] }),
    );
    for (const body of [
      { name: 1 },
      { name: 'n', leaf: { kind: 'c' } },
      { name: 'n', leaves: [{ kind: 'a', count: 10 }] },
      { name: 'n', leaves: [[{ kind: 'a' }]] },
      { name: 'n', tags: ['x', 2] },
    ]) {
      expect(passesValidation(plainToInstance(Root, body))).toBe(false);
      expect(reference(Root, body).kind).toBe('refused');
    }
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('name', 'leaf', 'leaves', 'tags', 'kind', 'count'), valueArbitrary),
        (body) => {
          expectAgreement(Root, body);
        },
      ),
      { numRuns: 500, seed: 37 },
    );
  });

  it('gives a constraint the arguments class-validator gives, and keeps none of them after the check', () => {
    const seen: Array<{ args: ValidationArguments; copy: ValidationArguments; item: unknown }> = [];
    const record = (item: unknown, args?: ValidationArguments) => {
      seen.push({ args: args!, copy: { ...args! }, item });
      return typeof item === 'string';
    };
    class Tagged {
      @ValidateBy({ name: 'recorded', constraints: [7], validator: { validate: record } }, { each: true })
      tags!: string[];
    }
    const body = { tags: ['x', 'y'] };
    validateSync(plainToInstance(Tagged, body), OPTIONS);
    const theirs = seen.splice(0).map(({ copy, item }) => ({ ...copy, object: undefined, item }));
    const entity = plainToInstance(Tagged, body);
    expect(passesValidation(entity)).toBe(true);
    expect(seen.map(({ copy }) => copy.object)).toStrictEqual([entity, entity]);
    expect(seen.map(({ copy, item }) => ({ ...copy, object: undefined, item }))).toStrictEqual(theirs);
    // The one object a constraint is handed is emptied once the check is done: no body outlives its request.
    expect(seen[0].args.object).toBeUndefined();
    expect(seen[0].args.value).toBeUndefined();
  });
});
