import {
  isApiKeySource,
  readApiKeySource,
  readTextFile,
  type ApiKeySource,
  type EnvironmentVariables,
  type FileReader,
} from './api-key-sources.js';
import { DEFAULT_TENANT_NAME, NamedApiKeyConfig } from './tenant-config.js';

/** An `auth.apiKeys` entry: a plain key source (an unnamed key) or a named key (a tenant). */
export type ApiKeyEntry = ApiKeySource | NamedApiKeyConfig;

/** One accepted key and the named entry it belongs to (none: an unnamed key, tenant `default`). */
export interface ResolvedApiKey {
  key: string;
  named?: NamedApiKeyConfig;
}

export interface ResolvedApiKeyEntries {
  keys: ResolvedApiKey[];
  /** One line per problem: a source that yields no key, a key listed twice, a name used twice. Never a key. */
  problems: string[];
}

/**
 * Reads every entry's keys. Names are unique, and each key belongs to one entry: a key listed
 * twice (in two entries, or twice in one file) would make its tenant ambiguous, so it refuses
 * to start like any other problem.
 */
export function resolveApiKeyEntries(
  entries: readonly ApiKeyEntry[],
  env: EnvironmentVariables = process.env,
  readFile: FileReader = readTextFile,
): ResolvedApiKeyEntries {
  const keys: ResolvedApiKey[] = [];
  const problems: string[] = [];
  const firstWhere = new Map<string, string>();
  const names = new Map<string, number>();
  entries.forEach((entry, index) => {
    const named = entry instanceof NamedApiKeyConfig ? entry : undefined;
    if (named) {
      const earlier = names.get(named.name);
      if (named.name === DEFAULT_TENANT_NAME) {
        problems.push(
          `auth.apiKeys[${index}].name: ${DEFAULT_TENANT_NAME} is the tenant of the keys without a name; choose another name`,
        );
      } else if (earlier !== undefined) {
        problems.push(
          `auth.apiKeys[${index}].name: ${named.name} is already the name of auth.apiKeys[${earlier}] (names must be unique)`,
        );
      } else {
        names.set(named.name, index);
      }
    }
    const source = named ? named.key : entry;
    // A malformed entry is named by the validation already.
    if (!isApiKeySource(source)) return;
    const read = readApiKeySource(
      source,
      named ? `auth.apiKeys[${index}].key` : `auth.apiKeys[${index}]`,
      env,
      readFile,
    );
    if (typeof read === 'string') {
      problems.push(read);
      return;
    }
    for (const { key, where } of read) {
      const first = firstWhere.get(key);
      if (first !== undefined) {
        problems.push(`${where}: the same key as ${first} (each key may be listed once)`);
        continue;
      }
      firstWhere.set(key, where);
      keys.push({ key, named });
    }
  });
  return { keys, problems };
}
