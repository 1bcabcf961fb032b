import { ValidateBy, type ValidationOptions } from 'class-validator';

/** A plain JSON object (not null, not an array): JSON Schemas, tool inputs, metadata. */
export function IsPlainObject(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPlainObject',
      validator: {
        validate: (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
        defaultMessage: (args) => `${args?.property} must be a JSON object`,
      },
    },
    options,
  );
}

/** A JSON object whose values are all strings (`metadata`). */
export function IsStringMap(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStringMap',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          Object.values(value).every((item) => typeof item === 'string'),
        defaultMessage: (args) => `${args?.property} must be a JSON object of string values`,
      },
    },
    options,
  );
}

/** A string, or a list of strings of bounded length (`stop`). */
export function IsStringOrStringList(maxItems: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStringOrStringList',
      validator: {
        validate: (value) =>
          typeof value === 'string' ||
          (Array.isArray(value) && value.length <= maxItems && value.every((item) => typeof item === 'string')),
        defaultMessage: (args) => `${args?.property} must be a string or a list of at most ${maxItems} strings`,
      },
    },
    options,
  );
}

/** One of the given strings, or an object checked by `isValidObject` (`tool_choice` forms). */
export function IsKeywordOrObject(
  keywords: readonly string[],
  isValidObject: (value: Record<string, unknown>) => boolean,
  objectShape: string,
  options?: ValidationOptions,
): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isKeywordOrObject',
      validator: {
        validate: (value) =>
          (typeof value === 'string' && keywords.includes(value)) ||
          (typeof value === 'object' &&
            value !== null &&
            !Array.isArray(value) &&
            isValidObject(value as Record<string, unknown>)),
        defaultMessage: (args) =>
          `${args?.property} must be one of ${keywords.map((word) => `"${word}"`).join(', ')} or ${objectShape}`,
      },
    },
    options,
  );
}
