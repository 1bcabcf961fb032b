/** Replaces secrets in a text (an upstream's error message) before a client or a log sees it. */
export type Redact = (text: string) => string;

export const REDACTED = '[redacted]';

/** Leaves the text as it is. */
export const keepText: Redact = (text) => text;

/** Shorter values are not searched for: they would garble ordinary words and hide nothing. */
const MIN_SECRET_LENGTH = 4;

/**
 * A redactor for the values Gantry sends upstream (its key, its configured header values, URL
 * passwords): each is replaced wherever it appears, as written, JSON-escaped or URL-encoded, and so
 * is the credential of a `Scheme credential` value. Longest first, so that a secret that contains
 * another is replaced whole.
 */
export function secretRedactor(secrets: Iterable<string | undefined>): Redact {
  const found = new Set<string>();
  for (const secret of secrets) {
    const value = secret?.trim();
    if (!value) continue;
    const parts = value.split(/\s+/);
    for (const candidate of parts.length > 1 ? [value, parts.at(-1)!] : [value]) {
      for (const form of [candidate, JSON.stringify(candidate).slice(1, -1), encodeURIComponent(candidate)]) {
        if (form.length >= MIN_SECRET_LENGTH) found.add(form);
      }
    }
  }
  const ordered = [...found].sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return keepText;
  return (text) => {
    let redacted = text;
    for (const secret of ordered) if (redacted.includes(secret)) redacted = redacted.split(secret).join(REDACTED);
    return redacted;
  };
}
