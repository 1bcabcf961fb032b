import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import {
  GantryMetrics,
  GenerationHook,
  type GenerationOutcome,
  type GenerationTelemetry,
  type ObservedRequest,
} from '../../src/index.js';

/** A short, stable, non-reversible id for an API key: never put the key itself in a label. */
export function keyIdOf(key: string | undefined): string {
  if (!key) return 'anonymous';
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

function apiKeyOf(headers: ObservedRequest['headers']): string | undefined {
  const bearer = headers.authorization;
  if (typeof bearer === 'string' && bearer.startsWith('Bearer ')) return bearer.slice(7);
  const header = headers['x-api-key'];
  return typeof header === 'string' ? header : undefined;
}

/**
 * Example plugin: counts prompt and completion tokens per API key (as a hashed id) in
 * `gantry_tokens_by_api_key_total{key, kind}`, on the gateway's own /metrics.
 */
@Injectable()
export class TokenUsageByKeyHook extends GenerationHook {
  private readonly tokens: Counter<'key' | 'model' | 'kind'>;
  private readonly keys = new WeakMap<GenerationTelemetry, string>();

  constructor(@Inject(GantryMetrics) metrics: GantryMetrics) {
    super();
    this.tokens = new Counter({
      name: 'gantry_tokens_by_api_key_total',
      help: 'Tokens by API key (hashed id) and kind (prompt, completion).',
      labelNames: ['key', 'model', 'kind'],
      registers: [metrics.registry],
    });
  }

  protected override onStart(telemetry: GenerationTelemetry, request: ObservedRequest): void {
    this.keys.set(telemetry, keyIdOf(apiKeyOf(request.headers)));
  }

  protected override onEnd(telemetry: GenerationTelemetry, outcome: GenerationOutcome): void {
    if (outcome.kind === 'rejected') return;
    const labels = { key: this.keys.get(telemetry)!, model: telemetry.model ?? '' };
    this.tokens.inc({ ...labels, kind: 'prompt' }, telemetry.usage.promptTokens);
    this.tokens.inc({ ...labels, kind: 'completion' }, telemetry.usage.completionTokens);
  }
}
