import { Controller, Get, Headers, Inject, Param, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Callers } from '../../auth/callers.js';
import type { ModelApi } from '../../config/model-apis.js';
import { ModelRegistry, type ModelRuntime } from '../../models/model-registry.js';
import {
  anthropicModelPage,
  toAnthropicModelInfo,
  type ModelPageQuery,
} from '../../protocols/anthropic-messages/model-list-page.js';
import { renderError, type ErrorDialect } from '../../protocols/errors/render-error.js';

const STARTED_AT = Math.floor(Date.now() / 1000);

/**
 * `GET /v1/models` and `GET /v1/models/{id}`, in the dialect of the client that asks: Anthropic's
 * shapes for a request with an `anthropic-version` header (the Anthropic SDKs always send one),
 * OpenAI's otherwise. Errors too, since the path alone does not tell the dialect here. A caller
 * whose tenant lists `models` sees only those; any other is a 404, as an unknown one is.
 */
@Controller('v1/models')
export class ModelsController {
  constructor(
    @Inject(ModelRegistry) private readonly registry: ModelRegistry,
    @Inject(Callers) private readonly callers: Callers,
  ) {}

  @Get()
  list(
    @Headers('anthropic-version') anthropicVersion: string | undefined,
    @Query() query: ModelPageQuery,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const { tenant } = this.callers.of(request);
    const models = this.registry.list().filter((model) => tenant.canUse(model.config.name));
    const names = models.map((model) => model.config.name);
    if (anthropicVersion === undefined)
      return { object: 'list', data: models.map((model) => toOpenAIModel(model.config.name, model.apis)) };
    try {
      return anthropicModelPage(
        names.map((name) => toAnthropicModelInfo(name, STARTED_AT)),
        query,
      );
    } catch (error) {
      return this.fail(reply, error, 'anthropic');
    }
  }

  /** `*` so that a name with a slash (`org/model`) is found whether or not the client encoded it. */
  @Get('*')
  retrieve(
    @Param('*') name: string,
    @Headers('anthropic-version') anthropicVersion: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const dialect: ErrorDialect = anthropicVersion === undefined ? 'openai' : 'anthropic';
    let model: ModelRuntime;
    try {
      model = this.registry.resolve(name, this.callers.of(request).tenant);
    } catch (error) {
      return this.fail(reply, error, dialect);
    }
    return dialect === 'anthropic' ? toAnthropicModelInfo(name, STARTED_AT) : toOpenAIModel(name, model.apis);
  }

  private fail(reply: FastifyReply, error: unknown, dialect: ErrorDialect) {
    const rendered = renderError(error, dialect);
    void reply.status(rendered.status).headers(rendered.headers);
    return rendered.body;
  }
}

/** OpenAI's model object, with the APIs the model serves (`apis`: Gantry's, docs/apis.md). */
function toOpenAIModel(id: string, apis: readonly ModelApi[]) {
  return { id, object: 'model', created: STARTED_AT, owned_by: 'gantry', apis };
}
