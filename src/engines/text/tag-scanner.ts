/**
 * Length of the longest suffix of `text` that is a proper prefix of `tag`: the part of a streamed
 * text that must be held back because the next piece may complete it into the tag.
 */
export function partialTagSuffix(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length -= 1) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}
