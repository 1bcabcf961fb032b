import { type MonoTypeOperatorFunction, tap } from 'rxjs';
import type { AdmissionClaim } from '../admission/admission-claim.js';
import type { Tenant } from '../auth/tenant.js';
import { countersOf, type EngineEvent } from '../engine/engine-event.js';
import type { GenerationRequest } from '../engine/generation-request.js';
import { estimatePromptTokens } from '../engine/token-estimate.js';

/**
 * A request's claim on its model's queue: its tenant's class, and what admission charges it (the
 * prompt estimated, counted only where the model can be contended: `contended`).
 */
export function tenantClaim(
  tenant: Tenant,
  request: GenerationRequest,
  background: boolean,
  contended: boolean,
): AdmissionClaim {
  return {
    tenant: tenant.name,
    weight: tenant.weight,
    priority: tenant.priority,
    background,
    promptTokens: contended ? estimatePromptTokens(request) : 0,
    maxTokens: request.sampling.maxTokens,
  };
}

/** Writes the usage each engine event reports into the claim, so that its end charges what was used. */
export function meterInto(claim: AdmissionClaim): MonoTypeOperatorFunction<EngineEvent> {
  return tap((event) => {
    const usage = event.type === 'done' ? event.usage : countersOf(event)?.usage;
    if (usage !== undefined) claim.served = usage;
  });
}
