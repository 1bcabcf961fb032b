import { type MonoTypeOperatorFunction, tap } from 'rxjs';
import type { AdmissionClaim } from '../admission/admission-claim.js';
import type { Tenant } from '../auth/tenant.js';
import { countersOf, isOutput, type EngineEvent } from '../engine/engine-event.js';
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

/** What a request's engine showed of its work: whether it took the request on, and the output pieces it sent. */
export interface Produced {
  began: boolean;
  pieces: number;
  characters: number;
}

export const nothingProduced = (): Produced => ({ began: false, pieces: 0, characters: 0 });

/**
 * Writes the usage each engine event reports into the claim, so that its end charges what was
 * used; and what it produced into `produced`, for an end that comes with no usage reported.
 */
export function meterInto(
  claim: AdmissionClaim,
  produced: Produced = nothingProduced(),
): MonoTypeOperatorFunction<EngineEvent> {
  return tap((event) => {
    produced.began = true;
    const usage = event.type === 'done' ? event.usage : countersOf(event)?.usage;
    if (usage !== undefined) claim.served = usage;
    if (isOutput(event)) {
      produced.pieces += 1;
      produced.characters +=
        event.type === 'tool_call'
          ? event.arguments.length + (event.name?.length ?? 0)
          : (event as { text: string }).text.length;
    }
  });
}

/**
 * The tokens a request used, to settle: what its engine reported, the prompt estimated where it
 * reported none (an upstream without usage counts output chunks only), the output counted from
 * its pieces (about four characters a token, at least one a piece) where nothing was reported;
 * nothing for a request its engine never took on.
 */
export function usedTokens(
  claim: AdmissionClaim,
  produced: Produced,
  promptEstimate: number,
): { promptTokens: number; completionTokens: number } | undefined {
  const { served } = claim;
  if (served === undefined && !produced.began) return undefined;
  const promptTokens = served !== undefined && served.promptTokens > 0 ? served.promptTokens : promptEstimate;
  const completionTokens = served?.completionTokens ?? Math.max(produced.pieces, Math.ceil(produced.characters / 4));
  return { promptTokens, completionTokens };
}
