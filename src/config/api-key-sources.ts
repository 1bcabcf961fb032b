import { readFileSync } from 'node:fs';
import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * Where an API key comes from, as written in `auth.apiKeys` (or a named key's `key`):
 * - a string: the key itself (fine for development; prefer the two forms below in production);
 * - `{ env: NAME }`: the value of environment variable NAME (one key);
 * - `{ file: PATH }`: a file with one key per line (blank lines and lines starting with `#`
 *   are skipped); PATH is relative to the working directory.
 */
export type ApiKeySource = string | { env: string } | { file: string };

/** Whether a value is one of the three forms of ApiKeySource. */
export function isApiKeySource(value: unknown): value is ApiKeySource {
  if (typeof value === 'string') return value.trim().length > 0;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1 || (keys[0] !== 'env' && keys[0] !== 'file')) return false;
  const reference = (value as Record<string, unknown>)[keys[0]];
  return typeof reference === 'string' && reference.length > 0;
}

/** Validates a key source (each entry of a list by default) against the three forms of ApiKeySource. */
export function IsApiKeySource(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isApiKeySource',
      validator: {
        validate: (value) => isApiKeySource(value),
        defaultMessage: (args) =>
          options?.each === false
            ? `${args?.property} must be a key (a non-empty string), { env: NAME } or { file: PATH }`
            : `${args?.property} entries must each be a key (a non-empty string), { env: NAME } or { file: PATH }`,
      },
    },
    { each: true, ...options },
  );
}

/** One key read from a source, and where it was written (for messages; never the key). */
export interface SourcedKey {
  key: string;
  where: string;
}

export type EnvironmentVariables = Record<string, string | undefined>;
export type FileReader = (path: string) => string;
export const readTextFile: FileReader = (path) => readFileSync(path, 'utf8');

/**
 * The keys of one source, or the problem that makes it yield none. A reference that yields
 * nothing (an unset variable, a missing or empty file) is a problem, not an empty list: a typo
 * must never turn a protected gateway into an open one.
 */
export function readApiKeySource(
  source: ApiKeySource,
  where: string,
  env: EnvironmentVariables,
  readFile: FileReader,
): SourcedKey[] | string {
  if (typeof source === 'string') return [{ key: source.trim(), where }];
  if ('env' in source) {
    const value = env[source.env]?.trim();
    return value ? [{ key: value, where }] : `${where}: the environment variable ${source.env} is not set or empty`;
  }
  let text: string;
  try {
    text = readFile(source.file);
  } catch (error) {
    return `${where}: cannot read the key file ${source.file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  const keys: SourcedKey[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const key = line.trim();
    if (key.length > 0 && !key.startsWith('#'))
      keys.push({ key, where: `${where} (${source.file} line ${index + 1})` });
  });
  return keys.length > 0 ? keys : `${where}: the key file ${source.file} holds no key`;
}
