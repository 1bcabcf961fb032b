import { GenerationTelemetry, type ApiName } from './generation-telemetry.js';

const TELEMETRY = Symbol('gantry.generationTelemetry');

interface TelemetryCarrier {
  [TELEMETRY]?: GenerationTelemetry;
}

/**
 * Makes a generation request's telemetry and attaches it to its HTTP request: once, by the route
 * that takes the request, before guards and interceptors run. Interceptors only get the request
 * from Nest, so this is how they find it; the route hands the same instance to
 * GenerationService.accept itself.
 */
export function attachTelemetry(request: object, api: ApiName): GenerationTelemetry {
  const carrier = request as TelemetryCarrier;
  if (carrier[TELEMETRY] !== undefined) throw new Error('This request already carries generation telemetry.');
  const telemetry = new GenerationTelemetry(api);
  carrier[TELEMETRY] = telemetry;
  return telemetry;
}

/** The telemetry its route attached to a generation request; undefined for any other request. */
export function telemetryOf(request: object): GenerationTelemetry | undefined {
  return (request as TelemetryCarrier)[TELEMETRY];
}
