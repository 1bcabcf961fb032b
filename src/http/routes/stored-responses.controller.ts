import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import {
  inputItemsPage,
  startingAfter,
  type InputItemsQuery,
  type ItemPage,
} from '../../stored-responses/response-queries.js';
import type { ResponseObject } from '../../stored-responses/response-store.js';
import { StoredResponses } from '../../stored-responses/stored-responses.js';
import { StreamResponder } from '../streaming/stream-responder.js';

/**
 * The stored side of OpenAI Responses: retrieve (or resume the stream of) a response, list its
 * input items, delete it, cancel a background one. Every replica on the same store answers for
 * every response.
 */
@Controller('v1/responses')
export class StoredResponsesController {
  constructor(
    @Inject(StoredResponses) private readonly stored: StoredResponses,
    @Inject(StreamResponder) private readonly responder: StreamResponder,
  ) {}

  /** The response; with `stream=true`, a background response's events after `starting_after`, then the live ones. */
  @Get(':id')
  async retrieve(
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const scope = this.stored.scopeOf(request.headers);
    const record = await this.stored.retrieve(scope, id);
    if (query.stream !== 'true') {
      void reply.send(record.response);
      return;
    }
    if (record.response.background !== true) {
      throw new GatewayError(
        'invalid_request',
        'Only background responses can be streamed again; retrieve this one without stream.',
        { param: 'stream' },
      );
    }
    const after = startingAfter(query.starting_after);
    this.responder.sseFrames(reply, this.stored.follow(scope, id, after)).subscribe();
  }

  @Get(':id/input_items')
  async inputItems(
    @Param('id') id: string,
    @Query() query: InputItemsQuery,
    @Req() request: FastifyRequest,
  ): Promise<ItemPage> {
    const record = await this.stored.retrieve(this.stored.scopeOf(request.headers), id);
    return inputItemsPage(record.inputItems, query);
  }

  @Delete(':id')
  remove(
    @Param('id') id: string,
    @Req() request: FastifyRequest,
  ): Promise<{ id: string; object: 'response'; deleted: true }> {
    return this.stored.remove(this.stored.scopeOf(request.headers), id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Param('id') id: string, @Req() request: FastifyRequest): Promise<ResponseObject> {
    return this.stored.cancel(this.stored.scopeOf(request.headers), id);
  }
}
