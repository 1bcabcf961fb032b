import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';
import { startGateway, type RunningGateway } from './gateway.js';

/** Stub models the SDK specs (Messages and Responses) ask, each paced or failing as its test needs. */
export const SDK_STUB_MODELS = [
  { name: 'stub', engine: 'stub' },
  { name: 'slow', engine: 'stub', prefillMs: 1000, tokenIntervalMs: 200 },
  { name: 'thinker', engine: 'stub', reasoning: 'weigh it first' },
  {
    name: 'slow-thinker',
    engine: 'stub',
    reasoning: 'one two three four five six seven eight nine ten',
    tokenIntervalMs: 40,
  },
  { name: 'flaky', engine: 'stub', prefillMs: 250, failAfterTokens: 1, failWith: 'overloaded' },
  { name: 'single', engine: 'stub', prefillMs: 10_000, maxConcurrency: 1, maxQueue: 0 },
];

/** A gateway serving SDK_STUB_MODELS with chunk keep-alives and a 64 KiB body limit. */
export function startSdkStubGateway(): Promise<RunningGateway> {
  return startGateway({
    keepalive: { mode: 'chunks', intervalMs: 100 },
    server: { bodyLimitBytes: 64 * 1024 },
    models: SDK_STUB_MODELS,
  });
}

/**
 * Fails each test of the file during which something called console.warn: the SDKs' stream
 * helpers warn there about events they cannot take. Call it at the top level, after the
 * file's own beforeAll, so the spy starts once the gateway is up, as before.
 */
export function failOnSdkWarnings(): void {
  const warnings: unknown[] = [];
  beforeAll(() => {
    vi.spyOn(console, 'warn').mockImplementation((...args) => void warnings.push(args));
  });
  afterAll(() => {
    vi.restoreAllMocks();
  });
  afterEach(() => {
    // The SDK helpers must accept every stream without complaint.
    expect(warnings).toEqual([]);
  });
}
