import { readFileSync } from 'node:fs';
import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * Where an API key comes from, as written in `auth.apiKeys`:
 * - a string: the key itself (fine for development; prefer the two forms below in production);
 * - `{ env: NAME }`: the value of environment variable NAME (one key);
 * - `{ file: PATH }`: a file with one key per line (blank lines and lines starting with `#`
 *   are skipped); PATH is relative to the working directory.
 */
export type ApiKeySource = string | { env: string } | { file: string };

/** Validates one `auth.apiKeys` entry against the three forms of ApiKeySource. */
export function IsApiKeySource(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isApiKeySource',
      validator: {
        validate: (value) => {
          if (typeof value === 'string') return value.trim().length > 0;
          if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
          const keys = Object.keys(value);
          if (keys.length !== 1 || (keys[0] !== 'env' && keys[0] !== 'file')) return false;
          const reference = (value as Record<string, unknown>)[keys[0]];
          return typeof reference === 'string' && reference.length > 0;
        },
        defaultMessage: (args) =>
          `${args?.property} entries must each be a key (a non-empty string), { env: NAME } or { file: PATH }`,
      },
    },
    { each: true, ...options },
  );
}

export interface ResolvedApiKeys {
  keys: string[];
  /** One line per source that yields no key; never contains a key. */
  problems: string[];
}

/**
 * Reads every source into the list of accepted keys. A reference that yields nothing (an unset
 * variable, a missing or empty file) is a problem, not an empty list: a typo must never turn a
 * protected gateway into an open one.
 */
export function resolveApiKeys(
  sources: readonly ApiKeySource[],
  env: Record<string, string | undefined> = process.env,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): ResolvedApiKeys {
  const keys: string[] = [];
  const problems: string[] = [];
  sources.forEach((source, index) => {
    const where = `auth.apiKeys[${index}]`;
    if (typeof source === 'string') {
      keys.push(source.trim());
    } else if ('env' in source) {
      const value = env[source.env]?.trim();
      if (value) keys.push(value);
      else problems.push(`${where}: the environment variable ${source.env} is not set or empty`);
    } else {
      let text: string;
      try {
        text = readFile(source.file);
      } catch (error) {
        problems.push(`${where}: cannot read the key file ${source.file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
        return;
      }
      const fromFile = text
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter((line) => line.length > 0 && !line.startsWith('#'));
      for (const key of fromFile) keys.push(key);
      if (fromFile.length === 0) problems.push(`${where}: the key file ${source.file} holds no key`);
    }
  });
  return { keys, problems };
}
