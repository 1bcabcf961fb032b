import { errorStatus } from '../protocols/errors/render-error.js';
import { dialectOfApi } from '../protocols/generation-protocols.js';
import type { GenerationOutcome } from './generation-hook.js';
import type { GenerationTelemetry } from './generation-telemetry.js';

/** Where a request was when its client hung up. */
export function phaseOf(telemetry: GenerationTelemetry): 'queued' | 'prefill' | 'decoding' {
  if (telemetry.admittedAt === undefined) return 'queued';
  return telemetry.firstOutputAt === undefined ? 'prefill' : 'decoding';
}

/** The HTTP status the client saw: 499 for a hang-up (nginx's convention), 200 once a stream opened. */
export function httpStatusOf(telemetry: GenerationTelemetry, outcome: GenerationOutcome): number {
  switch (outcome.kind) {
    case 'completed':
      return 200;
    case 'client_closed':
      return 499;
    case 'failed':
    case 'rejected':
      if (outcome.kind === 'failed' && telemetry.stream) return 200;
      return errorStatus(outcome.error, dialectOfApi(telemetry.api));
  }
}
