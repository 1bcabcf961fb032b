/**
 * Parses an SSE data field as a JSON object, or returns undefined (not JSON, or not an object).
 * Decoders then read it through their own partial wire types, every field optional.
 */
export function parseWireJson<T extends object>(data: string): Partial<T> | undefined {
  try {
    const value: unknown = JSON.parse(data);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Partial<T>) : undefined;
  } catch {
    return undefined;
  }
}

/** A non-empty string, or undefined. */
export function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** The message of an OpenAI or Anthropic error body (`{error: {message}}`), or of a flat `{message}`. */
export function errorMessageOf(body: { error?: unknown; message?: unknown } | undefined): string | undefined {
  if (!body) return undefined;
  if (typeof body.error === 'string') return body.error;
  if (typeof body.error === 'object' && body.error !== null) {
    const nested = body.error as { message?: unknown; type?: unknown };
    if (typeof nested.message === 'string') return nested.message;
    if (typeof nested.type === 'string') return nested.type;
  }
  return typeof body.message === 'string' ? body.message : undefined;
}
