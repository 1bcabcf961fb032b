/** Where the gateway is and how to authenticate to it. */
export interface GatewayTarget {
  /** Scheme, host and port, no trailing slash and no `/v1`: `http://127.0.0.1:8000`. */
  baseUrl: string;
  apiKey?: string;
}

/** The key in both forms Gantry's APIs accept: OpenAI's bearer token and Anthropic's `x-api-key`. */
export function authHeaders(target: GatewayTarget): Record<string, string> {
  return target.apiKey === undefined ? {} : { authorization: `Bearer ${target.apiKey}`, 'x-api-key': target.apiKey };
}
