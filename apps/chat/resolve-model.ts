import { authHeaders, type GatewayTarget } from './gateway-target.js';

/**
 * The model to use when `--model` is not given: the first one `GET /v1/models` lists.
 * Throws with a readable message when the gateway cannot be asked or lists none.
 */
export async function resolveDefaultModel(target: GatewayTarget): Promise<string> {
  const response = await fetch(`${target.baseUrl}/v1/models`, { headers: authHeaders(target) }).catch(
    (error: unknown) => {
      const cause = (error as { cause?: { message?: string } }).cause?.message ?? String(error);
      throw new Error(`cannot reach the gateway at ${target.baseUrl} (${cause}); is it running?`);
    },
  );
  if (!response.ok) throw new Error(`GET ${target.baseUrl}/v1/models answered HTTP ${response.status}; pass --model`);
  const list = (await response.json()) as { data?: Array<{ id?: unknown }> };
  const first = list.data?.find((model) => typeof model.id === 'string')?.id;
  if (typeof first !== 'string') throw new Error(`the gateway at ${target.baseUrl} lists no models; pass --model`);
  return first;
}
