import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { type ValidationError, validateSync, type ValidatorOptions } from 'class-validator';
import { GatewayError } from '../../errors/gateway-error.js';
import { flattenValidationErrors } from '../../errors/format-validation-errors.js';
import { passesValidation } from './compiled-checker.js';
import { toInstance } from './compiled-transform.js';

/** A body with thousands of bad items gets a readable message, not one line per item. */
const MAX_PROBLEMS_SHOWN = 20;

const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidUnknownValues: true,
  validationError: { target: false, value: false },
};

/** Constraints on what kind of value a field holds (class-validator's names, and Gantry's `isJsonObject*`). */
const KIND_CONSTRAINTS: ReadonlySet<string> = new Set([
  'isDefined',
  'isString',
  'isNumber',
  'isInt',
  'isBoolean',
  'isArray',
  'isJsonObject',
  'isJsonObjectList',
]);

/**
 * A field of the wrong kind has that one problem: `tools: null` is "tools must be an array", not
 * also too long and badly nested; `temperature: "hot"` is not a number before it is out of range.
 */
function kindFirst(errors: ValidationError[]): ValidationError[] {
  for (const error of errors) {
    const kinds = Object.entries(error.constraints ?? {}).filter(([name]) => KIND_CONSTRAINTS.has(name));
    if (kinds.length > 0) {
      error.constraints = Object.fromEntries(kinds);
      error.children = [];
    } else if (error.children) {
      kindFirst(error.children);
    }
  }
  return errors;
}

const NOT_VALIDATED: ReadonlySet<unknown> = new Set([String, Boolean, Number, Array, Object, undefined]);

/** The stand-in name of a `constructor` key while class-transformer reads the body. */
const CONSTRUCTOR_STAND_IN = '\u0000constructor';

/** Tried as it is first: a `constructor` key is rare, and looking for one costs a walk of the body. */
function validateBody(metatype: Function, value: object): { entity: object; errors: ValidationError[] } {
  try {
    return validate(metatype, value);
  } catch (error) {
    // class-transformer does not modify its input (no request DTO uses a discriminator).
    if (error instanceof TypeError && hasConstructorKey(value)) return validateWithStandIns(metatype, value);
    throw error;
  }
}

/**
 * The compiled transform and checker decide (compiled-transform.ts, compiled-checker.ts);
 * class-validator runs only on a body the checker refuses, to word the errors, and has the last
 * word. It reads the compiled copy, which equals class-transformer's (the differential spec pins
 * it): copying a hostile body again with class-transformer cost seconds (docs/benchmarks.md).
 */
function validate(metatype: Function, value: object): { entity: object; errors: ValidationError[] } {
  const entity = toInstance(metatype as new () => object, value);
  if (passesValidation(entity)) return { entity, errors: [] };
  return { entity, errors: validateSync(entity, VALIDATOR_OPTIONS) };
}

/**
 * class-transformer takes an object's own `constructor` key for the object's class, and fails on
 * it. A free-form part of a body may hold one legitimately (a tool's JSON Schema describing a
 * property named so), so such keys go through under a stand-in name and get their name back.
 */
function validateWithStandIns(metatype: Function, value: object): { entity: object; errors: ValidationError[] } {
  renameKey(value, 'constructor', CONSTRUCTOR_STAND_IN);
  try {
    const result = validate(metatype, value);
    renameKey(result.entity, CONSTRUCTOR_STAND_IN, 'constructor');
    return result;
  } finally {
    // The request's own body too: hooks and the request log may read it.
    renameKey(value, CONSTRUCTOR_STAND_IN, 'constructor');
  }
}

function hasConstructorKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasConstructorKey);
  if (Object.hasOwn(value, 'constructor')) return true;
  for (const key in value) if (hasConstructorKey((value as Record<string, unknown>)[key])) return true;
  return false;
}

function renameKey(value: unknown, from: string, to: string): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) renameKey(item, from, to);
    return;
  }
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, from)) {
    Object.defineProperty(record, to, { value: record[from], enumerable: true, writable: true, configurable: true });
    delete record[from];
  }
  for (const key of Object.keys(record)) renameKey(record[key], from, to);
}

/**
 * Validates a request body against its DTO class (class-validator, through its public API) and
 * returns the DTO instance (class-transformer). A failure is a 400 that names every field at fault
 * (the first one as `param`), in the client's protocol shape. Unknown fields are dropped, as vLLM
 * ignores them. Synchronous (`validateSync`; no DTO has an async rule), where Nest's
 * ValidationPipe awaits each constraint. The generation routes call it directly.
 */
export function validateRequestBody<Dto extends object>(dto: new () => Dto, value: unknown): Dto {
  if (value === undefined)
    throw new GatewayError('invalid_request', 'The request body is empty: this route takes a JSON object.');
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  const { entity, errors } = validateBody(dto, value);
  if (errors.length === 0) return entity as Dto;
  const problems = flattenValidationErrors(kindFirst(errors));
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).map((problem) => problem.message);
  if (problems.length > MAX_PROBLEMS_SHOWN) shown.push(`and ${problems.length - MAX_PROBLEMS_SHOWN} more problems`);
  const message = shown.length > 0 ? shown.join('; ') : 'The request body is not valid.';
  throw new GatewayError('invalid_request', message, { param: problems[0]?.path });
}

/** `validateRequestBody` as Nest's global pipe, for the bodies of Nest's routes (`@Body()` of a DTO class). */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  transform(value: unknown, { type, metatype }: ArgumentMetadata): unknown {
    if (type !== 'body' || NOT_VALIDATED.has(metatype)) return value;
    return validateRequestBody(metatype as new () => object, value);
  }
}
