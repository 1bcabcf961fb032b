/** Replaces secrets in a text (an upstream's error message) before a client or a log sees it. */
export type Redact = (text: string) => string;

export const REDACTED = '[redacted]';

/** Leaves the text as it is. */
export const keepText: Redact = (text) => text;

/** Shorter values are not searched for: they would garble ordinary words and hide nothing. */
const MIN_SECRET_LENGTH = 4;
/** A secret's base64 inside a longer base64 text is known only in part: a shorter part would match by chance. */
const MIN_BASE64_CORE_LENGTH = 6;

/** JSON's two-character escapes, for the characters that have one. */
const JSON_SHORT_ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\\\',
  '/': '/',
  '\b': 'b',
  '\f': 'f',
  '\n': 'n',
  '\r': 'r',
  '\t': 't',
};

/**
 * A redactor for the values Gantry sends upstream (its key, its configured header values, URL
 * passwords): each is replaced wherever it appears in any spelling an upstream may echo it in:
 * - as written, and the credential of a `Scheme credential` value alone;
 * - JSON-escaped, each character as itself, a short escape (`\/`, `\"`) or `\uXXXX` (either case),
 *   escaped once or again (JSON quoted inside JSON);
 * - percent-encoded, each character as itself or its UTF-8 bytes `%xx` in either case (`+` for a space);
 * - base64 and base64url, wherever it lies in a longer encoded text (a Basic credential, a token).
 * Longest first, so that a secret that contains another is replaced whole.
 */
export function secretRedactor(secrets: Iterable<string | undefined>): Redact {
  const values = new Set<string>();
  for (const secret of secrets) {
    const value = secret?.trim();
    if (!value) continue;
    const parts = value.split(/\s+/);
    for (const candidate of parts.length > 1 ? [value, parts.at(-1)!] : [value]) {
      if (candidate.length >= MIN_SECRET_LENGTH) values.add(candidate);
    }
  }
  if (values.size === 0) return keepText;
  const longestFirst = [...values].sort((a, b) => b.length - a.length);
  const patterns = longestFirst.flatMap((value) => [spelledPattern(value), ...base64Cores(value).map(escapeRegExp)]);
  const anySecret = new RegExp(patterns.join('|'), 'g');
  return (text) => text.replace(anySecret, REDACTED);
}

/** The value with each character in any of its literal, JSON-escaped or percent-encoded spellings. */
function spelledPattern(value: string): string {
  return [...value].map((character) => `(?:${characterSpellings(character).join('|')})`).join('');
}

function characterSpellings(character: string): string[] {
  const spellings = [escapeRegExp(character)];
  const short = JSON_SHORT_ESCAPES[character];
  if (short !== undefined) spellings.push(`\\\\+${escapeRegExp(short)}`);
  const units = Array.from({ length: character.length }, (_, index) => character.charCodeAt(index));
  spellings.push(units.map((unit) => `\\\\+u${anyCaseHex(unit.toString(16).padStart(4, '0'))}`).join(''));
  spellings.push(
    [...Buffer.from(character, 'utf8')].map((byte) => `%${anyCaseHex(byte.toString(16).padStart(2, '0'))}`).join(''),
  );
  if (character === ' ') spellings.push('\\+');
  return spellings;
}

/**
 * The characters of the value's base64 and base64url that do not depend on what comes before or
 * after it, for each of the three byte alignments it may have in a longer encoded text.
 */
function base64Cores(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const cores = new Set<string>();
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    // Character i carries bits [6i, 6i + 6): only those wholly within the value's bits are its own.
    const first = Math.ceil((offset * 8) / 6);
    const last = Math.floor(((offset + bytes.length) * 8) / 6) - 1;
    const core = encoded.slice(first, last + 1);
    if (core.length < MIN_BASE64_CORE_LENGTH) continue;
    cores.add(core);
    cores.add(core.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return [...cores];
}

function anyCaseHex(hex: string): string {
  return hex.replace(/[a-f]/g, (digit) => `[${digit}${digit.toUpperCase()}]`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** The password written into an upstream URL, if any: redacted from error messages like the key. */
export function passwordOf(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}
