import { createRequire } from 'node:module';
import type { ValidationError } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';

type PerformValidations = (
  this: unknown,
  object: object,
  value: unknown,
  propertyName: string,
  definedMetadatas: ValidationMetadata[],
  metadatas: ValidationMetadata[],
  validationErrors: ValidationError[],
) => void;

let installed = false;

/**
 * For every decorated property of an object, absent ones too, class-validator makes an error
 * object and filters the property's rules three times before `@IsOptional` tells it to stop, and
 * throws the empty error away at the end: a chat request names a handful of its ~40 fields, so
 * this was a large part of the garbage a request made.
 *
 * This wraps class-validator's per-property step: a property whose value is missing (undefined
 * or null) and whose only conditions are `@IsOptional` returns at once, the same verdict decided
 * on the same value at the same moment. Properties with a `@ValidateIf` are left to
 * class-validator (their condition may read anything). The step is internal to class-validator:
 * a version without it (or elsewhere) keeps its own, slower path. Idempotent.
 */
export function skipMissingOptionals(): void {
  if (installed) return;
  installed = true;
  let executor: { prototype: { performValidations?: PerformValidations } } | undefined;
  try {
    const require = createRequire(import.meta.url);
    executor = (require('class-validator/cjs/validation/ValidationExecutor.js') as { ValidationExecutor?: typeof executor }).ValidationExecutor;
  } catch {
    return;
  }
  const perform = executor?.prototype.performValidations;
  if (typeof perform !== 'function' || perform.length !== 6) return;
  executor!.prototype.performValidations = function (object, value, propertyName, definedMetadatas, metadatas, validationErrors) {
    if (isMissingOptional(value, metadatas)) return;
    perform.call(this, object, value, propertyName, definedMetadatas, metadatas, validationErrors);
  };
}

/**
 * Whether class-validator would stop at this property's conditions and report nothing: its value
 * is missing and its only conditions are `@IsOptional` (which holds for anything but undefined
 * and null). `rules` are the property's rules as class-validator hands them to the step.
 */
export function isMissingOptional(value: unknown, rules: readonly ValidationMetadata[]): boolean {
  if (value !== undefined && value !== null) return false;
  let optional = false;
  for (const rule of rules) {
    if (rule.type !== 'conditionalValidation') continue;
    if (rule.name !== 'isOptional') return false;
    optional = true;
  }
  return optional;
}
