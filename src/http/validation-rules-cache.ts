import { createRequire } from 'node:module';
import { getMetadataStorage, type ValidationError } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';

type Lookup = (target: Function, schema: string | undefined, always: boolean, strictGroups: boolean, groups?: string[]) => ValidationMetadata[];
type Grouping = (metadata: ValidationMetadata[]) => Record<string, ValidationMetadata[]>;
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
 * Two costs of class-validator, cut without changing a single verdict or message:
 *
 * - It looks a class's rules up again for every object it validates, nested ones included: it
 *   filters the rules of every decorated class, walks them all for inheritance, and groups the
 *   result by property, which made rule lookup a third of a request's validation time. A class's
 *   rules are fixed once its module has loaded (decorators run at class definition), so the
 *   lookups of ungrouped validation (the only kind Gantry runs) are cached per class; the results
 *   are only read by class-validator.
 * - For every decorated property of an object, absent ones too, it makes an error object and
 *   filters the property's rules three times before `@IsOptional` tells it to stop, and throws
 *   the empty error away at the end: a chat request names a handful of its ~40 fields, so this
 *   was a large part of the garbage a request made. A property whose value is missing (undefined
 *   or null) and whose only conditions are `@IsOptional` now returns at once: the same verdict,
 *   decided on the same value at the same moment. Properties with a `@ValidateIf` are left to
 *   class-validator (their condition may read anything).
 *
 * Idempotent.
 */
export function cacheValidationRules(): void {
  if (installed) return;
  installed = true;
  const storage = getMetadataStorage() as unknown as { getTargetValidationMetadatas: Lookup; groupByPropertyName: Grouping };
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  // By class, then by schema name (nested objects are looked up with their parent class's name).
  const rules = new Map<Function, Map<string | undefined, ValidationMetadata[]>>();
  const grouped = new WeakMap<ValidationMetadata[], Record<string, ValidationMetadata[]>>();

  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (always || strictGroups || (groups && groups.length > 0)) return lookup(target, schema, always, strictGroups, groups);
    let bySchema = rules.get(target);
    if (bySchema === undefined) {
      bySchema = new Map();
      rules.set(target, bySchema);
    }
    let found = bySchema.get(schema);
    if (found === undefined) {
      found = lookup(target, schema, always, strictGroups, groups);
      bySchema.set(schema, found);
    }
    return found;
  };
  storage.groupByPropertyName = (metadata) => {
    let found = grouped.get(metadata);
    if (found === undefined) {
      found = group(metadata);
      grouped.set(metadata, found);
    }
    return found;
  };
  skipMissingOptionals();
}

/**
 * class-validator's per-property step, wrapped to return at once where `@IsOptional` would stop
 * it. The step is internal to class-validator: a version without it (or elsewhere) keeps its
 * own, slower path.
 */
function skipMissingOptionals(): void {
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
