/** The error body of the protocol a path speaks, exactly. */
export function hasProtocolErrorShape(path: string, body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  if (path.startsWith('/v1/messages')) {
    const { type, error } = body as { type?: unknown; error?: { type?: unknown; message?: unknown } };
    return type === 'error' && typeof error?.type === 'string' && typeof error.message === 'string';
  }
  const error = (body as { error?: Record<string, unknown> }).error;
  return (
    error !== undefined &&
    Object.keys(body).length === 1 &&
    typeof error.message === 'string' &&
    typeof error.type === 'string' &&
    (error.param === null || typeof error.param === 'string') &&
    (error.code === null || typeof error.code === 'string')
  );
}
