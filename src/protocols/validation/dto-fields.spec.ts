import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { IsString, validateSync } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { NestedObject, NestedObjectList, Nullable, Optional } from './dto-fields.js';

class InnerDto {
  @IsString()
  name!: string;
}

class OuterDto {
  @Optional()
  @IsString()
  strict?: string;

  @Nullable()
  @IsString()
  lenient?: string;

  @Optional()
  @NestedObject(() => InnerDto)
  inner?: InnerDto;

  @NestedObject(() => InnerDto)
  required!: InnerDto;

  @Optional()
  @NestedObjectList(() => InnerDto)
  list?: InnerDto[];
}

const check = (body: Record<string, unknown>) => {
  const entity = plainToInstance(OuterDto, { required: { name: 'r' }, ...body });
  const problems = validateSync(entity, { stopAtFirstError: true }).map((error) => [
    error.property,
    Object.values(error.constraints ?? {}).join(),
    error.children?.length ?? 0,
  ]);
  return { entity, problems };
};

describe('request DTO fields', () => {
  it('Optional: absent passes, null is checked like any value', () => {
    expect(check({}).problems).toEqual([]);
    expect(check({ strict: null }).problems).toEqual([['strict', 'strict must be a string', 0]]);
  });

  it('Nullable: null is read as absent, so a decoder never sees it', () => {
    const { entity, problems } = check({ lenient: null });
    expect(problems).toEqual([]);
    expect(entity.lenient).toBeUndefined();
    expect(check({ lenient: 5 }).problems).toEqual([['lenient', 'lenient must be a string', 0]]);
  });

  it('NestedObject: refuses a missing value, null, a scalar and (nested) arrays, and validates an object', () => {
    for (const value of [null, 'x', 1, [], [[]], [[{ name: 'n' }]]]) {
      expect(check({ inner: value }).problems, JSON.stringify(value)).toEqual([
        ['inner', 'inner must be a JSON object', 0],
      ]);
    }
    expect(check({ required: undefined }).problems).toEqual([['required', 'required must be a JSON object', 0]]);
    expect(check({ inner: { name: 5 } }).problems).toEqual([['inner', '', 1]]);
    expect(check({ inner: { name: 'n' } }).problems).toEqual([]);
  });

  it('NestedObjectList: a list of objects, the first item that is not one named', () => {
    expect(check({ list: [{ name: 'a' }, [[]]] }).problems).toEqual([['list', 'list[1] must be a JSON object', 0]]);
    expect(check({ list: [[[]]] }).problems).toEqual([['list', 'list[0] must be a JSON object', 0]]);
    expect(check({ list: { name: 'a' } }).problems).toEqual([['list', 'list must be an array', 0]]);
    expect(check({ list: [{ name: 'a' }, { name: 1 }] }).problems).toEqual([['list', '', 1]]);
  });
});
