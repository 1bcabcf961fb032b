import { createRequire } from 'node:module';
import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';
import type { ValidationError } from 'class-validator';

type Lookup = (target: Function, schema: string | undefined, always: boolean, strictGroups: boolean, groups?: string[]) => ValidationMetadata[];
type Grouping = (metadata: ValidationMetadata[]) => Record<string, ValidationMetadata[]>;
type Execute = (this: unknown, object: object, schema: string | undefined, errors: ValidationError[]) => void;

/** A property's rules, and the conditions (`@IsOptional`, `@ValidateIf`) that decide whether they run. */
type PropertyPlan = readonly [property: string, rules: ValidationMetadata[], conditions: ValidationMetadata[]];

/** The object class-validator's executor is validating now (`execute` is synchronous; nested objects inside). */
let validating: object | undefined;

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
 * - It visits every decorated property of an object, absent ones too, with ~10 allocations each
 *   (an error object, filtered rule lists) before `@IsOptional` tells it to stop: a chat request
 *   names a handful of its ~40 fields, so this was two fifths of the garbage a request made. A
 *   property that is absent (not an own key) and whose conditions say "skip" now goes unvisited:
 *   class-validator would have made an empty error for it and thrown it away.
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
  const plans = new WeakMap<Record<string, ValidationMetadata[]>, readonly PropertyPlan[]>();
  storage.groupByPropertyName = (metadata) => {
    let found = grouped.get(metadata);
    if (found === undefined) {
      found = group(metadata);
      grouped.set(metadata, found);
    }
    if (validating === undefined) return found;
    let plan = plans.get(found);
    if (plan === undefined) {
      plan = Object.keys(found).map((property) => [property, found[property], found[property].filter(isCondition)] as const);
      plans.set(found, plan);
    }
    return withoutSkippedAbsentees(found, plan, validating);
  };
  trackValidatedObject();
}

/** class-validator's executor, wrapped so that the rule grouping knows which object it serves. */
function trackValidatedObject(): void {
  const require = createRequire(import.meta.url);
  const { ValidationExecutor } = require('class-validator/cjs/validation/ValidationExecutor.js') as { ValidationExecutor: { prototype: { execute: Execute } } };
  const execute = ValidationExecutor.prototype.execute;
  ValidationExecutor.prototype.execute = function (object, schema, errors) {
    const outer = validating;
    validating = object;
    try {
      execute.call(this, object, schema, errors);
    } finally {
      validating = outer;
    }
  };
}

/**
 * The grouped rules minus the properties that `object` lacks and whose conditions say skip, in
 * the same order (errors keep their order); the grouping itself when nothing is left out.
 */
function withoutSkippedAbsentees(
  grouped: Record<string, ValidationMetadata[]>,
  plan: readonly PropertyPlan[],
  object: object,
): Record<string, ValidationMetadata[]> {
  let kept: Record<string, ValidationMetadata[]> | undefined;
  for (let index = 0; index < plan.length; index += 1) {
    const [property, rules, conditions] = plan[index];
    const skipped = conditions.length > 0 && !Object.hasOwn(object, property) && !conditionsHold(conditions, object);
    if (skipped && kept === undefined) {
      kept = {};
      for (let earlier = 0; earlier < index; earlier += 1) kept[plan[earlier][0]] = plan[earlier][1];
    } else if (!skipped && kept !== undefined) {
      kept[property] = rules;
    }
  }
  return kept ?? grouped;
}

/** class-validator's own test: every condition, called as it calls them, must hold. */
function conditionsHold(conditions: ValidationMetadata[], object: object): boolean {
  let hold = true;
  for (const condition of conditions) {
    const value = (object as Record<string, unknown>)[condition.propertyName];
    hold = (condition.constraints[0] as (object: object, value: unknown) => boolean)(object, value) && hold;
  }
  return hold;
}

function isCondition(rule: ValidationMetadata): boolean {
  return rule.type === 'conditionalValidation';
}
