import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { anthropicModelPage, toAnthropicModelInfo } from './model-list-page.js';

const models = ['a', 'b', 'c', 'd', 'e'].map((id) => toAnthropicModelInfo(id, 1_700_000_000));
const ids = (page: { data: Array<{ id: string }> }) => page.data.map((model) => model.id);

describe('anthropicModelPage', () => {
  it('shapes a model as Anthropic does, created_at in RFC 3339', () => {
    expect(models[0]).toEqual({ type: 'model', id: 'a', display_name: 'a', created_at: '2023-11-14T22:13:20Z' });
  });

  it('gives the first 20 by default, with the ids of its ends', () => {
    expect(anthropicModelPage(models, {})).toEqual({ data: models, has_more: false, first_id: 'a', last_id: 'e' });
  });

  it('pages forward with after_id and backward with before_id', () => {
    const first = anthropicModelPage(models, { limit: '2' });
    expect([ids(first), first.has_more]).toEqual([['a', 'b'], true]);
    const second = anthropicModelPage(models, { limit: '2', after_id: first.last_id! });
    expect([ids(second), second.has_more]).toEqual([['c', 'd'], true]);
    const last = anthropicModelPage(models, { limit: '2', after_id: second.last_id! });
    expect([ids(last), last.has_more, last.last_id]).toEqual([['e'], false, 'e']);
    const back = anthropicModelPage(models, { limit: '2', before_id: 'e' });
    expect([ids(back), back.has_more]).toEqual([['c', 'd'], true]);
    const start = anthropicModelPage(models, { limit: '2', before_id: 'b' });
    expect([ids(start), start.has_more]).toEqual([['a'], false]);
  });

  it('gives an empty page for an id it does not list', () => {
    expect(anthropicModelPage(models, { after_id: 'zz' })).toEqual({
      data: [],
      has_more: false,
      first_id: null,
      last_id: null,
    });
    expect(anthropicModelPage(models, { before_id: 'zz' })).toEqual({
      data: [],
      has_more: false,
      first_id: null,
      last_id: null,
    });
  });

  it('refuses a limit outside 1-1000', () => {
    for (const limit of ['0', '1001', 'ten', '2.5'])
      expect(() => anthropicModelPage(models, { limit })).toThrow(GatewayError);
  });
});
