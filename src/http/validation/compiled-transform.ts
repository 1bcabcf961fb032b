import { plainToInstance } from 'class-transformer';
import { getMetadataStorage } from 'class-validator';

/**
 * `plainToInstance(type, body)` without class-transformer's per-key metadata lookups (they walk
 * every ancestor of the class for each key of each object, and were the largest cost left of an
 * agent's turn: docs/benchmarks.md, "Agent turns and validation"). class-transformer's metadata is
 * not public, so what each field does is learnt once per class through `plainToInstance` itself:
 * probes of each field class-validator declares, with a nested object, a list, null and scalars.
 * A class whose fields behave in any way the probes do not recognise (a transform that changes a
 * value other than `null`, a Map or Set, a getter, an exposed name) is not compiled: its bodies go
 * to class-transformer, as does any body holding a `constructor` key (class-transformer's own
 * error is what the validation pipe catches). The differential spec compares the instances.
 */
export function toInstance<T extends object>(type: new () => T, body: object): T {
  const plan = planOf(type);
  if (plan === UNCOMPILABLE) return plainToInstance(type, body);
  try {
    return toInstanceOf(type, plan, body) as T;
  } catch (error) {
    if (error !== FALL_BACK) throw error;
    return plainToInstance(type, body);
  }
}

/** Whether `type`'s bodies take the compiled copy (not class-transformer): for the specs. */
export function isCompiled(type: Function): boolean {
  return planOf(type) !== UNCOMPILABLE;
}

/** How class-transformer reads one declared field. */
interface FieldPlan {
  /** `@Type(() => nested)`: objects become instances of it, lists lists of them. */
  nested?: Function;
  /** A `null` becomes `undefined` (Gantry's `Nullable()`). */
  nullToUndefined: boolean;
}

type ClassPlan = ReadonlyMap<string, FieldPlan>;

const UNCOMPILABLE = Symbol('uncompilable');
/** Thrown mid-copy when a body needs class-transformer itself; caught in `toInstance`. */
/** Thrown (one preallocated instance) when a body needs class-transformer itself. */
const FALL_BACK = new Error('fall back to class-transformer');

const plans = new WeakMap<Function, ClassPlan | typeof UNCOMPILABLE>();

function planOf(type: Function): ClassPlan | typeof UNCOMPILABLE {
  let plan = plans.get(type);
  if (plan === undefined) {
    plans.set(type, UNCOMPILABLE); // a class that nests itself is read by class-transformer
    plan = learn(type);
    plans.set(type, plan);
  }
  return plan;
}

function learn(type: Function): ClassPlan | typeof UNCOMPILABLE {
  const storage = getMetadataStorage();
  const fields = Object.keys(
    storage.groupByPropertyName(storage.getTargetValidationMetadatas(type, '', false, false, undefined)),
  );
  const make = type as new () => object;
  const plan = new Map<string, FieldPlan>();
  for (const field of fields) {
    if (!plainField(type, field)) return UNCOMPILABLE;
    const probe = (value: unknown) => (plainToInstance(make, { [field]: value }) as Record<string, unknown>)[field];
    const object = probe({ a: 1 });
    const list = probe([{ a: 1 }]);
    const nested = object instanceof Object ? object.constructor : undefined;
    const first: unknown = Array.isArray(list) ? list[0] : undefined;
    const listed = first instanceof Object ? first.constructor : undefined;
    if (nested === undefined || nested !== listed || !Array.isArray(list) || list.length !== 1) return UNCOMPILABLE;
    const isNested = nested !== Object;
    if (isNested && (planOf(nested) === UNCOMPILABLE || !sameCopy(object, { a: 1 }, nested))) return UNCOMPILABLE;
    if (!isNested && !sameCopy(object, { a: 1 }, Object)) return UNCOMPILABLE;
    const nulled = probe(null);
    if (nulled !== null && nulled !== undefined) return UNCOMPILABLE;
    for (const scalar of ['', ' x ', '1', 0, 1.5, -1, true, false])
      if (!Object.is(probe(scalar), scalar)) return UNCOMPILABLE;
    const scalars = probe([1, 'x', null, [true]]);
    if (JSON.stringify(scalars) !== '[1,"x",null,[true]]') return UNCOMPILABLE;
    plan.set(field, { ...(isNested ? { nested } : {}), nullToUndefined: nulled === undefined });
  }
  return plan;
}

/** Neither a method nor an accessor of the class (class-transformer skips or calls those). */
function plainField(type: Function, field: string): boolean {
  for (
    let proto: object | null = type.prototype as object;
    proto;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, field);
    if (descriptor) return false;
  }
  return field !== '__proto__' && field !== 'constructor';
}

function sameCopy(copy: unknown, plain: { a: number }, type: Function): boolean {
  return copy instanceof Object && copy.constructor === type && (copy as { a?: unknown }).a === plain.a;
}

function toInstanceOf(type: Function, plan: ClassPlan, plain: object): object {
  const instance = new (type as new () => Record<string, unknown>)();
  // for-in and a hasOwn test: the order of Object.keys, without an array of keys per object.
  for (const key in plain) {
    if (!Object.hasOwn(plain, key) || key === '__proto__') continue;
    if (key === 'constructor') throw FALL_BACK;
    const value = (plain as Record<string, unknown>)[key];
    const field = plan.get(key);
    if (field === undefined) {
      // Not declared: copied as class-transformer copies it (and stripped by the checker when it visits).
      if (!skipped(instance, key)) instance[key] = copyOf(value);
      continue;
    }
    const copied = field.nested ? asNested(value, field.nested) : copyOf(value);
    instance[key] = field.nullToUndefined && copied === null ? undefined : copied;
  }
  return instance;
}

function asNested(value: unknown, type: Function): unknown {
  if (Array.isArray(value)) return value.map((item) => asNested(item, type));
  if (value === null || typeof value !== 'object') return value;
  const plan = planOf(type);
  if (plan === UNCOMPILABLE) throw FALL_BACK;
  return toInstanceOf(type, plan, value);
}

/** class-transformer leaves out a key its target's prototype has as a method or as a getter without a setter (`toString`). */
function skipped(target: Record<string, unknown>, key: string): boolean {
  const descriptor = Object.getOwnPropertyDescriptor(target.constructor.prototype, key);
  return (descriptor !== undefined && !descriptor.set) || typeof target[key] === 'function';
}

/** class-transformer's copy of a value with no type: lists and plain objects copied deep, scalars as they are. */
function copyOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyOf);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key) || key === '__proto__') continue;
    if (key === 'constructor') throw FALL_BACK;
    if (!skipped(copy, key)) copy[key] = copyOf((value as Record<string, unknown>)[key]);
  }
  return copy;
}
