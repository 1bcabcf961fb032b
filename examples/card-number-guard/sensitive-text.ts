/** Digit runs that could be a payment card number: 13 to 19 digits, spaces or dashes between. */
const CARD_CANDIDATE = /\d(?:[ -]?\d){12,18}/g;

/** Whether a text holds a payment card number: a candidate run whose digits pass the Luhn check. */
export function holdsCardNumber(text: string): boolean {
  for (const [candidate] of text.matchAll(CARD_CANDIDATE)) {
    if (passesLuhn(candidate.replace(/\D/g, ''))) return true;
  }
  return false;
}

function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index += 1) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The body fields where the three APIs carry what the user wrote: Chat and Messages `messages`, Responses `input`, `system`, `instructions`. */
const TEXT_FIELDS = ['messages', 'input', 'system', 'instructions'] as const;

/** Every string under a request body's text fields, whatever the API's shape of them. */
export function textsOf(body: unknown): string[] {
  if (typeof body !== 'object' || body === null) return [];
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(walk);
  };
  for (const field of TEXT_FIELDS) walk((body as Record<string, unknown>)[field]);
  return texts;
}
