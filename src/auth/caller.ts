import type { Tenant } from './tenant.js';

/** Who sent a request, as the API-key guard identified it. Never holds the key. */
export interface Caller {
  /** ApiKeyRing's id of the key (a digest prefix); undefined on an open gateway. */
  readonly keyId?: string;
  readonly tenant: Tenant;
  /**
   * What its limits are counted under: its tenant for a named key (all the tenant's keys
   * together), the key itself for a key without a name.
   */
  readonly limitKey: string;
}
