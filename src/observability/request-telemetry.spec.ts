import { describe, expect, it } from 'vitest';
import { attachTelemetry, telemetryOf } from './request-telemetry.js';

describe('request telemetry', () => {
  it('is found on the request its route attached it to, and only there', () => {
    const request = { headers: {} };
    const telemetry = attachTelemetry(request, 'responses');
    expect(telemetry.api).toBe('responses');
    expect(telemetryOf(request)).toBe(telemetry);
    expect(telemetryOf({ headers: {} })).toBeUndefined();
  });

  it('is attached once: a second attachment is a bug, not a new generation', () => {
    const request = {};
    attachTelemetry(request, 'chat');
    expect(() => attachTelemetry(request, 'chat')).toThrow(/already carries/);
  });
});
