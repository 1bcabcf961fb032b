import { DEFAULT_TENANT_NAME, TENANT_LIMIT_FIELDS, type TenantLimitsConfig } from '../config/tenant-config.js';

/** The limit values a tenant's requests are held to (absent fields: no such limit). */
export type TenantLimits = Readonly<Pick<TenantLimitsConfig, (typeof TENANT_LIMIT_FIELDS)[number]>>;

/**
 * Who a request is for, as far as sharing goes: a named key's tenant, or `default` for every key
 * without a name. Its weight and priority order contended models' queues; its model list
 * bounds what it may use; its limits are counted per tenant for a named key, per key otherwise.
 */
export class Tenant {
  private readonly visible?: RegExp;

  constructor(
    readonly name: string,
    readonly weight: number = 1,
    readonly priority: number = 0,
    /** Undefined when no limit applies (the limiter then has nothing to ask). */
    readonly limits?: TenantLimits,
    models?: readonly string[],
  ) {
    if (models !== undefined) this.visible = modelPattern(models);
  }

  /** Whether the tenant may use (and see) `model`. */
  canUse(model: string): boolean {
    return this.visible === undefined || this.visible.test(model);
  }
}

/** The tenant of an open gateway's requests: weight 1, priority 0, every model, no limits. */
export const OPEN_TENANT = new Tenant(DEFAULT_TENANT_NAME);

/** The limit fields set in `limits` (over `defaults`, field by field), or undefined when none is. */
export function mergeLimits(
  defaults: TenantLimits | undefined,
  limits: TenantLimits | undefined,
): TenantLimits | undefined {
  const merged: Record<string, number> = {};
  for (const field of TENANT_LIMIT_FIELDS) {
    const value = limits?.[field] ?? defaults?.[field];
    if (value !== undefined) merged[field] = value;
  }
  return Object.keys(merged).length > 0 ? merged : undefined;
}

/** One expression for a list of names and globs: `*` any run of characters, `?` any one. */
function modelPattern(models: readonly string[]): RegExp {
  const alternatives = models.map((glob) =>
    glob
      .split('')
      .map((character) =>
        character === '*' ? '.*' : character === '?' ? '.' : character.replace(/[\\^$.|+()[\]{}-]/g, '\\$&'),
      )
      .join(''),
  );
  return new RegExp(`^(?:${alternatives.join('|')})$`, 's');
}
