import { ValidateBy, type ValidationOptions } from 'class-validator';

/** A mapping of string keys to string values (extra HTTP headers). */
export function IsStringRecord(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStringRecord',
      validator: {
        validate: (value) =>
          typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          Object.values(value as Record<string, unknown>).every((item) => typeof item === 'string'),
        defaultMessage: (args) => `${args?.property} must be a mapping of names to string values`,
      },
    },
    options,
  );
}
