/**
 * The fields of a raw request body that its API's decoder does not read (vLLM's own extras:
 * `truncate_prompt_tokens`, `priority`, ...): passed on to an upstream as they came (docs/apis.md).
 */
export function extraFieldsOf(raw: unknown, known: readonly string[]): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!known.includes(key) && key !== '__proto__') extra[key] = value;
  }
  return extra;
}
