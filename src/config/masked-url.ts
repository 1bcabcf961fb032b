/** What stands in for a secret in a configuration, a URL or a label shown to someone. */
export const MASK = '***';

/**
 * A URL as it may be shown (`check-config`, the reload's messages): its password, or a lone user
 * name (which may be a token), and the value of every query parameter (an upstream's
 * `?api-key=...`) masked, the names kept; any other string as it is.
 */
export function maskedUrl(text: string): string {
  const url = parsedUrl(text);
  if (url === undefined) return text;
  const queryMasked = maskQuery(url);
  if (url.password !== '') url.password = MASK;
  else if (url.username !== '') url.username = MASK;
  else if (!queryMasked) return text;
  return url.toString();
}

/**
 * Masks the value of every query parameter of `url`, and its fragment, in place (the names stay:
 * they say what was set). Returns whether there was anything to mask.
 */
export function maskQuery(url: URL): boolean {
  if (url.search === '' && url.hash === '') return false;
  if (url.search !== '')
    url.search = [...url.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=${MASK}`).join('&');
  if (url.hash !== '') url.hash = MASK;
  return true;
}

/** A URL with a scheme and `//` (what a configuration names a server with), else undefined. */
function parsedUrl(text: string): URL | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return undefined;
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
