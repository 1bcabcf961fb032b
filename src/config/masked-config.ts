import type { GatewayConfig } from './gateway-config.js';
import { MASK, maskedUrl } from './masked-url.js';

export { MASK };

/** Keys whose string value is a secret wherever they appear (an upstream's `apiKey`, `responses.encryptionKey`). */
const SECRET_KEYS = new Set(['apiKey', 'encryptionKey', 'password', 'secret', 'token']);
/** Keys whose value is a mapping of names to secrets (an upstream's `headers`): the names stay, the values go. */
const SECRET_MAPS = new Set(['headers']);
/** Keys shown first in an object that has them, as a file is written: a model's name and engine, a named key's name. */
const LEADING = ['name', 'engine', 'key'];

/**
 * A configuration as plain data that can be shown (`gantry check-config`): every value as the
 * gateway would run it, secrets masked. Masked: API keys written in the file (`auth.apiKeys`
 * strings and named keys' `key`; `{ env }` and `{ file }` are references and stay), any
 * `apiKey`, `encryptionKey`, `password`, `secret` or `token`, the values of any `headers`, and
 * the password of any URL (`redis://:pw@host`, an upstream's `https://user:pw@host`) and the
 * values of its query string (`?api-key=...`).
 */
export function maskedConfig(config: GatewayConfig): unknown {
  const plain = JSON.parse(JSON.stringify(config)) as Record<string, unknown>;
  const auth = plain.auth as { apiKeys: unknown[] };
  auth.apiKeys = auth.apiKeys.map((entry) => {
    if (typeof entry === 'string') return MASK;
    const named = entry as { key?: unknown };
    return typeof named.key === 'string' ? { ...named, key: MASK } : entry;
  });
  return masked(plain);
}

function masked(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return SECRET_KEYS.has(key) ? MASK : maskedUrl(value);
  if (Array.isArray(value)) return value.map((item) => masked(item));
  if (value === null || typeof value !== 'object') return value;
  if (SECRET_MAPS.has(key)) return Object.fromEntries(Object.keys(value).map((name) => [name, MASK]));
  const entries = Object.entries(value).map(([name, inner]): [string, unknown] => [name, masked(inner, name)]);
  const rank = (name: string) => (LEADING.includes(name) ? LEADING.indexOf(name) : LEADING.length);
  return Object.fromEntries(entries.sort(([a], [b]) => rank(a) - rank(b)));
}
