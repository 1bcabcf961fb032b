import { Transform, Type } from 'class-transformer';
import { IsArray, ValidateBy, ValidateIf, ValidateNested, type ValidationOptions } from 'class-validator';

/**
 * How a request DTO declares whether a field may be left out, be null, or hold a nested object.
 * class-validator's own decorators leave three holes that let a body reach a decoder unchecked:
 * `@IsOptional()` also waves `null` through, `@ValidateNested()` accepts an array (of arrays)
 * where an object is expected and checks nothing in it, and skips a missing value. Request DTOs
 * use these instead, so what passes validation has the shape its type says.
 */

/** The field may be absent; `null` is checked by the field's rules like any other value (and refused by them). */
export function Optional(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

/**
 * The field may be absent or `null` (where the API's own types allow null, or its answers carry
 * one that clients send back); `null` is read as absent, so decoders never see it.
 */
export function Nullable(): PropertyDecorator {
  return combine(
    Transform(({ value }: { value: unknown }) => (value === null ? undefined : value)),
    Optional(),
  );
}

/** A required (unless marked otherwise) nested object, validated as `type`: not an array, not null. */
export function NestedObject(type: () => Function): PropertyDecorator {
  return combine(IsJsonObject(), ValidateNested(), Type(type));
}

/** A list of nested objects, each validated as `type`. */
export function NestedObjectList(type: () => Function): PropertyDecorator {
  return combine(IsArray(), IsJsonObjectList(), ValidateNested({ each: true }), Type(type));
}

/** An object (a DTO instance once transformed), not an array, not null. */
function IsJsonObject(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isJsonObject',
      validator: {
        validate: isJsonObject,
        defaultMessage: (args) => `${args?.property} must be a JSON object`,
      },
    },
    options,
  );
}

/** Every item an object; the message names the first that is not. */
function IsJsonObjectList(): PropertyDecorator {
  return ValidateBy({
    name: 'isJsonObjectList',
    validator: {
      validate: (value) => !Array.isArray(value) || value.every(isJsonObject),
      defaultMessage: (args) => {
        const items = args?.value as unknown[];
        return `${args?.property}[${items.findIndex((item) => !isJsonObject(item))}] must be a JSON object`;
      },
    },
  });
}

function isJsonObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function combine(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, property) => {
    for (const decorate of decorators) decorate(target, property);
  };
}
