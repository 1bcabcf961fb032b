import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { catchError, map, of, type Observable } from 'rxjs';
import { asGatewayError, GatewayError } from '../../errors/gateway-error.js';
import { toOpenAIErrorBody } from '../../protocols/errors/openai-error.js';
import type { SseFrame } from '../../protocols/sse/sse-frame.js';
import { inputItemsPage, startingAfter, type InputItemsQuery, type ItemPage } from '../../stored-responses/input-items-page.js';
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
  async retrieve(@Param('id') id: string, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    const record = await this.stored.retrieve(id);
    if (query.stream !== 'true') {
      void reply.send(record.response);
      return;
    }
    if (record.response.background !== true) {
      throw new GatewayError('invalid_request', 'Only background responses can be streamed again; retrieve this one without stream.', { param: 'stream' });
    }
    const after = startingAfter(query.starting_after);
    this.responder.sseFrames(reply, this.followed(id, after)).subscribe();
  }

  @Get(':id/input_items')
  async inputItems(@Param('id') id: string, @Query() query: InputItemsQuery): Promise<ItemPage> {
    const record = await this.stored.retrieve(id);
    return inputItemsPage(record.inputItems, query);
  }

  @Delete(':id')
  remove(@Param('id') id: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    return this.stored.remove(id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Param('id') id: string): Promise<ResponseObject> {
    return this.stored.cancel(id);
  }

  /** The kept and live events as frames; a failure once the stream is open is an in-band `error` event. */
  private followed(id: string, after: number): Observable<SseFrame> {
    return this.stored.events(id, after).pipe(
      map((event): SseFrame => ({ event: event.event, data: event.data })),
      catchError((error: unknown) => {
        const { error: body } = toOpenAIErrorBody(asGatewayError(error));
        return of({ event: 'error', data: JSON.stringify({ type: 'error', code: body.code, message: body.message, param: body.param }) });
      }),
    );
  }
}
