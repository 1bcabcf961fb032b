import { GatewayError } from '../../errors/gateway-error.js';

/** One model in Anthropic's shape (types/model_info.py). */
export interface AnthropicModelInfo {
  type: 'model';
  id: string;
  display_name: string;
  /** RFC 3339. */
  created_at: string;
}

export interface AnthropicModelPage {
  data: AnthropicModelInfo[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

export interface ModelPageQuery {
  limit?: string;
  after_id?: string;
  before_id?: string;
}

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

/** A model named `id`, as `GET /v1/models` lists it to Anthropic clients. */
export function toAnthropicModelInfo(id: string, createdAtSeconds: number): AnthropicModelInfo {
  return {
    type: 'model',
    id,
    display_name: id,
    created_at: new Date(createdAtSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
}

/**
 * One page of Anthropic's model list: `limit` models (20 by default, 1-1000) after `after_id` or
 * before `before_id`; `has_more` says whether more lie beyond the page in that direction, as the
 * SDKs' pagers expect. An id that is not listed gives an empty page.
 */
export function anthropicModelPage(models: readonly AnthropicModelInfo[], query: ModelPageQuery): AnthropicModelPage {
  const limit = parseLimit(query.limit);
  let page: readonly AnthropicModelInfo[];
  let hasMore: boolean;
  if (query.before_id !== undefined) {
    const end = models.findIndex((model) => model.id === query.before_id);
    const start = Math.max(0, end - limit);
    page = end === -1 ? [] : models.slice(start, end);
    hasMore = end !== -1 && start > 0;
  } else {
    const after = query.after_id === undefined ? -1 : models.findIndex((model) => model.id === query.after_id);
    const start = after + 1;
    page = query.after_id !== undefined && after === -1 ? [] : models.slice(start, start + limit);
    hasMore = page.length > 0 && start + limit < models.length;
  }
  return { data: [...page], has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new GatewayError('invalid_request', `limit must be an integer from 1 to ${MAX_LIMIT}.`, { param: 'limit' });
  }
  return limit;
}
