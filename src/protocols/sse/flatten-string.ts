/**
 * Makes V8 flatten a concatenated string in place (the `flatstr` trick: reading it as a number).
 * A string built from many pieces is a rope of as many nodes, each ~32 bytes, for as long as it
 * lives; strings kept for a whole stream (a response's head, an encoder's prefix) are flattened
 * once so that an idle stream does not hold the rope.
 */
export function flattenString(text: unknown): void {
  if (typeof text === 'string') void Number(text);
}
