import 'reflect-metadata';
import { plainToInstance, Type } from 'class-transformer';
import { IsInt, IsString, validateSync, ValidateNested } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { cacheValidationRules } from './validation-rules-cache.js';

class Base {
  @IsString()
  name!: string;
}

class Derived extends Base {
  @IsInt()
  count!: number;
}

class Holder {
  @ValidateNested()
  @Type(() => Derived)
  inner!: Derived;
}

/** The properties at fault, nested ones as `parent.child`, for a plain value validated as `type`. */
function faults(type: new () => object, value: object): string[] {
  const walk = (errors: ReturnType<typeof validateSync>, prefix: string): string[] =>
    errors.flatMap((error) => [...(error.constraints ? [prefix + error.property] : []), ...walk(error.children ?? [], `${prefix}${error.property}.`)]);
  return walk(validateSync(plainToInstance(type, value), { forbidUnknownValues: true }), '').sort();
}

describe('cacheValidationRules', () => {
  it('gives each class its own rules, inherited ones included, at the top level and nested, on every call', () => {
    cacheValidationRules();
    cacheValidationRules();
    for (let round = 0; round < 2; round += 1) {
      // Base has no `count` rule: a class must not get a subclass's rules, nor the other way round.
      expect(faults(Base, { name: 1, count: 'x' })).toEqual(['name']);
      expect(faults(Derived, { name: 1, count: 'x' })).toEqual(['count', 'name']);
      expect(faults(Holder, { inner: { name: 'a', count: 'x' } })).toEqual(['inner.count']);
      expect(faults(Holder, { inner: { name: 'a', count: 2 } })).toEqual([]);
    }
  });
});
