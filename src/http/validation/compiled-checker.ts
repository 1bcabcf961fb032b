import { getMetadataStorage, type MetadataStorage, type ValidationArguments, ValidationTypes } from 'class-validator';

/**
 * Accept or reject a DTO instance (class-transformer's output) as `validateSync` with
 * `{ whitelist: true, forbidUnknownValues: true }` would, and strip the same unknown keys, with
 * no error objects. What class-validator does per object (look up the class's metadata through
 * every registered class, group it by property, filter it by type, build an error object per
 * property) is done once per class here, from its public `getMetadataStorage()`; per request only
 * the constraints' own `validate` functions run. class-validator itself still words the errors:
 * a body this refuses is validated again by it (docs/benchmarks.md, "Agent turns and validation").
 *
 * Generic over any class-validator DTO: nested classes are read from the instances class-transformer
 * made, and compiled on first sight.
 */
export function passesValidation(entity: object): boolean {
  return checkObject(entity);
}

type Metadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

interface ConstraintCheck {
  readonly metadata: Metadata;
  readonly validate: (value: unknown, args: ValidationArguments) => unknown;
  /**
   * The arguments class-validator passes, one object per constraint refilled for each call and
   * emptied after it: constraints run synchronously and keep nothing of it, and an object per
   * call was most of the garbage an agent's turn made here (docs/benchmarks.md).
   */
  readonly args: ValidationArguments;
}

interface PropertyPlan {
  readonly name: string;
  readonly conditions: ReadonlyArray<(object: object, value: unknown) => boolean>;
  /** `isDefined` checks run before the others, as class-validator runs them. */
  readonly checks: readonly ConstraintCheck[];
  readonly nested: boolean;
}

interface ClassPlan {
  /** No metadata at all: `forbidUnknownValues` refuses such an object. */
  readonly unknown: boolean;
  readonly allowed: ReadonlySet<string>;
  readonly properties: readonly PropertyPlan[];
}

const plans = new WeakMap<Function, ClassPlan>();

function planOf(type: Function): ClassPlan {
  let plan = plans.get(type);
  if (!plan) {
    plan = compile(type);
    plans.set(type, plan);
  }
  return plan;
}

/** The same metadata, in the same order, as class-validator's executor reads for `validateSync(instance)`. */
function compile(type: Function): ClassPlan {
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(type, '', false, false, undefined);
  const grouped = storage.groupByPropertyName(metadatas);
  const properties = Object.keys(grouped).map((name): PropertyPlan => {
    const all = grouped[name];
    const ofType = (kind: string) => all.filter((metadata) => metadata.type === kind);
    const checksOf = (list: Metadata[]) =>
      list.flatMap((metadata) =>
        storage
          .getTargetValidatorConstraints(metadata.constraintCls)
          // validateSync ignores asynchronous constraints.
          .filter((constraint) => !constraint.async)
          .map((constraint): ConstraintCheck => {
            const instance = constraint.instance;
            const args: ValidationArguments = {
              targetName: type.name,
              property: metadata.propertyName,
              object: undefined as unknown as object,
              value: undefined,
              constraints: metadata.constraints,
            };
            return { metadata, validate: (value, args) => instance.validate(value, args), args };
          }),
      );
    return {
      name,
      conditions: ofType(ValidationTypes.CONDITIONAL_VALIDATION).map(
        (metadata) => metadata.constraints[0] as (object: object, value: unknown) => boolean,
      ),
      checks: [...checksOf(ofType(ValidationTypes.IS_DEFINED)), ...checksOf(ofType(ValidationTypes.CUSTOM_VALIDATION))],
      nested: ofType(ValidationTypes.NESTED_VALIDATION).length + ofType(ValidationTypes.PROMISE_VALIDATION).length > 0,
    };
  });
  return { unknown: metadatas.length === 0, allowed: new Set(Object.keys(grouped)), properties };
}

function checkObject(object: object): boolean {
  const plan = planOf(object.constructor);
  if (plan.unknown) return false;
  const record = object as Record<string, unknown>;
  // for-in and a hasOwn test: no array of keys per object (deleting the key being visited is safe).
  for (const key in record) if (Object.hasOwn(record, key) && !plan.allowed.has(key)) delete record[key];
  for (const property of plan.properties) if (!checkProperty(object, record[property.name], property)) return false;
  return true;
}

function checkProperty(object: object, value: unknown, property: PropertyPlan): boolean {
  // class-validator calls every condition, then skips the property if any said no.
  let applies = true;
  for (const condition of property.conditions) if (!condition(object, value)) applies = false;
  if (!applies) return true;
  for (const check of property.checks) if (!passes(object, value, check)) return false;
  return !property.nested || checkNested(value);
}

function passes(object: object, value: unknown, { metadata, validate, args }: ConstraintCheck): boolean {
  if (metadata.validateIf && !metadata.validateIf(object, value)) return true;
  args.object = object;
  args.value = value;
  try {
    if (!metadata.each || !isCollection(value)) {
      const result = validate(value, args);
      // A promise from a synchronous run is not awaited by validateSync: it does not refuse.
      return isPromise(result) || Boolean(result);
    }
    // Every item is tried, as class-validator tries them; a promise among the results makes the whole pass.
    let promised = false;
    let all = true;
    for (const item of itemsOf(value)) {
      const result = validate(item, args);
      promised ||= isPromise(result);
      all &&= Boolean(result);
    }
    return promised || all;
  } finally {
    args.object = undefined as unknown as object;
    args.value = undefined;
  }
}

/** class-validator's nested rule: each item of a collection, an object by its own class, nothing else. */
function checkNested(value: unknown): boolean {
  if (value === undefined) return true;
  if (isCollection(value)) {
    for (const item of itemsOf(value)) if (!checkNested(item)) return false;
    return true;
  }
  return value instanceof Object && checkObject(value);
}

function isCollection(value: unknown): value is unknown[] | Set<unknown> | Map<unknown, unknown> {
  return Array.isArray(value) || value instanceof Set || value instanceof Map;
}

function itemsOf(value: unknown[] | Set<unknown> | Map<unknown, unknown>): unknown[] {
  return Array.isArray(value) ? value : Array.from(value.values());
}

/** class-validator's own test of a constraint's result. */
function isPromise(value: unknown): boolean {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}
