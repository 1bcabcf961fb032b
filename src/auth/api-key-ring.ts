import { createHash, timingSafeEqual } from 'node:crypto';
import { resolveApiKeyEntries, type ResolvedApiKey } from '../config/api-key-entries.js';
import type { AuthConfig } from '../config/auth-config.js';
import { DEFAULT_TENANT_NAME } from '../config/tenant-config.js';
import type { Caller } from './caller.js';
import { mergeLimits, Tenant, type TenantLimits } from './tenant.js';

interface AcceptedKey {
  digest: Buffer;
  caller: Caller;
}

/**
 * The accepted API keys, held only as SHA-256 digests, each with its caller (tenant). A
 * presented key is digested and compared with every accepted digest by `timingSafeEqual`,
 * without stopping at a match, so neither the answer time nor a key's length tells an attacker
 * how close a guess was. `load` swaps in the keys of a reloaded configuration at once.
 */
export class ApiKeyRing {
  private accepted: AcceptedKey[] = [];

  /** Plain strings are keys without a name (tenant `default`). */
  constructor(keys: ReadonlyArray<string | ResolvedApiKey> = [], defaultLimits?: TenantLimits) {
    this.load(keys, defaultLimits);
  }

  /** The ring of `auth.apiKeys`; throws when a source yields no key (the configuration was validated, so rarely). */
  static fromConfig(auth: AuthConfig): ApiKeyRing {
    return new ApiKeyRing(resolvedKeysOf(auth), auth.limits);
  }

  /** From now on, accepts `keys` (and only them), with their tenants. */
  load(keys: ReadonlyArray<string | ResolvedApiKey>, defaultLimits?: TenantLimits): void {
    const unnamed = new Tenant(DEFAULT_TENANT_NAME, 1, 0, mergeLimits(defaultLimits, undefined));
    const tenants = new Map<string, Tenant>();
    this.accepted = keys.map((entry) => {
      const { key, named } = typeof entry === 'string' ? { key: entry, named: undefined } : entry;
      const digest = digestOf(key);
      const keyId = `key-${digest.subarray(0, 8).toString('hex')}`;
      if (named === undefined) return { digest, caller: { keyId, tenant: unnamed, limitKey: keyId } };
      let tenant = tenants.get(named.name);
      if (tenant === undefined) {
        tenant = new Tenant(
          named.name,
          named.weight,
          named.priority,
          mergeLimits(defaultLimits, named.limits),
          named.models,
        );
        tenants.set(named.name, tenant);
      }
      return { digest, caller: { keyId, tenant, limitKey: `tenant:${named.name}` } };
    });
  }

  /** No keys configured: the gateway is open. */
  get isOpen(): boolean {
    return this.accepted.length === 0;
  }

  /**
   * A stable, non-secret id of the matching key (a digest prefix, the same on every replica,
   * which scopes its stored responses), or undefined when the key is not accepted.
   */
  identify(presented: string): string | undefined {
    return this.callerOf(presented)?.keyId;
  }

  /** The caller a presented key makes (its id and tenant), or undefined when it is not accepted. */
  callerOf(presented: string): Caller | undefined {
    const digest = digestOf(presented);
    let match: Caller | undefined;
    for (const accepted of this.accepted) {
      if (timingSafeEqual(digest, accepted.digest)) match = accepted.caller;
    }
    return match;
  }
}

/** The keys `auth.apiKeys` resolves to; throws when a source yields no key. */
export function resolvedKeysOf(auth: AuthConfig): ResolvedApiKey[] {
  const { keys, problems } = resolveApiKeyEntries(auth.apiKeys);
  if (problems.length > 0) throw new Error(`Cannot load the API keys:\n  - ${problems.join('\n  - ')}`);
  return keys;
}

function digestOf(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}
